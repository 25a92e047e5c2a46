package io.kstreamsassignor.compat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * JMH benchmarks of the Java codec on the v11 "large" fixtures. The fixture directory reaches the
 * forked benchmark JVM through the system property {@value #DIR_PROPERTY}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Bench {
    static final String DIR_PROPERTY = "kstreams.compat.bench.dir";
    static final String SUBSCRIPTION_FILE = "subscription/v11/large.bin";
    static final String ASSIGNMENT_FILE = "assignment/v11/large.bin";

    /** Benchmark method name -> (label, fixture file). */
    static final Map<String, String[]> BENCHES = Map.of(
            "subscriptionDecode", new String[] {"subscription_decode", SUBSCRIPTION_FILE},
            "subscriptionEncode", new String[] {"subscription_encode", SUBSCRIPTION_FILE},
            "assignmentDecode", new String[] {"assignment_decode", ASSIGNMENT_FILE},
            "assignmentEncode", new String[] {"assignment_encode", ASSIGNMENT_FILE});

    private ByteBuffer subscriptionBytes;
    private ByteBuffer assignmentBytes;
    private SubscriptionInfo subscription;
    private AssignmentInfo assignment;

    @Setup
    public void load() throws IOException {
        Path dir = Path.of(System.getProperty(DIR_PROPERTY, "."));
        subscriptionBytes = ByteBuffer.wrap(Files.readAllBytes(dir.resolve(SUBSCRIPTION_FILE)));
        assignmentBytes = ByteBuffer.wrap(Files.readAllBytes(dir.resolve(ASSIGNMENT_FILE)));
        subscription = SubscriptionInfo.decode(subscriptionBytes.duplicate());
        assignment = AssignmentInfo.decode(assignmentBytes.duplicate());
    }

    /** Decode plus the accessors the leader reads, which build the task map lazily. */
    @Benchmark
    public void subscriptionDecode(Blackhole hole) {
        SubscriptionInfo info = SubscriptionInfo.decode(subscriptionBytes.duplicate());
        hole.consume(info.taskOffsetSums());
        hole.consume(info.clientTags());
        hole.consume(info.userEndPoint());
    }

    @Benchmark
    public ByteBuffer subscriptionEncode() {
        return subscription.encode();
    }

    /** AssignmentInfo decodes eagerly; the accessors only return the decoded collections. */
    @Benchmark
    public void assignmentDecode(Blackhole hole) {
        AssignmentInfo info = AssignmentInfo.decode(assignmentBytes.duplicate());
        hole.consume(info.activeTasks());
        hole.consume(info.standbyTasks());
        hole.consume(info.partitionsByHost());
        hole.consume(info.standbyPartitionByHost());
    }

    @Benchmark
    public ByteBuffer assignmentEncode() {
        return assignment.encode();
    }

    /** Runs the benchmarks; JMH's progress goes to stderr, one JSON line per benchmark to stdout. */
    static int run(Path dir, boolean quick) throws IOException, RunnerException {
        Path absolute = dir.toAbsolutePath().normalize();
        for (String file : List.of(SUBSCRIPTION_FILE, ASSIGNMENT_FILE)) {
            if (!Files.isRegularFile(absolute.resolve(file))) {
                System.err.println("missing " + absolute.resolve(file) + " (run generate first)");
                return 1;
            }
        }
        Options options = new OptionsBuilder()
                .include("^" + Bench.class.getName().replace(".", "\\.") + "\\.")
                .forks(1)
                .threads(1)
                .warmupIterations(quick ? 1 : 3)
                .warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 2 : 5)
                .measurementTime(TimeValue.seconds(1))
                .jvmArgsAppend("-D" + DIR_PROPERTY + "=" + absolute, "-Xms512m", "-Xmx512m")
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(options,
                OutputFormatFactory.createFormatInstance(System.err, VerboseMode.NORMAL)).run();
        List<String> lines = new ArrayList<>();
        for (RunResult result : results) {
            String benchmark = result.getParams().getBenchmark();
            String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
            String[] bench = BENCHES.get(method);
            long bytes = Files.size(absolute.resolve(bench[1]));
            double nsPerOp = result.getPrimaryResult().getScore();
            double mbPerSec = bytes / nsPerOp * 1_000.0;
            lines.add(String.format(Locale.ROOT,
                    "{\"bench\":\"%s\",\"bytes\":%d,\"nsPerOp\":%.1f,\"mbPerSec\":%.1f}",
                    bench[0], bytes, nsPerOp, mbPerSec));
        }
        lines.sort(null);
        lines.forEach(System.out::println);
        return 0;
    }
}
