// Deletes classic groups (DeleteGroups), as kafka-consumer-groups.sh --delete does; run by
// serve.sh as a single-file program on the e2e jar's classpath:
//   java -cp <kafka-clients> DeleteGroups.java BOOTSTRAP GROUP [GROUP ...]

import java.util.Arrays;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

public class DeleteGroups {
    public static void main(final String[] args) throws Exception {
        final Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(props)) {
            admin.deleteConsumerGroups(Arrays.asList(args).subList(1, args.length)).all().get();
        }
        System.out.println("deleted " + String.join(" ", Arrays.asList(args).subList(1, args.length)));
    }
}
