package io.kstreamsassignor.compat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Command line: generate, verify and bench. See compat/java/README.md. */
public final class Main {
    /** Set by run.sh to the repository's fixtures/wire directory. */
    static final String DEFAULT_DIR_PROPERTY = "kstreams.compat.fixtures";

    private static final String USAGE = String.join("\n",
            "usage: kstreams-compat <command> [args]",
            "  generate [DIR]          write the .bin fixtures and manifest.json into DIR",
            "  generate --check [DIR]  regenerate into a temporary directory; exit 1 unless DIR is identical",
            "  verify [DIR]            decode every file in DIR/manifest.json with Java and compare",
            "  bench [DIR] [--quick]   JMH decode/encode benchmarks on DIR/{subscription,assignment}/v11/large.bin",
            "DIR defaults to the repository's fixtures/wire.");

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    static int run(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println(USAGE);
            return 2;
        }
        String command = args[0];
        List<String> flags = new ArrayList<>();
        List<String> positional = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            (args[i].startsWith("--") ? flags : positional).add(args[i]);
        }
        if (positional.size() > 1) {
            System.err.println(USAGE);
            return 2;
        }
        Path dir = Path.of(positional.isEmpty()
                ? System.getProperty(DEFAULT_DIR_PROPERTY, "fixtures/wire")
                : positional.get(0));
        switch (command) {
            case "generate":
                if (!allowed(flags, "--check")) {
                    return 2;
                }
                if (flags.contains("--check")) {
                    return Fixtures.check(dir);
                }
                Fixtures.generate(dir, false);
                return 0;
            case "verify":
                return allowed(flags) ? Verify.run(dir) : 2;
            case "bench":
                return allowed(flags, "--quick") ? Bench.run(dir, flags.contains("--quick")) : 2;
            case "help":
            case "--help":
            case "-h":
                System.out.println(USAGE);
                return 0;
            default:
                System.err.println("unknown command: " + command);
                System.err.println(USAGE);
                return 2;
        }
    }

    private static boolean allowed(List<String> flags, String... known) {
        for (String flag : flags) {
            if (!List.of(known).contains(flag)) {
                System.err.println("unknown option: " + flag);
                System.err.println(USAGE);
                return false;
            }
        }
        return true;
    }
}
