package io.kstreamsassignor.plugin;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.state.HostInfo;

/** Small hand-built implementations of the KIP-924 interfaces, for the tests. */
final class TestStates {
    private TestStates() {
    }

    static ProcessId pid(final long least) {
        return new ProcessId(new UUID(0, least));
    }

    static AssignmentConfigs configs(final int standbys, final String strategy) {
        return new AssignmentConfigs(100L, 2, standbys, 60_000L, Collections.emptyList(),
            OptionalInt.empty(), OptionalInt.empty(), strategy);
    }

    static final class State implements ApplicationState {
        final AssignmentConfigs configs;
        final Map<TaskId, TaskInfo> tasks = new HashMap<>();
        final Map<ProcessId, KafkaStreamsState> clients = new HashMap<>();

        State(final AssignmentConfigs configs) {
            this.configs = configs;
        }

        State task(final Task task) {
            tasks.put(task.id, task);
            return this;
        }

        State client(final Client client) {
            clients.put(client.processId, client);
            return this;
        }

        @Override
        public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(final boolean computeTaskLags) {
            return Collections.unmodifiableMap(clients);
        }

        @Override
        public AssignmentConfigs assignmentConfigs() {
            return configs;
        }

        @Override
        public Map<TaskId, TaskInfo> allTasks() {
            return Collections.unmodifiableMap(tasks);
        }
    }

    static final class Task implements TaskInfo {
        final TaskId id;
        final boolean stateful;
        final Set<TaskTopicPartition> partitions = new java.util.HashSet<>();

        Task(final TaskId id, final boolean stateful) {
            this.id = id;
            this.stateful = stateful;
        }

        Task partition(final String topic, final int partition, final boolean source, final boolean changelog,
                       final Set<String> racks) {
            partitions.add(new Partition(new TopicPartition(topic, partition), source, changelog, racks));
            return this;
        }

        @Override
        public TaskId id() {
            return id;
        }

        @Override
        public boolean isStateful() {
            return stateful;
        }

        @Override
        public Set<String> stateStoreNames() {
            return stateful ? Collections.singleton("store") : Collections.emptySet();
        }

        @Override
        public Set<TaskTopicPartition> topicPartitions() {
            return partitions;
        }
    }

    static final class Partition implements TaskTopicPartition {
        final TopicPartition topicPartition;
        final boolean source;
        final boolean changelog;
        final Set<String> racks;

        Partition(final TopicPartition topicPartition, final boolean source, final boolean changelog, final Set<String> racks) {
            this.topicPartition = topicPartition;
            this.source = source;
            this.changelog = changelog;
            this.racks = racks;
        }

        @Override
        public TopicPartition topicPartition() {
            return topicPartition;
        }

        @Override
        public boolean isSource() {
            return source;
        }

        @Override
        public boolean isChangelog() {
            return changelog;
        }

        @Override
        public Optional<Set<String>> rackIds() {
            return Optional.ofNullable(racks);
        }

        @Override
        public boolean equals(final Object o) {
            return o instanceof Partition && ((Partition) o).topicPartition.equals(topicPartition)
                && ((Partition) o).source == source && ((Partition) o).changelog == changelog;
        }

        @Override
        public int hashCode() {
            return topicPartition.hashCode() * 4 + (source ? 2 : 0) + (changelog ? 1 : 0);
        }
    }

    static final class Client implements KafkaStreamsState {
        final ProcessId processId;
        final int threads;
        String rack;
        final Map<String, String> tags = new HashMap<>();
        final SortedSet<TaskId> active = new TreeSet<>();
        final SortedSet<TaskId> standby = new TreeSet<>();
        Map<TaskId, Long> lags = new HashMap<>();

        Client(final ProcessId processId, final int threads) {
            this.processId = processId;
            this.threads = threads;
        }

        @Override
        public ProcessId processId() {
            return processId;
        }

        @Override
        public int numProcessingThreads() {
            return threads;
        }

        @Override
        public SortedSet<String> consumerClientIds() {
            final SortedSet<String> ids = new TreeSet<>();
            for (int i = 0; i < threads; i++) {
                ids.add(processId + "-consumer-" + i);
            }
            return ids;
        }

        @Override
        public SortedSet<TaskId> previousActiveTasks() {
            return active;
        }

        @Override
        public SortedSet<TaskId> previousStandbyTasks() {
            return standby;
        }

        @Override
        public long lagFor(final TaskId task) {
            if (lags == null) {
                throw new UnsupportedOperationException("no lags");
            }
            final Long lag = lags.get(task);
            if (lag == null) {
                throw new IllegalStateException("unknown task " + task);
            }
            return lag;
        }

        @Override
        public SortedSet<TaskId> prevTasksByLag(final String consumerClientId) {
            return new TreeSet<>(active);
        }

        @Override
        public Map<TaskId, Long> statefulTasksToLagSums() {
            if (lags == null) {
                throw new UnsupportedOperationException("no lags");
            }
            return lags;
        }

        @Override
        public Optional<HostInfo> hostInfo() {
            return Optional.empty();
        }

        @Override
        public Map<String, String> clientTags() {
            return tags;
        }

        @Override
        public Optional<String> rackId() {
            return Optional.ofNullable(rack);
        }
    }

    /** Bytes from hex text; spaces, newlines and {@code |} are ignored. */
    static byte[] hex(final String text) {
        final String digits = text.replaceAll("[\\s|]", "");
        final byte[] out = new byte[digits.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(digits.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static String toHex(final byte[] bytes) {
        final StringBuilder out = new StringBuilder();
        for (final byte b : bytes) {
            out.append(String.format("%02x", b));
        }
        return out.toString();
    }
}
