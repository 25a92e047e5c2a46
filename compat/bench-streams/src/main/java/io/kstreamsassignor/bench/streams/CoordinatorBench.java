package io.kstreamsassignor.bench.streams;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Kafka's {@code StickyTaskAssignor} against the plugin's {@code OptimizedStreamsTaskAssignor} on
 * the {@code GroupSpec} the coordinator builds, interleaved call by call in one JVM: per cell
 * (size × members per process × case) each assignor gets at least {@code warmup} calls and
 * {@code warmup-ms} of warm-up, then
 * {@code iterations} rounds of one call each (the order alternating per round). A call is the
 * whole {@code assign()} as the coordinator's thread sees it; for {@code optimized} that is the
 * request written, the hand-over to its own thread, the native engine, and the answer read.
 *
 * <pre>CoordinatorBench [--sizes 10x100,100x1000,1000x10000] [--per-process 1,4]
 *     [--cases cold,warm,warm-offsets] [--own-at 1000x10000] [--warmup 3] [--warmup-ms 0] [--iterations 10]
 *     [--first 5] [--timeout-ms 1000] [--out table.md] [--tsv table.tsv]</pre>
 *
 * Prints a markdown table (and writes it to {@code --out}): per cell and assignor the median and
 * p90 milliseconds per call, the CPU milliseconds per call on the calling thread and on all Java
 * threads (the calling thread plus {@code optimized}'s worker thread, for a call past its
 * deadline until the worker is done; GC and JIT threads are not Java threads and are not
 * counted), failed calls, and the quality of the answers. Then
 * {@code optimized}'s first call for a group it has not seen (fresh process ids, so no remembered
 * memory) against the next call on the same group.
 */
public final class CoordinatorBench {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private CoordinatorBench() {
    }

    /** One call's cost and outcome. */
    record Sample(long wallNanos, long callerCpuNanos, long allCpuNanos, String error, Quality quality) {
    }

    /** One row of the table. */
    record Row(Groups.Size size, int perProcess, String kase, String assignor, List<Sample> samples) {
    }

    public static void main(final String[] args) throws IOException, InterruptedException {
        final Map<String, String> opts = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                usage();
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        if (args.length % 2 != 0) {
            usage();
        }
        final List<Groups.Size> sizes = new ArrayList<>();
        for (final String s : opts.getOrDefault("sizes", "10x100,100x1000,1000x10000").split(",")) {
            sizes.add(Groups.Size.parse(s));
        }
        final List<Integer> perProcess = new ArrayList<>();
        for (final String s : opts.getOrDefault("per-process", "1,4").split(",")) {
            perProcess.add(Integer.parseInt(s));
        }
        final List<String> cases = List.of(opts.getOrDefault("cases", "cold,warm,warm-offsets").split(","));
        final Set<String> ownAt = new LinkedHashSet<>(List.of(opts.getOrDefault("own-at", "1000x10000").split(",")));
        final int warmup = Integer.parseInt(opts.getOrDefault("warmup", "3"));
        final long warmupNanos = Long.parseLong(opts.getOrDefault("warmup-ms", "0")) * 1_000_000L;
        final int iterations = Integer.parseInt(opts.getOrDefault("iterations", "10"));
        final int first = Integer.parseInt(opts.getOrDefault("first", "5"));
        final long timeoutMs = Long.parseLong(opts.getOrDefault("timeout-ms", "1000"));

        final TaskAssignor sticky = Cells.newSticky();
        final TaskAssignor optimized = Cells.newOptimized(timeoutMs);
        // The previous targets are set up with a deadline no call reaches: they are not measured.
        final Cells cells = new Cells(sticky, Cells.newOptimized(600_000L));
        final Map<String, TaskAssignor> assignors = new LinkedHashMap<>();
        assignors.put("sticky", sticky);
        assignors.put("optimized", optimized);

        final List<Row> rows = new ArrayList<>();
        final Map<String, Integer> failures = new LinkedHashMap<>();
        final List<Integer> warmupRounds = new ArrayList<>();
        for (final Groups.Size size : sizes) {
            for (final int pp : perProcess) {
                final List<String> sizeCases = new ArrayList<>(cases);
                if (ownAt.contains(size.members() + "x" + size.tasks()) && !sizeCases.contains("warm-own")) {
                    sizeCases.add("warm-own");
                }
                for (final String kase : sizeCases) {
                    final String prefix = kase + "-";
                    final Cells.Cell cell = cells.cell(size, pp, kase, prefix);
                    final Map<String, List<Sample>> samples = new LinkedHashMap<>();
                    assignors.keySet().forEach(name -> samples.put(name, new ArrayList<>()));
                    final List<String> names = new ArrayList<>(assignors.keySet());
                    // Warm-up: at least `warmup` rounds and `warmup-ms`; then `iterations` measured rounds.
                    final long warmupStart = System.nanoTime();
                    int rounds = 0;
                    int measured = 0;
                    while (measured < iterations) {
                        final boolean warming = rounds < warmup || System.nanoTime() - warmupStart < warmupNanos;
                        for (int k = 0; k < names.size(); k++) {
                            final String name = names.get((rounds + k) % names.size());
                            final Sample s = call(assignors.get(name), cell, size);
                            if (!warming) {
                                samples.get(name).add(s);
                            }
                            if (s.error() != null) {
                                failures.merge(String.format("%s, %d/process, %s, %s, %s: %s", size, pp, kase, name,
                                    warming ? "warm-up calls" : "measured calls", s.error()), 1, Integer::sum);
                            }
                        }
                        rounds++;
                        if (!warming) {
                            measured++;
                        }
                    }
                    warmupRounds.add(rounds - iterations);
                    for (final String name : names) {
                        final Row row = new Row(size, pp, kase, name, samples.get(name));
                        rows.add(row);
                        System.err.println(line(row, rows));
                    }
                }
            }
        }

        // optimized's first call on a group it has not seen, then the next call on that group.
        final List<String> firstLines = new ArrayList<>();
        if (first > 0) {
            for (final Groups.Size size : sizes) {
                for (final int pp : perProcess) {
                    for (final String kase : List.of("cold", "warm-offsets")) {
                        final List<Sample> firsts = new ArrayList<>();
                        final List<Sample> seconds = new ArrayList<>();
                        for (int r = 0; r < first; r++) {
                            final Cells.Cell cell = cells.cell(size, pp, kase, "first" + r + "-" + kase + "-");
                            firsts.add(call(optimized, cell, size));
                            seconds.add(call(optimized, cell, size));
                        }
                        firstLines.add(firstLine(size, pp, kase, "a group it has not seen (fresh process ids)", firsts, seconds,
                            find(rows, size, pp, kase, "optimized")));
                    }
                    // The group changes: optimized has assigned the stable group (twice, with its
                    // own previous target), then the newcomer joins (warm-own).
                    final List<Sample> firsts = new ArrayList<>();
                    final List<Sample> seconds = new ArrayList<>();
                    for (int r = 0; r < first; r++) {
                        final String prefix = "change" + r + "-";
                        final Cells.Cell stable = cells.cell(size, pp, "stable-own", prefix);
                        call(optimized, stable, size);
                        call(optimized, stable, size);
                        final Cells.Cell changed = cells.cell(size, pp, "warm-own", prefix);
                        firsts.add(call(optimized, changed, size));
                        seconds.add(call(optimized, changed, size));
                    }
                    firstLines.add(firstLine(size, pp, "warm-own", "the group it assigned, now with a newcomer", firsts, seconds,
                        find(rows, size, pp, "warm-own", "optimized")));
                }
            }
        }
        final StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "per cell and assignor: warm-up calls for at least %d rounds and %d ms (%d to %d rounds), "
            + "then %d measured calls, the two assignors interleaved call by call; optimized's deadline %d ms; "
            + "%d available processors, Java %s%n%n", warmup, warmupNanos / 1_000_000,
            warmupRounds.stream().mapToInt(Integer::intValue).min().orElse(0),
            warmupRounds.stream().mapToInt(Integer::intValue).max().orElse(0), iterations, timeoutMs,
            Runtime.getRuntime().availableProcessors(), System.getProperty("java.version")));
        out.append("| members × tasks | members/process | case | assignor | median ms | p90 ms | CPU ms, calling thread | CPU ms, all Java threads | failed | active moves | spread | stateful spread | extra copies | check |\n");
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (final Row row : rows) {
            out.append(line(row, rows)).append('\n');
        }
        if (!firstLines.isEmpty()) {
            out.append("\noptimized, the first call on a group against the next call on the same group ("
                + first + " groups per cell; ms median / p90; the steady figures are the table's):\n\n");
            out.append("| members × tasks | members/process | case | first call on | first call | next call | steady (table) | CPU ms all threads, first / next | failed |\n");
            out.append("|---|---|---|---|---|---|---|---|---|\n");
            firstLines.forEach(l -> out.append(l).append('\n'));
        }
        if (!failures.isEmpty()) {
            out.append("\nfailed calls:\n\n");
            failures.forEach((f, n) -> out.append("- ").append(n).append(" × ").append(f).append('\n'));
        }
        System.out.print(out);
        if (opts.containsKey("out")) {
            Files.writeString(Path.of(opts.get("out")), out.toString(), StandardCharsets.UTF_8);
        }
        if (opts.containsKey("tsv")) {
            final StringBuilder tsv = new StringBuilder("members\ttasks\tper_process\tcase\tassignor\tmedian_ms\tp90_ms\tfailed\n");
            for (final Row row : rows) {
                tsv.append(String.format(Locale.ROOT, "%d\t%d\t%d\t%s\t%s\t%.3f\t%.3f\t%d%n", row.size().members(), row.size().tasks(),
                    row.perProcess(), row.kase(), row.assignor(), percentile(wall(row.samples()), 50) / 1e6,
                    percentile(wall(row.samples()), 90) / 1e6, failed(row)));
            }
            Files.writeString(Path.of(opts.get("tsv")), tsv.toString(), StandardCharsets.UTF_8);
        }
        System.exit(0);
    }

    private static void usage() {
        System.err.println("usage: CoordinatorBench [--sizes 10x100,...] [--per-process 1,4] [--cases cold,warm,warm-offsets] "
            + "[--own-at 1000x10000] [--warmup N] [--warmup-ms N] [--iterations N] [--first N] [--timeout-ms N] [--out FILE] [--tsv FILE]");
        System.exit(2);
    }

    static Sample call(final TaskAssignor assignor, final Cells.Cell cell, final Groups.Size size) throws InterruptedException {
        final Map<Long, Long> before = threadCpu();
        final long cpu0 = THREADS.getCurrentThreadCpuTime();
        final long t0 = System.nanoTime();
        GroupAssignment answer = null;
        String error = null;
        try {
            answer = assignor.assign(cell.call().spec(), cell.call().topology());
        } catch (final Throwable t) {
            error = t.getClass().getSimpleName() + ": " + t.getMessage();
        }
        final long t1 = System.nanoTime();
        final long cpu1 = THREADS.getCurrentThreadCpuTime();
        if (error != null) {
            // A call past its deadline leaves the engine running on the assignor's own thread:
            // wait for it, so that it does not run beside the next calls (and count its CPU).
            waitForIdleWorkers();
        }
        final Map<Long, Long> after = threadCpu();
        long all = 0;
        for (final Map.Entry<Long, Long> e : after.entrySet()) {
            all += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        final Quality quality = answer == null ? null : Quality.of(answer, cell.call().spec(), size, cell.previous());
        return new Sample(t1 - t0, cpu1 - cpu0, all, error, quality);
    }

    private static Map<Long, Long> threadCpu() {
        final Map<Long, Long> out = new HashMap<>();
        for (final long id : THREADS.getAllThreadIds()) {
            final long cpu = THREADS.getThreadCpuTime(id);
            if (cpu >= 0) {
                out.put(id, cpu);
            }
        }
        return out;
    }

    private static void waitForIdleWorkers() throws InterruptedException {
        final long deadline = System.nanoTime() + 120_000_000_000L;
        while (System.nanoTime() < deadline) {
            boolean busy = false;
            for (final ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
                if (info != null && info.getThreadName().startsWith("kstreams-assignor-streams-")
                    && info.getThreadState() == Thread.State.RUNNABLE) {
                    busy = true;
                }
            }
            if (!busy) {
                return;
            }
            Thread.sleep(50);
        }
    }

    private static String firstLine(final Groups.Size size, final int pp, final String kase, final String on,
                                    final List<Sample> firsts, final List<Sample> seconds, final Row steady) {
        return String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s | %d |",
            size, pp, kase, on,
            ms(percentile(wall(firsts), 50)) + " / " + ms(percentile(wall(firsts), 90)),
            ms(percentile(wall(seconds), 50)) + " / " + ms(percentile(wall(seconds), 90)),
            steady == null ? "–" : ms(percentile(wall(steady.samples()), 50)) + " / " + ms(percentile(wall(steady.samples()), 90)),
            ms(percentile(allCpu(firsts), 50)) + " / " + ms(percentile(allCpu(seconds), 50)),
            firsts.stream().filter(x -> x.error() != null).count() + seconds.stream().filter(x -> x.error() != null).count());
    }

    private static Row find(final List<Row> rows, final Groups.Size size, final int pp, final String kase, final String assignor) {
        for (final Row r : rows) {
            if (r.size().equals(size) && r.perProcess() == pp && r.kase().equals(kase) && r.assignor().equals(assignor)) {
                return r;
            }
        }
        return null;
    }

    private static long failed(final Row row) {
        return row.samples().stream().filter(s -> s.error() != null).count();
    }

    private static String line(final Row row, final List<Row> rows) {
        final List<Sample> s = row.samples();
        final List<Quality> answers = new ArrayList<>();
        for (final Sample x : s) {
            if (x.quality() != null) {
                answers.add(x.quality());
            }
        }
        final Set<Quality> distinct = new LinkedHashSet<>(answers);
        final Quality q = answers.isEmpty() ? null : answers.get(answers.size() - 1);
        String median = ms(percentile(wall(s), 50));
        if (row.assignor().equals("optimized")) {
            final Row sticky = find(rows, row.size(), row.perProcess(), row.kase(), "sticky");
            if (failed(row) > 0) {
                median += " (failed calls timed until they failed)";
            } else if (sticky != null && !sticky.samples().isEmpty()) {
                median += String.format(Locale.ROOT, " (%.2f× sticky)", percentile(wall(s), 50) / percentile(wall(sticky.samples()), 50));
            }
        }
        String check = "–";
        if (q != null) {
            check = q.problems() == 0 ? "valid" : q.problems() + " problems";
            if (distinct.size() > 1) {
                check += ", " + distinct.size() + " different answers (last shown)";
            }
        }
        return String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s | %d of %d | %s | %s | %s | %s | %s |",
            row.size(), row.perProcess(), row.kase(), row.assignor(), median, ms(percentile(wall(s), 90)),
            ms(percentile(callerCpu(s), 50)), ms(percentile(allCpu(s), 50)), failed(row), s.size(),
            q == null ? "–" : (q.moves() < 0 ? "–" : Integer.toString(q.moves())),
            q == null ? "–" : Integer.toString(q.spread()),
            q == null ? "–" : Integer.toString(q.statefulSpread()),
            q == null ? "–" : Long.toString(q.extraCopies()),
            check);
    }

    private static long[] wall(final List<Sample> s) {
        return s.stream().mapToLong(Sample::wallNanos).toArray();
    }

    private static long[] callerCpu(final List<Sample> s) {
        return s.stream().mapToLong(Sample::callerCpuNanos).toArray();
    }

    private static long[] allCpu(final List<Sample> s) {
        return s.stream().mapToLong(Sample::allCpuNanos).toArray();
    }

    /** Nearest-rank percentile; NaN for no samples. */
    static double percentile(final long[] values, final int p) {
        if (values.length == 0) {
            return Double.NaN;
        }
        final long[] sorted = values.clone();
        Arrays.sort(sorted);
        final int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    private static String ms(final double nanos) {
        if (Double.isNaN(nanos)) {
            return "–";
        }
        final double ms = nanos / 1e6;
        return ms >= 100 ? String.format(Locale.ROOT, "%.0f", ms) : ms >= 10 ? String.format(Locale.ROOT, "%.1f", ms)
            : String.format(Locale.ROOT, "%.2f", ms);
    }
}
