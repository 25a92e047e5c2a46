package io.kstreamsassignor.plugin;

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
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;

/**
 * Packs an {@link ApplicationState} into the engine's request (version 1 of the crossing format
 * in docs/plugin.md): big-endian, as {@link java.io.DataOutputStream} writes it. Tasks, clients and each
 * client's tasks, tags and lags are written in sorted order, so that one state always gives the
 * same bytes.
 */
public final class RequestWriter {
    /** A task's (subtopology, partition) as one number, ordered as {@link #TASK_ORDER}. */
    static long key(final TaskId task) {
        return ((long) task.subtopology() << 32) | (task.partition() & 0xffffffffL);
    }

    /** Tasks by sub-topology, then partition (the order of `TaskId.compareTo` without topology names). */
    private static final Comparator<TaskId> TASK_ORDER = (a, b) -> a.subtopology() != b.subtopology()
        ? Integer.compare(a.subtopology(), b.subtopology()) : Integer.compare(a.partition(), b.partition());

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
     * The request bytes for one rebalance.
     *
     * @param configs the configs to send, such as {@link #configs} gives them
     * @throws IllegalArgumentException when a task belongs to a named topology (not supported)
     */
    public static byte[] write(final ApplicationState state,
                               final String applicationId,
                               final long nowMs,
                               final int flags,
                               final Map<String, String> configs) {
        // Task order by plain int comparisons: TaskId.compareTo is several times slower, and named
        // topologies are refused when a task is written.
        final List<TaskInfo> tasks = new ArrayList<>(state.allTasks().values());
        tasks.sort((a, b) -> TASK_ORDER.compare(a.id(), b.id()));
        // Sets of tasks as sorted arrays of (subtopology, partition) keys: TaskId's hash code boxes
        // and collides (sub-topology s + 1, partition p − 31 is sub-topology s, partition p).
        final long[] withLags = tasks.stream().filter(RequestWriter::hasLags).mapToLong(t -> key(t.id())).sorted().toArray();
        final List<KafkaStreamsState> clients = new ArrayList<>(new TreeMap<>(state.kafkaStreamsStates(true)).values());
        // Each client's previous tasks, read once: the tasks it reported (lags are sent for these only).
        final List<List<TaskId>> reported = new ArrayList<>(clients.size());
        final List<long[]> reportedKeys = new ArrayList<>(clients.size());
        long reportedCount = 0;
        for (final KafkaStreamsState client : clients) {
            final List<TaskId> tasksOfClient = new ArrayList<>(client.previousActiveTasks());
            tasksOfClient.addAll(client.previousStandbyTasks());
            tasksOfClient.sort(TASK_ORDER);
            reported.add(tasksOfClient);
            reportedKeys.add(tasksOfClient.stream().mapToLong(RequestWriter::key).sorted().toArray());
            reportedCount += tasksOfClient.size();
        }
        final long estimate = 64L + 21L * tasks.size() + 64L * clients.size() + 24L * reportedCount;
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

        final boolean racks = !RACK_AWARE_NONE.equals(state.assignmentConfigs().rackAwareAssignmentStrategy());
        out.int32(tasks.size());
        for (final TaskInfo task : tasks) {
            out.task(task.id());
            // Stateful as Kafka's assignors see it: with a changelog (a store with logging
            // disabled has nothing to restore and no standby to keep).
            final boolean lagged = Arrays.binarySearch(withLags, key(task.id())) >= 0;
            out.int8(lagged ? 1 : 0);
            out.int64(lagged ? unreportedLag(task.id(), clients, reportedKeys) : -1);
            if (!racks) {
                out.int32(0);
                continue;
            }
            final List<TaskTopicPartition> partitions = new ArrayList<>(task.topicPartitions());
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

        out.int32(clients.size());
        for (int c = 0; c < clients.size(); c++) {
            final KafkaStreamsState client = clients.get(c);
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
            out.tasks(client.previousActiveTasks());
            out.tasks(client.previousStandbyTasks());
            writeLags(out, client, reported.get(c), withLags);
        }
        return out.toByteArray();
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

    /**
     * The lag of the first client (in process-id order) that did not report {@code task}: Kafka
     * computes it as the task's changelog end-offset sum. -1 when every client reported the task,
     * when the task has no lags, or when the lags were not computed.
     */
    private static long unreportedLag(final TaskId task, final List<KafkaStreamsState> clients,
                                      final List<long[]> reported) {
        final long key = key(task);
        for (int c = 0; c < clients.size(); c++) {
            if (Arrays.binarySearch(reported.get(c), key) < 0) {
                try {
                    return clients.get(c).lagFor(task);
                } catch (final UnsupportedOperationException | IllegalStateException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    /**
     * {@code lagFor} of the tasks with lags among those the client reported, in task order;
     * a count of -1 when the host did not compute lags.
     */
    private static void writeLags(final Output out, final KafkaStreamsState client, final List<TaskId> reported,
                                  final long[] withLags) {
        final List<TaskId> ids = new ArrayList<>(reported.size());
        final List<Long> lags = new ArrayList<>(reported.size());
        for (final TaskId id : reported) {
            if (Arrays.binarySearch(withLags, key(id)) < 0) {
                continue; // not a task of this rebalance, or one without a changelog
            }
            try {
                lags.add(client.lagFor(id));
                ids.add(id);
            } catch (final UnsupportedOperationException e) {
                out.int32(-1); // lags not computed
                return;
            } catch (final IllegalStateException e) {
                // Kafka has no lag for this task (and logged why): send none.
            }
        }
        out.int32(ids.size());
        for (int i = 0; i < ids.size(); i++) {
            out.task(ids.get(i));
            out.int64(lags.get(i));
        }
    }

    /** A growable big-endian byte buffer, as DataOutputStream writes, without its per-byte calls. */
    private static final class Output {
        private byte[] buf;
        private int size;

        Output(final int capacity) {
            buf = new byte[Math.max(capacity, 64)];
        }

        private void ensure(final int more) {
            final long needed = (long) size + more;
            if (needed > buf.length) {
                if (needed > Integer.MAX_VALUE - 8) {
                    throw new IllegalStateException("the request would exceed 2 GiB");
                }
                buf = Arrays.copyOf(buf, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(needed, 2L * buf.length)));
            }
        }

        void int8(final int v) {
            ensure(1);
            buf[size++] = (byte) v;
        }

        void int32(final int v) {
            ensure(4);
            buf[size] = (byte) (v >>> 24);
            buf[size + 1] = (byte) (v >>> 16);
            buf[size + 2] = (byte) (v >>> 8);
            buf[size + 3] = (byte) v;
            size += 4;
        }

        void int64(final long v) {
            int32((int) (v >>> 32));
            int32((int) v);
        }

        void task(final TaskId task) {
            if (task.topologyName() != null) {
                throw new IllegalArgumentException("task " + task + " belongs to the named topology '" + task.topologyName()
                    + "'; named topologies are not supported");
            }
            int32(task.subtopology());
            int32(task.partition());
        }

        void tasks(final Collection<TaskId> tasks) {
            final SortedSet<TaskId> sorted = tasks instanceof SortedSet && ((SortedSet<TaskId>) tasks).comparator() == null
                ? (SortedSet<TaskId>) tasks : new TreeSet<>(tasks);
            int32(sorted.size());
            for (final TaskId task : sorted) {
                task(task);
            }
        }

        void string(final String value) {
            final byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            int32(utf8.length);
            ensure(utf8.length);
            System.arraycopy(utf8, 0, buf, size, utf8.length);
            size += utf8.length;
        }

        void nullableString(final String value) {
            if (value == null) {
                int32(-1);
            } else {
                string(value);
            }
        }

        byte[] toByteArray() {
            return size == buf.length ? buf : Arrays.copyOf(buf, size);
        }
    }
}
