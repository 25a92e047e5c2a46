package io.kstreamsassignor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.kafka.coordinator.group.api.streams.assignor.AssignmentConfigs;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.junit.jupiter.api.Test;

/**
 * The broker assignor's deadline, as the coordinator meets it (issue 56): a call past its
 * deadline fails as docs/plugin.md says ({@code TaskAssignorException}, the group keeps its last
 * assignment), its native work takes at most 50 ms of CPU after the call returned, and from 50 ms
 * after the return no thread is left computing (per-thread CPU from {@code /proc/self/task}, the
 * process's from {@code OperatingSystemMXBean}); and calls for different groups from several
 * threads at once (the coordinator's threads) answer as each would alone.
 */
class StreamsCancellationTest {
    static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC);
    /** The most a call's native work may go on after the call returned. */
    static final long STOP_MS = 50;
    /** How long the machine is watched for a thread still computing, from {@link #STOP_MS} on. */
    static final long WINDOW_MS = 250;
    static final String WORKER_PREFIX = "kstreams-assignor-streams-";

    /**
     * A group of {@code members} members, {@code perProcess} to a process, over {@code subtopologies}
     * subtopologies of {@code partitions} partitions (every second one stateful, one standby): the
     * previous assignment gives task t to member t mod (members less a tenth, the newcomers), its
     * standby to the member {@code perProcess} further on; offsets are reported for both. Process
     * and member ids start with {@code prefix}, so that two groups never share a process.
     */
    static GroupSpec group(final String prefix, final int members, final int perProcess, final int subtopologies, final int partitions) {
        final Map<String, String> processOf = new LinkedHashMap<>();
        final Map<String, Map<String, Set<Integer>>> active = new HashMap<>();
        final Map<String, Map<String, Set<Integer>>> standby = new HashMap<>();
        final Map<String, Map<String, Map<Integer, Long>>> offsets = new HashMap<>();
        final List<String> ids = new ArrayList<>();
        for (int m = 0; m < members; m++) {
            final String id = String.format("%s-member-%05d", prefix, m);
            ids.add(id);
            processOf.put(id, String.format("%s-process-%05d", prefix, m / perProcess));
            active.put(id, new HashMap<>());
            standby.put(id, new HashMap<>());
            offsets.put(id, new HashMap<>());
        }
        final int owners = Math.max(1, members - members / 10);
        int task = 0;
        for (int s = 0; s < subtopologies; s++) {
            final String sub = Integer.toString(s);
            for (int p = 0; p < partitions; p++, task++) {
                final String owner = ids.get(task % owners);
                active.get(owner).computeIfAbsent(sub, k -> new TreeSet<>()).add(p);
                if (s % 2 == 1 && owners > perProcess) {
                    offsets.get(owner).computeIfAbsent(sub, k -> new HashMap<>()).put(p, 10_000L);
                    final String copy = ids.get((task % owners + perProcess) % owners);
                    standby.get(copy).computeIfAbsent(sub, k -> new TreeSet<>()).add(p);
                    offsets.get(copy).computeIfAbsent(sub, k -> new HashMap<>()).put(p, 9_000L + p % 1_000);
                }
            }
        }
        return new GroupSpec() {
            public Collection<String> memberIds() {
                return processOf.keySet();
            }

            public MemberAssignmentMetadata memberMetadata(final String id) {
                final String process = processOf.get(id);
                return new MemberAssignmentMetadata() {
                    public Optional<String> instanceId() {
                        return Optional.empty();
                    }

                    public Optional<String> rackId() {
                        return Optional.empty();
                    }

                    public String processId() {
                        return process;
                    }

                    public Map<String, String> clientTags() {
                        return Map.of();
                    }
                };
            }

            public MemberAssignmentState memberAssignmentState(final String id) {
                return new MemberAssignmentState() {
                    public Map<String, Set<Integer>> activeTasks() {
                        return active.get(id);
                    }

                    public Map<String, Set<Integer>> standbyTasks() {
                        return standby.get(id);
                    }

                    public Map<String, Set<Integer>> warmupTasks() {
                        return Map.of();
                    }

                    public Map<String, Map<Integer, Long>> taskOffsets() {
                        return offsets.get(id);
                    }

                    public Map<String, Map<Integer, Long>> taskEndOffsets() {
                        return offsets.get(id);
                    }
                };
            }

            public AssignmentConfigs configs() {
                return new AssignmentConfigs() {
                    public int numStandbyReplicas() {
                        return 1;
                    }

                    public List<String> rackAwareAssignmentTags() {
                        return List.of();
                    }
                };
            }
        };
    }

    static TopologyDescriber topology(final int subtopologies, final int partitions) {
        final List<String> ids = new ArrayList<>();
        for (int s = 0; s < subtopologies; s++) {
            ids.add(Integer.toString(s));
        }
        return new TopologyDescriber() {
            public List<String> subtopologies() {
                return ids;
            }

            public int maxNumInputPartitions(final String id) {
                return partitions;
            }

            public boolean isStateful(final String id) {
                return Integer.parseInt(id) % 2 == 1;
            }
        };
    }

    static OptimizedStreamsTaskAssignor assignor(final long timeoutMs) {
        final OptimizedStreamsTaskAssignor assignor = new OptimizedStreamsTaskAssignor(CLOCK, null);
        assignor.configure(Map.of(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG, NativeRoundTripTest.LIBRARY.toString(),
            OptimizedStreamsTaskAssignor.TIMEOUT_CONFIG, Long.toString(timeoutMs)));
        return assignor;
    }

    static void assumeNativeLibrary() {
        assumeTrue(Files.isRegularFile(NativeRoundTripTest.LIBRARY), "no native library at " + NativeRoundTripTest.LIBRARY);
        NativeEngine.ensureLoaded(NativeRoundTripTest.LIBRARY.toString());
    }

    /** The assignor's pool threads that are running (a thread in a JNI call is RUNNABLE). */
    static List<Thread> runningWorkers() {
        final List<Thread> out = new ArrayList<>();
        for (final Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(WORKER_PREFIX) && t.getState() == Thread.State.RUNNABLE) {
                out.add(t);
            }
        }
        return out;
    }

    /** Every thread of this process (JVM, native and the bridge's own), by tid: name and CPU ticks. */
    static Map<Integer, Map.Entry<String, Long>> threadTicks() throws IOException {
        final Map<Integer, Map.Entry<String, Long>> out = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(Paths.get("/proc/self/task"))) {
            for (final Path task : (Iterable<Path>) tasks::iterator) {
                final String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (final IOException gone) {
                    continue; // the thread ended meanwhile
                }
                // pid (comm) state ppid ... utime (14th) stime (15th): comm may hold spaces.
                final int close = stat.lastIndexOf(')');
                final String name = stat.substring(stat.indexOf('(') + 1, close);
                final String[] f = stat.substring(close + 2).split(" ");
                out.put(Integer.parseInt(task.getFileName().toString()), Map.entry(name, Long.parseLong(f[11]) + Long.parseLong(f[12])));
            }
        }
        return out;
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** The JVM's own threads (compilers, collectors), which may run after any call. */
    static boolean jvmInternal(final String name) {
        return name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler") || name.startsWith("GC Thread") || name.startsWith("G1 ")
            || name.equals("VM Thread") || name.startsWith("VM Periodic") || name.startsWith("Sweeper") || name.startsWith("Common-Cleaner");
    }

    /** One call past its deadline, then how long its native work went on and what ran afterwards. */
    static final class Late {
        long callMs;
        long stopMs;
        long workerCpuMs;
        long windowCpuMs;
        String busiest = "none";
        long busiestTicks;
    }

    static Late lateCall(final OptimizedStreamsTaskAssignor assignor, final GroupSpec spec, final TopologyDescriber topology, final long timeoutMs)
        throws Exception {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final Late late = new Late();
        final long started = System.nanoTime();
        final TaskAssignorException e = assertThrows(TaskAssignorException.class, () -> assignor.assign(spec, topology));
        final long returned = System.nanoTime();
        late.callMs = (returned - started) / 1_000_000;
        assertTrue(e.getMessage().contains("more than " + timeoutMs + " ms"), e.getMessage());
        final List<Thread> workers = runningWorkers();
        final Map<Long, Long> cpuAtReturn = new HashMap<>();
        workers.forEach(t -> cpuAtReturn.put(t.getId(), threads.getThreadCpuTime(t.getId())));
        // Until the call's thread leaves the native engine (or 5 s, to fail with the numbers).
        while (!runningWorkers().isEmpty() && System.nanoTime() - returned < TimeUnit.SECONDS.toNanos(5)) {
            Thread.sleep(1);
        }
        late.stopMs = (System.nanoTime() - returned) / 1_000_000;
        for (final Thread t : workers) {
            late.workerCpuMs = Math.max(late.workerCpuMs, (threads.getThreadCpuTime(t.getId()) - cpuAtReturn.get(t.getId())) / 1_000_000);
        }
        final long from = returned + TimeUnit.MILLISECONDS.toNanos(STOP_MS);
        final long wait = from - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
        // This thread reads /proc meanwhile: it is left out.
        final int self = Integer.parseInt(Files.readSymbolicLink(Paths.get("/proc/thread-self")).getFileName().toString());
        final Map<Integer, Map.Entry<String, Long>> before = threadTicks();
        final long cpuBefore = processCpuNanos();
        Thread.sleep(WINDOW_MS);
        late.windowCpuMs = (processCpuNanos() - cpuBefore) / 1_000_000;
        for (final Map.Entry<Integer, Map.Entry<String, Long>> after : threadTicks().entrySet()) {
            final Map.Entry<String, Long> was = before.get(after.getKey());
            final long ticks = after.getValue().getValue() - (was == null ? 0 : was.getValue());
            final String name = after.getValue().getKey();
            if (after.getKey() != self && !jvmInternal(name) && ticks > late.busiestTicks) {
                late.busiestTicks = ticks;
                late.busiest = name + " (tid " + after.getKey() + ")";
            }
        }
        return late;
    }

    @Test
    void aCallPastItsDeadlineStopsItsNativeWorkAndLeavesNoThreadComputing() throws Exception {
        assumeNativeLibrary();
        assumeTrue(Files.isDirectory(Paths.get("/proc/self/task")), "no /proc/self/task to read threads' CPU from");
        // 1,000 members (4 to a process) x 100,000 tasks: more than a second in the engine.
        final GroupSpec spec = group("late", 1_000, 4, 100, 1_000);
        final TopologyDescriber topology = topology(100, 1_000);
        final long timeoutMs = 150;
        final OptimizedStreamsTaskAssignor assignor = assignor(timeoutMs);
        // The first call warms the request writer and starts the bridge's freeing thread.
        final Late first = lateCall(assignor, spec, topology, timeoutMs);
        final Late late = lateCall(assignor, spec, topology, timeoutMs);
        final long ticks = 1_000 / 100; // ms per clock tick (USER_HZ is 100 on Linux)
        for (final Late l : List.of(first, late)) {
            System.out.printf("a call past its %d ms deadline at 1,000 members x 100,000 tasks: returned after %d ms; its native work stopped %d ms"
                    + " after (%d ms of CPU); then over %d ms: process CPU %d ms, busiest thread outside the JVM's own %s with %d ms%n",
                timeoutMs, l.callMs, l.stopMs, l.workerCpuMs, WINDOW_MS, l.windowCpuMs, l.busiest, l.busiestTicks * ticks);
        }
        // The work after the return, in CPU time: on this shared 2-core machine the wall time
        // to the thread's stop is up to twice as long (a thread waiting for a core).
        assertTrue(late.workerCpuMs <= STOP_MS, "the native work went on for " + late.workerCpuMs + " ms of CPU after the call returned");
        assertTrue(late.stopMs < 1_000, "the native work stopped " + late.stopMs + " ms after the call returned");
        // From 50 ms after the return: a thread still computing would take most of the window
        // (a quarter of it even with 8 runnable threads on 2 cores); an idle JVM a tick or two.
        assertTrue(late.busiestTicks * ticks <= 30, late.busiest + " ran " + late.busiestTicks * ticks + " ms of the " + WINDOW_MS + " ms window");
        assertTrue(late.windowCpuMs <= 100, "the process ran " + late.windowCpuMs + " ms of CPU in the " + WINDOW_MS + " ms window");
        assertTrue(runningWorkers().isEmpty(), "a call's thread is still in the native engine");
    }

    @Test
    void callsForDifferentGroupsAtOnceAnswerAsEachAlone() throws Exception {
        assumeNativeLibrary();
        final List<GroupSpec> specs = List.of(group("a", 100, 1, 20, 100), group("b", 60, 4, 10, 300), group("c", 200, 2, 10, 100),
            group("d", 30, 1, 5, 100));
        final List<TopologyDescriber> topologies = List.of(topology(20, 100), topology(10, 300), topology(10, 100), topology(5, 100));
        final OptimizedStreamsTaskAssignor assignor = assignor(60_000);
        // With a fixed clock the group's memory gives no restore rate (no time passed), so every
        // call on a group answers as the first.
        final List<GroupAssignment> alone = new ArrayList<>();
        for (int g = 0; g < specs.size(); g++) {
            alone.add(assignor.assign(specs.get(g), topologies.get(g)));
        }
        final int rounds = 5;
        final CyclicBarrier start = new CyclicBarrier(specs.size() + 1);
        final AtomicBoolean done = new AtomicBoolean();
        final ExecutorService pool = Executors.newFixedThreadPool(specs.size() + 1);
        try {
            final List<Future<Integer>> calls = new ArrayList<>();
            for (int g = 0; g < specs.size(); g++) {
                final int group = g;
                calls.add(pool.submit(() -> {
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        assertEquals(alone.get(group), assignor.assign(specs.get(group), topologies.get(group)), "group " + group + ", round " + r);
                    }
                    return rounds;
                }));
            }
            // Beside them, calls of a fifth group given up at their deadline: stopping one never
            // stops another.
            final OptimizedStreamsTaskAssignor hurried = assignor(1);
            final Future<Integer> given = pool.submit(() -> {
                start.await();
                int failed = 0;
                while (!done.get()) {
                    assertThrows(TaskAssignorException.class, () -> hurried.assign(group("e", 100, 1, 20, 100), topology(20, 100)));
                    failed++;
                }
                return failed;
            });
            int answered = 0;
            for (final Future<Integer> call : calls) {
                answered += call.get(5, TimeUnit.MINUTES);
            }
            done.set(true);
            final int failed = given.get(1, TimeUnit.MINUTES);
            System.out.printf("%d calls for %d groups from %d threads at once answered as each alone, beside %d calls given up at a 1 ms deadline%n",
                answered, specs.size(), specs.size(), failed);
            assertTrue(failed > 0);
        } finally {
            pool.shutdownNow();
        }
    }
}
