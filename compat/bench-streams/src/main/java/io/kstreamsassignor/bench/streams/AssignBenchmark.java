package io.kstreamsassignor.bench.streams;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The same calls as {@link CoordinatorBench} for JMH's own runner (one assignor and cell at a
 * time, not interleaved; no CPU time or quality):
 *
 * <pre>java -cp "$classpath" org.openjdk.jmh.Main AssignBenchmark -p size=100x1000 -p kase=warm-offsets</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx3g"})
public class AssignBenchmark {
    @Param({"sticky", "optimized"})
    public String assignor;

    @Param({"10x100", "100x1000"})
    public String size;

    @Param({"1"})
    public int perProcess;

    @Param({"cold", "warm", "warm-offsets"})
    public String kase;

    @Param({"1000"})
    public long timeoutMs;

    private TaskAssignor target;
    private Groups.Call call;

    @Setup
    public void setUp() {
        final TaskAssignor sticky = Cells.newSticky();
        final TaskAssignor optimized = Cells.newOptimized(timeoutMs);
        target = assignor.equals("sticky") ? sticky : optimized;
        call = new Cells(sticky, optimized).cell(Groups.Size.parse(size), perProcess, kase, kase + "-").call();
    }

    @Benchmark
    public GroupAssignment assign() {
        return target.assign(call.spec(), call.topology());
    }
}
