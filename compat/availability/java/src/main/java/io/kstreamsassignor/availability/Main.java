package io.kstreamsassignor.availability;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * The availability benchmark's Java side (compat/availability/availability.py runs it):
 *
 * <pre>
 *   app   --bootstrap B --app-id A --instance NAME --state-dir DIR [--leave-on-close true] [--config k=v]...
 *   seed  --bootstrap B --app-id A --partitions P --records-per-task N --value-bytes S
 *   load  --bootstrap B --app-id A --rate R --keys K --stop-file F
 *   read  --bootstrap B --app-id A --out FILE --stop-file F
 *   drop  --bootstrap B --app-id A
 * </pre>
 *
 * <p>Topics: {@code A-input}, {@code A-output} and the store's changelog {@code A-state-changelog}.
 */
public final class Main {
    private Main() {}

    public static void main(final String[] argv) throws Exception {
        if (argv.length == 0) {
            System.err.println("usage: app|seed|load|read|drop --bootstrap HOST:PORT --app-id ID ...");
            System.exit(2);
        }
        final Map<String, String> args = new HashMap<>();
        final List<String> configs = new ArrayList<>();
        for (int i = 1; i + 1 < argv.length; i += 2) {
            if (argv[i].equals("--config")) {
                configs.add(argv[i + 1]);
            } else {
                args.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
            }
        }
        switch (argv[0]) {
            case "app" -> App.run(args, configs);
            case "seed" -> Seed.run(args);
            case "load" -> Load.run(args);
            case "read" -> Reader.run(args);
            case "drop" -> drop(args);
            default -> {
                System.err.println("unknown command " + argv[0]);
                System.exit(2);
            }
        }
    }

    static String input(final Map<String, String> args) {
        return args.get("app-id") + "-input";
    }

    static String output(final Map<String, String> args) {
        return args.get("app-id") + "-output";
    }

    static String changelog(final Map<String, String> args) {
        return args.get("app-id") + "-" + App.STORE + "-changelog";
    }

    static Admin admin(final Map<String, String> args) {
        final Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        return Admin.create(props);
    }

    /** Deletes the run's three topics, so that the next run's disk is free. */
    private static void drop(final Map<String, String> args) throws Exception {
        try (Admin admin = admin(args)) {
            final List<String> topics = List.of(input(args), output(args), changelog(args));
            admin.deleteTopics(topics).all().get();
            System.out.println("{\"deleted\":" + topics.size() + "}");
        }
    }

    static String quote(final String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
