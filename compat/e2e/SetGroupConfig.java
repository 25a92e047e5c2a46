// Sets one group config (IncrementalAlterConfigs on a GROUP resource), as kafka-configs.sh
// --entity-type groups --alter --add-config does; run by streams_assignor.py as a single-file
// program on the broker's classpath:  java -cp <kafka-clients> SetGroupConfig.java BOOTSTRAP GROUP KEY VALUE
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;

public class SetGroupConfig {
    public static void main(final String[] args) throws Exception {
        final Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(props)) {
            final ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, args[1]);
            final AlterConfigOp set = new AlterConfigOp(new ConfigEntry(args[2], args[3]), AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(group, List.of(set))).all().get();
            final String value = admin.describeConfigs(List.of(group)).all().get().get(group).get(args[2]).value();
            if (!args[3].equals(value)) {
                throw new IllegalStateException(args[2] + " of group " + args[1] + " reads back as " + value);
            }
            System.out.println(args[1] + ": " + args[2] + "=" + value);
        }
    }
}
