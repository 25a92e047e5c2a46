package io.kstreamsassignor.plugin;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
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
 * in docs/plugin.md): big-endian, as {@link DataOutputStream} writes it. Tasks, clients and each
 * client's tasks, tags and lags are written in sorted order, so that one state always gives the
 * same bytes.
 */
public final class RequestWriter {
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
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream(4096);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(VERSION);
            writeString(out, applicationId == null ? "" : applicationId);
            out.writeLong(nowMs);
            out.writeByte(flags);

            out.writeInt(configs.size());
            for (final Map.Entry<String, String> config : configs.entrySet()) {
                writeString(out, config.getKey());
                writeString(out, config.getValue());
            }

            final boolean racks = !RACK_AWARE_NONE.equals(state.assignmentConfigs().rackAwareAssignmentStrategy());
            final Map<TaskId, TaskInfo> tasks = new TreeMap<>(state.allTasks());
            out.writeInt(tasks.size());
            for (final TaskInfo task : tasks.values()) {
                writeTask(out, task.id());
                out.writeByte(task.isStateful() ? 1 : 0);
                if (!racks) {
                    out.writeInt(0);
                    continue;
                }
                final List<TaskTopicPartition> partitions = new ArrayList<>(task.topicPartitions());
                partitions.sort(PARTITION_ORDER);
                out.writeInt(partitions.size());
                for (final TaskTopicPartition partition : partitions) {
                    out.writeByte((partition.isSource() ? 1 : 0) | (partition.isChangelog() ? 2 : 0));
                    final Set<String> rackIds = partition.rackIds().orElse(null);
                    if (rackIds == null) {
                        out.writeInt(-1);
                    } else {
                        final SortedSet<String> sorted = new TreeSet<>(rackIds);
                        out.writeInt(sorted.size());
                        for (final String rack : sorted) {
                            writeString(out, rack);
                        }
                    }
                }
            }

            final Map<ProcessId, KafkaStreamsState> clients = new TreeMap<>(state.kafkaStreamsStates(true));
            out.writeInt(clients.size());
            for (final KafkaStreamsState client : clients.values()) {
                out.writeLong(client.processId().id().getMostSignificantBits());
                out.writeLong(client.processId().id().getLeastSignificantBits());
                out.writeInt(client.numProcessingThreads());
                writeNullableString(out, client.rackId().orElse(null));
                final Map<String, String> tags = new TreeMap<>(client.clientTags());
                out.writeInt(tags.size());
                for (final Map.Entry<String, String> tag : tags.entrySet()) {
                    writeString(out, tag.getKey());
                    writeString(out, tag.getValue());
                }
                writeTasks(out, client.previousActiveTasks());
                writeTasks(out, client.previousStandbyTasks());
                final Map<TaskId, Long> lags = lagsOrNull(client);
                if (lags == null) {
                    out.writeInt(-1);
                } else {
                    out.writeInt(lags.size());
                    for (final Map.Entry<TaskId, Long> lag : lags.entrySet()) {
                        writeTask(out, lag.getKey());
                        out.writeLong(lag.getValue());
                    }
                }
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot write the request", e);
        }
        return bytes.toByteArray();
    }

    /** The client's lags by task, or null when the host did not compute them. */
    private static Map<TaskId, Long> lagsOrNull(final KafkaStreamsState client) {
        try {
            return new TreeMap<>(client.statefulTasksToLagSums());
        } catch (final UnsupportedOperationException | IllegalStateException e) {
            return null;
        }
    }

    private static void writeTasks(final DataOutputStream out, final Collection<TaskId> tasks) throws IOException {
        final SortedSet<TaskId> sorted = new TreeSet<>(tasks);
        out.writeInt(sorted.size());
        for (final TaskId task : sorted) {
            writeTask(out, task);
        }
    }

    private static void writeTask(final DataOutputStream out, final TaskId task) throws IOException {
        if (task.topologyName() != null) {
            throw new IllegalArgumentException("task " + task + " belongs to the named topology '" + task.topologyName()
                + "'; named topologies are not supported");
        }
        out.writeInt(task.subtopology());
        out.writeInt(task.partition());
    }

    private static void writeString(final DataOutputStream out, final String value) throws IOException {
        final byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    private static void writeNullableString(final DataOutputStream out, final String value) throws IOException {
        if (value == null) {
            out.writeInt(-1);
        } else {
            writeString(out, value);
        }
    }
}
