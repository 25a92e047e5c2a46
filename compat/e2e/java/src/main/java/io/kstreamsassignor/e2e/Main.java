package io.kstreamsassignor.e2e;

/**
 * Entry point: {@code topology | app | produce | verify} (the word count), and
 * {@code topo-list | topo-prepare | topo-describe | topo-app | topo-verify} (the applications of {@link Apps}, see
 * {@link Topologies}).
 */
public final class Main {
    private Main() {}

    public static void main(final String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: topology | app|produce|verify --bootstrap HOST:PORT ... | topo-list | topo-prepare|topo-describe|topo-app|topo-verify ...");
            System.exit(2);
        }
        final Args parsed = new Args(args, 1);
        switch (args[0]) {
            case "app":
                CountApp.run(parsed);
                break;
            case "topology":
                System.out.print(CountApp.topology().describe());
                break;
            case "produce":
                Produce.run(parsed);
                break;
            case "verify":
                System.exit(Verify.run(parsed));
                break;
            case "topo-list":
                System.out.println(String.join(" ", Apps.names()));
                break;
            case "topo-prepare":
                Topologies.prepare(parsed);
                break;
            case "topo-describe":
                Topologies.describe(parsed);
                break;
            case "topo-app":
                Topologies.app(parsed);
                break;
            case "topo-verify":
                System.exit(Topologies.verify(parsed));
                break;
            default:
                System.err.println("unknown command " + args[0]);
                System.exit(2);
        }
    }
}
