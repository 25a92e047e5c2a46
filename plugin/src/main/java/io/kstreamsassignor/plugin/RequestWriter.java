package io.kstreamsassignor.plugin;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;

/**
 * Packs an {@link ApplicationState} into the engine's request (version 1 of the crossing format
 * in docs/plugin.md): big-endian, as {@link java.io.DataOutputStream} writes it. Tasks, clients and each
 * client's tasks, tags and lags are written in sorted order, so that one state always gives the
 * same bytes.
 */
public final class RequestWriter {
    /**
     * A task's (subtopology, partition) as one number: ordered as tasks are (sub-topology, then
     * partition), and written as the request writes a task (two big-endian int32s).
     */
    static long key(final TaskId task) {
        return ((long) task.subtopology() << 32) | (task.partition() & 0xffffffffL);
    }

    /** The version of the crossing format this writer speaks. */
    public static final int VERSION = 1;
    /** Flag bit 0: the engine returns its input as {@code assign --input} JSON. */
    public static final int FLAG_DUMP = 1;

    /** {@code rack.aware.assignment.strategy} value that turns rack awareness off. */
    public static final String RACK_AWARE_NONE = "none";

    /** The keys of {@link AssignmentConfigs}, as Kafka spells them; always taken from the state. */
    public static final List<String> ASSIGNMENT_CONFIG_KEYS = Collections.unmodifiableList(Arrays.asList(
        "acceptable.recovery.lag",
        "max.warmup.replicas",
        "num.standby.replicas",
        "probing.rebalance.interval.ms",
        "rack.aware.assignment.tags",
        "rack.aware.assignment.strategy",
        "rack.aware.assignment.traffic_cost",
        "rack.aware.assignment.non_overlap_cost"));

    private static final Comparator<TaskTopicPartition> PARTITION_ORDER =
        Comparator.comparing((TaskTopicPartition p) -> p.topicPartition().topic())
            .thenComparingInt(p -> p.topicPartition().partition());

    private RequestWriter() {
    }

    /**
     * The configs the request carries: the eight values of {@link AssignmentConfigs} under
     * Kafka's keys (the tags comma-joined, and the tags and the two costs left out when empty),
     * then, sorted by key, every other key of {@code engineKeys} that {@code configured} holds.
     */
    public static Map<String, String> configs(final AssignmentConfigs configs,
                                              final Map<String, ?> configured,
                                              final Collection<String> engineKeys) {
        final Map<String, String> out = new LinkedHashMap<>();
        out.put("acceptable.recovery.lag", Long.toString(configs.acceptableRecoveryLag()));
        out.put("max.warmup.replicas", Integer.toString(configs.maxWarmupReplicas()));
        out.put("num.standby.replicas", Integer.toString(configs.numStandbyReplicas()));
        out.put("probing.rebalance.interval.ms", Long.toString(configs.probingRebalanceIntervalMs()));
        final List<String> tags = configs.rackAwareAssignmentTags();
        if (tags != null && !tags.isEmpty()) {
            out.put("rack.aware.assignment.tags", String.join(",", tags));
        }
        out.put("rack.aware.assignment.strategy", configs.rackAwareAssignmentStrategy());
        if (configs.rackAwareTrafficCost().isPresent()) {
            out.put("rack.aware.assignment.traffic_cost", Integer.toString(configs.rackAwareTrafficCost().getAsInt()));
        }
        if (configs.rackAwareNonOverlapCost().isPresent()) {
            out.put("rack.aware.assignment.non_overlap_cost", Integer.toString(configs.rackAwareNonOverlapCost().getAsInt()));
        }
        if (configured != null && engineKeys != null) {
            for (final String key : new TreeSet<>(engineKeys)) {
                if (ASSIGNMENT_CONFIG_KEYS.contains(key)) {
                    continue;
                }
                final Object value = configured.get(key);
                if (value != null) {
                    out.put(key, configValue(value));
                }
            }
        }
        return out;
    }

    private static String configValue(final Object value) {
        if (value instanceof Collection) {
            final List<String> parts = new ArrayList<>();
            for (final Object part : (Collection<?>) value) {
                parts.add(String.valueOf(part));
            }
            return String.join(",", parts);
        }
        return String.valueOf(value);
    }

    /**
     * The request bytes for one rebalance: {@link #snapshot} then {@link Snapshot#encode}.
     *
     * @param configs the configs to send, such as {@link #configs} gives them
     * @throws IllegalArgumentException when a task belongs to a named topology (not supported)
     */
    public static byte[] write(final ApplicationState state,
                               final String applicationId,
                               final long nowMs,
                               final int flags,
                               final Map<String, String> configs) {
        return snapshot(state).encode(applicationId, nowMs, flags, configs);
    }

    /**
     * Reads from {@code state} everything the request carries, through KIP-924's interface
     * (each client's previous tasks and {@code lagFor} of the tasks it reported), into arrays of
     * task keys and lags: the part of a request's cost that any assignor reading the same facts pays.
     *
     * @throws IllegalArgumentException when a task belongs to a named topology (not supported)
     */
    public static Snapshot snapshot(final ApplicationState state) {
        return new Snapshot(state);
    }

    /** What one rebalance's request carries, read out of the {@link ApplicationState}. */
    public static final class Snapshot {
        private final boolean racks;
        /** Tasks in key order, their keys, whether they have lags, and the lag of a client without state. */
        private final TaskInfo[] tasks;
        private final long[] taskKeys;
        private final boolean[] lagged;
        private final long[] unreportedLags;
        /** Clients in process-id order; per client the keys of its previous tasks and its lags. */
        private final KafkaStreamsState[] clients;
        private final long[][] active;
        private final long[][] standby;
        /** Per client the keys and lags of the lagged tasks it reported; null keys when lags were not computed. */
        private final long[][] lagKeys;
        private final long[][] lags;
        private final long reportedCount;

        private Snapshot(final ApplicationState state) {
            racks = !RACK_AWARE_NONE.equals(state.assignmentConfigs().rackAwareAssignmentStrategy());
            final Collection<TaskInfo> all = state.allTasks().values();
            tasks = all.toArray(new TaskInfo[0]);
            final long[] keys = new long[tasks.length];
            for (int i = 0; i < tasks.length; i++) {
                keys[i] = key(unnamed(tasks[i].id()));
            }
            // Tasks by key, a sort of primitive keys with the tasks alongside.
            final Integer[] order = new Integer[tasks.length];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Long.compare(keys[a], keys[b]));
            final TaskInfo[] sortedTasks = new TaskInfo[tasks.length];
            taskKeys = new long[tasks.length];
            lagged = new boolean[tasks.length];
            for (int i = 0; i < order.length; i++) {
                sortedTasks[i] = tasks[order[i]];
                taskKeys[i] = keys[order[i]];
                lagged[i] = hasLags(sortedTasks[i]);
            }
            System.arraycopy(sortedTasks, 0, tasks, 0, tasks.length);

            final Map<ProcessId, KafkaStreamsState> states = state.kafkaStreamsStates(true);
            clients = states.values().toArray(new KafkaStreamsState[0]);
            Arrays.sort(clients, Comparator.comparing(KafkaStreamsState::processId));
            active = new long[clients.length][];
            standby = new long[clients.length][];
            lagKeys = new long[clients.length][];
            lags = new long[clients.length][];
            final long[][] reported = new long[clients.length][];
            long count = 0;
            for (int c = 0; c < clients.length; c++) {
                final KafkaStreamsState client = clients[c];
                active[c] = keys(client.previousActiveTasks());
                standby[c] = keys(client.previousStandbyTasks());
                reported[c] = union(active[c], standby[c]);
                count += reported[c].length;
                readLags(c, client, reported[c]);
            }
            reportedCount = count;
            unreportedLags = new long[tasks.length];
            for (int i = 0; i < tasks.length; i++) {
                unreportedLags[i] = lagged[i] ? unreportedLag(tasks[i].id(), taskKeys[i], reported) : -1;
            }
        }

        /** {@code lagFor} of the lagged tasks among those the client reported, in key order. */
        private void readLags(final int c, final KafkaStreamsState client, final long[] reported) {
            final long[] keys = new long[reported.length];
            final long[] values = new long[reported.length];
            int n = 0;
            for (final long key : reported) {
                final int task = Arrays.binarySearch(taskKeys, key);
                if (task < 0 || !lagged[task]) {
                    continue; // not a task of this rebalance, or one without a changelog
                }
                try {
                    values[n] = client.lagFor(taskId(key));
                    keys[n++] = key;
                } catch (final UnsupportedOperationException e) {
                    return; // lags not computed: null arrays
                } catch (final IllegalStateException e) {
                    // Kafka has no lag for this task (and logged why): send none.
                }
            }
            lagKeys[c] = Arrays.copyOf(keys, n);
            lags[c] = Arrays.copyOf(values, n);
        }

        /**
         * The lag of the first client (in process-id order) that did not report the task: Kafka
         * computes it as the task's changelog end-offset sum. -1 when every client reported the
         * task, or when the lags were not computed.
         */
        private long unreportedLag(final TaskId task, final long key, final long[][] reported) {
            for (int c = 0; c < clients.length; c++) {
                if (Arrays.binarySearch(reported[c], key) < 0) {
                    try {
                        return clients[c].lagFor(task);
                    } catch (final UnsupportedOperationException | IllegalStateException e) {
                        return -1;
                    }
                }
            }
            return -1;
        }

        /**
         * The request bytes.
         *
         * @param configs the configs to send, such as {@link #configs} gives them
         */
        public byte[] encode(final String applicationId, final long nowMs, final int flags, final Map<String, String> configs) {
            final long estimate = 64L + 21L * tasks.length + 64L * clients.length + 24L * reportedCount;
            final Output out = new Output((int) Math.min(estimate, Integer.MAX_VALUE - 64));

            out.int32(VERSION);
            out.string(applicationId == null ? "" : applicationId);
            out.int64(nowMs);
            out.int8(flags);

            out.int32(configs.size());
            for (final Map.Entry<String, String> config : configs.entrySet()) {
                out.string(config.getKey());
                out.string(config.getValue());
            }

            out.int32(tasks.length);
            for (int i = 0; i < tasks.length; i++) {
                out.int64(taskKeys[i]);
                // Stateful as Kafka's assignors see it: with a changelog (a store with logging
                // disabled has nothing to restore and no standby to keep).
                out.int8(lagged[i] ? 1 : 0);
                out.int64(unreportedLags[i]);
                if (!racks) {
                    out.int32(0);
                    continue;
                }
                final List<TaskTopicPartition> partitions = new ArrayList<>(tasks[i].topicPartitions());
                partitions.sort(PARTITION_ORDER);
                out.int32(partitions.size());
                for (final TaskTopicPartition partition : partitions) {
                    out.int8((partition.isSource() ? 1 : 0) | (partition.isChangelog() ? 2 : 0));
                    final Set<String> rackIds = partition.rackIds().orElse(null);
                    if (rackIds == null) {
                        out.int32(-1);
                    } else {
                        final SortedSet<String> sorted = new TreeSet<>(rackIds);
                        out.int32(sorted.size());
                        for (final String rack : sorted) {
                            out.string(rack);
                        }
                    }
                }
            }

            out.int32(clients.length);
            for (int c = 0; c < clients.length; c++) {
                final KafkaStreamsState client = clients[c];
                out.int64(client.processId().id().getMostSignificantBits());
                out.int64(client.processId().id().getLeastSignificantBits());
                out.int32(client.numProcessingThreads());
                out.nullableString(client.rackId().orElse(null));
                final Map<String, String> tags = new TreeMap<>(client.clientTags());
                out.int32(tags.size());
                for (final Map.Entry<String, String> tag : tags.entrySet()) {
                    out.string(tag.getKey());
                    out.string(tag.getValue());
                }
                out.keys(active[c]);
                out.keys(standby[c]);
                if (lagKeys[c] == null) {
                    out.int32(-1); // lags not computed
                } else {
                    out.int32(lagKeys[c].length);
                    for (int i = 0; i < lagKeys[c].length; i++) {
                        out.int64(lagKeys[c][i]);
                        out.int64(lags[c][i]);
                    }
                }
            }
            return out.toByteArray();
        }
    }

    /** The keys of {@code tasks}, sorted; named topologies refused. */
    private static long[] keys(final Collection<TaskId> tasks) {
        final long[] keys = new long[tasks.size()];
        int n = 0;
        for (final TaskId task : tasks) {
            keys[n++] = key(unnamed(task));
        }
        Arrays.sort(keys);
        return keys;
    }

    private static TaskId unnamed(final TaskId task) {
        if (task.topologyName() != null) {
            throw new IllegalArgumentException("task " + task + " belongs to the named topology '" + task.topologyName()
                + "'; named topologies are not supported");
        }
        return task;
    }

    /**
     * Whether Kafka Streams keeps lags for {@code task}: a stateful task with a changelog (a store
     * with logging disabled is stateful but has none, and {@code lagFor} refuses it).
     */
    static boolean hasLags(final TaskInfo task) {
        if (!task.isStateful()) {
            return false;
        }
        for (final TaskTopicPartition partition : task.topicPartitions()) {
            if (partition.isChangelog()) {
                return true;
            }
        }
        return false;
    }

    /** The sorted union of two sorted key arrays. */
    private static long[] union(final long[] a, final long[] b) {
        final long[] out = new long[a.length + b.length];
        int i = 0;
        int j = 0;
        int n = 0;
        while (i < a.length || j < b.length) {
            final long next = j == b.length || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++];
            if (n == 0 || out[n - 1] != next) {
                out[n++] = next;
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** The task of a key. */
    private static TaskId taskId(final long key) {
        return new TaskId((int) (key >>> 32), (int) key);
    }

    /** A growable big-endian byte buffer, as DataOutputStream writes, without its per-byte calls. */
    /** A growing big-endian buffer (a heap {@code ByteBuffer}, whose puts the JIT turns into plain stores). */
    private static final class Output {
        private ByteBuffer buf;

        Output(final int capacity) {
            buf = ByteBuffer.allocate(Math.max(capacity, 64));
        }

        private void ensure(final int more) {
            if (buf.remaining() >= more) {
                return;
            }
            final long needed = (long) buf.position() + more;
            if (needed > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException("the request would exceed 2 GiB");
            }
            final ByteBuffer bigger = ByteBuffer.allocate((int) Math.min(Integer.MAX_VALUE - 8, Math.max(needed, 2L * buf.capacity())));
            buf.flip();
            bigger.put(buf);
            buf = bigger;
        }

        void int8(final int v) {
            ensure(1);
            buf.put((byte) v);
        }

        void int32(final int v) {
            ensure(4);
            buf.putInt(v);
        }

        void int64(final long v) {
            ensure(8);
            buf.putLong(v);
        }

        void keys(final long[] keys) {
            ensure(4 + 8 * keys.length);
            buf.putInt(keys.length);
            for (final long key : keys) {
                buf.putLong(key);
            }
        }

        void string(final String value) {
            final byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            ensure(4 + utf8.length);
            buf.putInt(utf8.length);
            buf.put(utf8);
        }

        void nullableString(final String value) {
            if (value == null) {
                int32(-1);
            } else {
                string(value);
            }
        }

        byte[] toByteArray() {
            return buf.position() == buf.capacity() ? buf.array() : Arrays.copyOf(buf.array(), buf.position());
        }
    }
}
