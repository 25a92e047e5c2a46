// Sets group configs (one IncrementalAlterConfigs on a GROUP resource), as kafka-configs.sh
// --entity-type groups --alter --add-config does, and reads them back; run by streams_assignor.py
// as a single-file program on the broker's classpath:
//   java -cp <kafka-clients> SetGroupConfig.java BOOTSTRAP GROUP KEY VALUE [KEY VALUE ...]

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;

public class SetGroupConfig {
    public static void main(final String[] args) throws Exception {
        final Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(props)) {
            final ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, args[1]);
            final List<AlterConfigOp> ops = new ArrayList<>();
            for (int i = 2; i + 1 < args.length; i += 2) {
                ops.add(new AlterConfigOp(new ConfigEntry(args[i], args[i + 1]), AlterConfigOp.OpType.SET));
            }
            admin.incrementalAlterConfigs(Map.of(group, ops)).all().get();
            final Config read = admin.describeConfigs(List.of(group)).all().get().get(group);
            for (int i = 2; i + 1 < args.length; i += 2) {
                final String value = read.get(args[i]).value();
                if (!args[i + 1].equals(value)) {
                    throw new IllegalStateException(args[i] + " of group " + args[1] + " reads back as " + value);
                }
                System.out.println(args[1] + ": " + args[i] + "=" + value);
            }
        }
    }
}
