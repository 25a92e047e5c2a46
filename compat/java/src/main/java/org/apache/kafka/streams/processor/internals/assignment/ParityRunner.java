package org.apache.kafka.streams.processor.internals.assignment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;

/**
 * Runs Kafka Streams' own task assignors (from the kafka-streams jar on the class path) on the
 * engine's scenario JSON and writes their decisions in the engine's output JSON.
 *
 * <pre>
 *   ParityRunner run SCENARIOS.jsonl OUT.jsonl
 *   ParityRunner hashmap OPS.jsonl OUT.jsonl
 *   ParityRunner bench SCENARIOS.jsonl [--iterations N] [--warmup N]
 * </pre>
 *
 * A scenario line is {"id", "assignor", "input"} with "input" in the engine's AssignmentInput
 * schema; an output line is {"id", "assignment"} (the engine's Assignment schema) or {"id",
 * "error"}. The collections handed to the assignor are built as StreamsPartitionAssignor 4.4.0
 * builds them (see buildGroup). This class lives in Kafka's assignment package to reach the
 * package-private ClientState methods.
 */
public final class ParityRunner {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PACKAGE = "org.apache.kafka.streams.processor.internals.assignment.";

    private ParityRunner() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 3 && args[0].equals("run")) {
            run(Path.of(args[1]), Path.of(args[2]));
        } else if (args.length >= 2 && args[0].equals("trace")) {
            trace(Path.of(args[1]));
        } else if (args.length >= 3 && args[0].equals("hashmap")) {
            hashMap(Path.of(args[1]), Path.of(args[2]));
        } else if (args.length >= 2 && args[0].equals("bench")) {
            int iterations = 20;
            int warmup = 5;
            for (int i = 2; i + 1 < args.length; i += 2) {
                if (args[i].equals("--iterations")) {
                    iterations = Integer.parseInt(args[i + 1]);
                } else if (args[i].equals("--warmup")) {
                    warmup = Integer.parseInt(args[i + 1]);
                } else {
                    usage();
                }
            }
            bench(Path.of(args[1]), warmup, iterations);
        } else {
            usage();
        }
    }

    private static void usage() {
        System.err.println("usage: ParityRunner run SCENARIOS.jsonl OUT.jsonl | hashmap OPS.jsonl OUT.jsonl"
                + " | bench SCENARIOS.jsonl [--iterations N] [--warmup N]");
        System.exit(2);
    }

    // ---------------------------------------------------------------------------------------------
    // run

    /**
     * Runs every scenario through Kafka's assignor, on as many threads as there are cores (each
     * call builds its own assignor and states; nothing is shared), writing results in input order.
     */
    private static void run(Path scenarios, Path out) throws IOException, InterruptedException {
        final List<String> lines = new ArrayList<>();
        for (String line : Files.readAllLines(scenarios, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                lines.add(line);
            }
        }
        final ExecutorService pool = Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors());
        try (BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            final List<Future<String>> results = new ArrayList<>();
            for (String line : lines) {
                results.add(pool.submit(() -> runOne(line)));
            }
            for (Future<String> result : results) {
                w.write(result.get());
                w.newLine();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("a scenario could not be read or written", e.getCause());
        } finally {
            pool.shutdownNow();
        }
        System.err.println("java: ran " + lines.size() + " scenarios");
    }

    private static String runOne(String line) throws IOException {
        JsonNode scenario = JSON.readTree(line);
        ObjectNode result = JSON.createObjectNode();
        result.put("id", scenario.get("id").asText());
        try {
            result.set("assignment", assign(scenario.get("assignor").asText(), scenario.get("input"), true));
        } catch (RuntimeException e) {
            result.put("error", e.getClass().getName() + ": " + e.getMessage());
        }
        return JSON.writeValueAsString(result);
    }

    /** Everything the leader hands to an assignor. */
    private static final class Group {
        final Map<ProcessId, ClientState> clientStates;
        final Set<TaskId> allTasks;
        final Set<TaskId> statefulTasks;
        final Map<TaskId, Set<TopicPartition>> partitionsForTask;
        final Map<TaskId, Set<TopicPartition>> changelogPartitionsForTask;
        final Map<Subtopology, Set<TaskId>> tasksForTopicGroup;
        final Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer;
        final boolean lagComputationSuccessful;

        Group(Map<ProcessId, ClientState> clientStates, Set<TaskId> allTasks, Set<TaskId> statefulTasks,
              Map<TaskId, Set<TopicPartition>> partitionsForTask, Map<TaskId, Set<TopicPartition>> changelogPartitionsForTask,
              Map<Subtopology, Set<TaskId>> tasksForTopicGroup, Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer,
              boolean lagComputationSuccessful) {
            this.clientStates = clientStates;
            this.allTasks = allTasks;
            this.statefulTasks = statefulTasks;
            this.partitionsForTask = partitionsForTask;
            this.changelogPartitionsForTask = changelogPartitionsForTask;
            this.tasksForTopicGroup = tasksForTopicGroup;
            this.racksForProcessConsumer = racksForProcessConsumer;
            this.lagComputationSuccessful = lagComputationSuccessful;
        }
    }

    static ObjectNode assign(String configured, JsonNode input, boolean track) {
        AssignmentConfigs configs = configs(input.get("configs"));
        Tracker tracker = track ? new Tracker() : null;
        Group group = buildGroup(input, tracker);
        LegacyTaskAssignor assignor = createTaskAssignor(configured, group.lagComputationSuccessful);
        RackAwareTaskAssignor rack = new RackAwareTaskAssignor(Cluster.empty(), group.partitionsForTask,
                group.changelogPartitionsForTask, group.tasksForTopicGroup, group.racksForProcessConsumer, null, configs, Time.SYSTEM);
        boolean probing = assignor.assign(group.clientStates, group.allTasks, group.statefulTasks, rack, configs);
        return output(assignor.getClass().getSimpleName(), group.clientStates, probing, configs, tracker);
    }

    /** StreamsPartitionAssignor.createTaskAssignor with internal.task.assignor.class = configured. */
    private static LegacyTaskAssignor createTaskAssignor(String configured, boolean lagComputationSuccessful) {
        String name = configured.startsWith(PACKAGE) ? configured.substring(PACKAGE.length()) : configured;
        LegacyTaskAssignor assignor;
        switch (name) {
            case "HighAvailabilityTaskAssignor":
                assignor = new HighAvailabilityTaskAssignor();
                break;
            case "LegacyStickyTaskAssignor":
                assignor = new LegacyStickyTaskAssignor();
                break;
            case "FallbackPriorTaskAssignor":
                assignor = new FallbackPriorTaskAssignor();
                break;
            default:
                throw new IllegalArgumentException("unknown assignor " + configured);
        }
        if (assignor instanceof LegacyStickyTaskAssignor || lagComputationSuccessful) {
            return assignor;
        }
        return new FallbackPriorTaskAssignor();
    }

    private static AssignmentConfigs configs(JsonNode c) {
        if (c == null) {
            c = JSON.createObjectNode();
        }
        List<String> tags = new ArrayList<>();
        if (c.hasNonNull("rack.aware.assignment.tags")) {
            c.get("rack.aware.assignment.tags").forEach(t -> tags.add(t.asText()));
        }
        return new AssignmentConfigs(
                c.path("acceptable.recovery.lag").asLong(10000L),
                c.path("max.warmup.replicas").asInt(2),
                c.path("num.standby.replicas").asInt(0),
                c.path("probing.rebalance.interval.ms").asLong(600000L),
                tags,
                c.hasNonNull("rack.aware.assignment.traffic_cost") ? OptionalInt.of(c.get("rack.aware.assignment.traffic_cost").asInt()) : OptionalInt.empty(),
                c.hasNonNull("rack.aware.assignment.non_overlap_cost") ? OptionalInt.of(c.get("rack.aware.assignment.non_overlap_cost").asInt()) : OptionalInt.empty(),
                c.path("rack.aware.assignment.strategy").asText("none"));
    }

    private static TopicPartition sourcePartition(TaskId task) {
        String topic = "source-" + task.subtopology() + (task.topologyName() == null ? "" : "-" + task.topologyName());
        return new TopicPartition(topic, task.partition());
    }

    private static TopicPartition changelogPartition(TaskId task) {
        String topic = "changelog-" + task.subtopology() + (task.topologyName() == null ? "" : "-" + task.topologyName());
        return new TopicPartition(topic, task.partition());
    }

    private static Subtopology subtopologyOf(TaskId task) {
        return new Subtopology(task.subtopology(), task.topologyName());
    }

    /**
     * Builds the leader's collections in StreamsPartitionAssignor 4.4.0's order: topicGroups
     * (putAll of the sub-topologies in id order), sourceTopicsByGroup, partitionsForTask
     * (PartitionGrouper), tasksForTopicGroup, ChangelogTopics' changelogPartitionsForStatefulTask,
     * statefulTasks, then clientMetadataMap and clientStates with members arriving in ascending
     * process id order, each ClientState fed like ClientMetadata.addConsumer and
     * populateClientStatesMap do.
     */
    private static Group buildGroup(JsonNode input, Tracker tracker) {
        TreeSet<TaskId> stateful = new TreeSet<>();
        input.path("statefulTasks").forEach(t -> stateful.add(TaskId.parse(t.asText())));
        TreeSet<TaskId> stateless = new TreeSet<>();
        input.path("statelessTasks").forEach(t -> stateless.add(TaskId.parse(t.asText())));
        TreeMap<Subtopology, List<TaskId>> bySubtopology = new TreeMap<>();
        TreeSet<TaskId> all = new TreeSet<>(stateful);
        all.addAll(stateless);
        Set<Subtopology> statefulSubtopologies = new HashSet<>();
        for (TaskId task : all) {
            bySubtopology.computeIfAbsent(subtopologyOf(task), k -> new ArrayList<>()).add(task);
            if (stateful.contains(task)) {
                statefulSubtopologies.add(subtopologyOf(task));
            }
        }

        LinkedHashMap<Subtopology, Object> nodeGroups = new LinkedHashMap<>();
        bySubtopology.keySet().forEach(s -> nodeGroups.put(s, s));
        Map<Subtopology, Object> topicGroups = new HashMap<>();
        topicGroups.putAll(nodeGroups);
        Map<Subtopology, Object> sourceTopicsByGroup = new HashMap<>();
        topicGroups.forEach(sourceTopicsByGroup::put);
        Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
        for (Subtopology s : sourceTopicsByGroup.keySet()) {
            for (TaskId task : bySubtopology.get(s)) {
                partitionsForTask.put(task, Set.of(sourcePartition(task)));
            }
        }
        Map<TopicPartition, TaskId> taskForPartition = new HashMap<>();
        Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
        for (Map.Entry<TaskId, Set<TopicPartition>> e : partitionsForTask.entrySet()) {
            for (TopicPartition tp : e.getValue()) {
                taskForPartition.put(tp, e.getKey());
            }
            tasksForTopicGroup.computeIfAbsent(subtopologyOf(e.getKey()), k -> new HashSet<>()).add(e.getKey());
        }
        Map<TaskId, Set<TopicPartition>> changelogPartitionsForTask = new HashMap<>();
        for (Subtopology s : topicGroups.keySet()) {
            if (!statefulSubtopologies.contains(s)) {
                continue;
            }
            for (TaskId task : tasksForTopicGroup.get(s)) {
                if (stateful.contains(task)) {
                    changelogPartitionsForTask.put(task, Set.of(changelogPartition(task)));
                }
            }
        }
        Set<TaskId> statefulTasks = new HashSet<>();
        statefulTasks.addAll(changelogPartitionsForTask.keySet());
        Set<TaskId> allTasks = partitionsForTask.keySet();

        JsonNode endSums = input.get("changelogEndOffsetSums");
        boolean lagComputationSuccessful = endSums != null && !endSums.isNull();
        Map<TaskId, Long> allTaskEndOffsetSums = new HashMap<>();
        for (TaskId task : changelogPartitionsForTask.keySet()) {
            allTaskEndOffsetSums.put(task, lagComputationSuccessful ? endSums.get(task.toString()).asLong() : -3L);
        }

        List<JsonNode> clients = new ArrayList<>();
        input.path("clients").forEach(clients::add);
        clients.sort(Comparator.comparing(c -> UUID.fromString(c.get("processId").asText())));
        Map<ProcessId, ClientState> clientMetadataMap = new HashMap<>();
        Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer = new HashMap<>();
        for (JsonNode c : clients) {
            UUID uuid = UUID.fromString(c.get("processId").asText());
            ProcessId pid = tracker == null ? new ProcessId(uuid) : new TrackedProcessId(uuid, tracker);
            Map<String, String> tags = new HashMap<>();
            c.path("clientTags").fields().forEachRemaining(e -> tags.put(e.getKey(), e.getValue().asText()));
            ClientState state = tracker == null ? new ClientState(pid, tags) : new TrackedClientState(pid, tags, tracker);
            int capacity = c.get("capacity").asInt();
            List<TopicPartition> owned = new ArrayList<>();
            c.path("ownedActiveTasks").forEach(t -> owned.add(sourcePartition(TaskId.parse(t.asText()))));
            Map<TaskId, Long> sums = new HashMap<>();
            c.path("taskOffsetSums").fields().forEachRemaining(e -> sums.put(TaskId.parse(e.getKey()), e.getValue().asLong()));
            Map<String, Optional<String>> racks = new HashMap<>();
            for (int i = 0; i < capacity; i++) {
                String consumer = "consumer-" + i;
                state.addOwnedPartitions(i == 0 ? owned : List.of(), consumer);
                state.incrementCapacity();
                state.addPreviousTasksAndOffsetSums(consumer, i == 0 ? sums : Map.of());
                racks.put(consumer, Optional.ofNullable(c.path("rackId").isTextual() ? c.get("rackId").asText() : null));
            }
            racksForProcessConsumer.put(pid, racks);
            clientMetadataMap.put(pid, state);
        }
        Map<ProcessId, ClientState> clientStates = new HashMap<>();
        for (Map.Entry<ProcessId, ClientState> e : clientMetadataMap.entrySet()) {
            e.getValue().initializePrevTasks(taskForPartition, false);
            e.getValue().computeTaskLags(e.getKey(), allTaskEndOffsetSums);
            clientStates.put(e.getKey(), e.getValue());
        }
        return new Group(clientStates, allTasks, statefulTasks, partitionsForTask, changelogPartitionsForTask,
                tasksForTopicGroup, racksForProcessConsumer, lagComputationSuccessful);
    }

    private static ObjectNode output(String assignor, Map<ProcessId, ClientState> clientStates, boolean probing,
                                     AssignmentConfigs configs, Tracker tracker) {
        TreeMap<ProcessId, ClientState> sorted = new TreeMap<>(Comparator.comparing(ProcessId::id));
        sorted.putAll(clientStates);
        TreeMap<TaskId, TreeSet<UUID>> warmupsByTask = new TreeMap<>();
        TreeMap<UUID, TreeSet<TaskId>> warmupsByClient = new TreeMap<>();
        if (tracker != null) {
            for (Warmup w : tracker.warmups()) {
                warmupsByTask.computeIfAbsent(w.task, k -> new TreeSet<>()).add(w.client);
                warmupsByClient.computeIfAbsent(w.client, k -> new TreeSet<>()).add(w.task);
            }
        }
        ObjectNode out = JSON.createObjectNode();
        out.put("assignor", assignor);
        ArrayNode clients = out.putArray("clients");
        for (Map.Entry<ProcessId, ClientState> e : sorted.entrySet()) {
            ObjectNode c = clients.addObject();
            c.put("processId", e.getKey().id().toString());
            ArrayNode active = c.putArray("activeTasks");
            new TreeSet<>(e.getValue().activeTasks()).forEach(t -> active.add(t.toString()));
            ArrayNode standby = c.putArray("standbyTasks");
            new TreeSet<>(e.getValue().standbyTasks()).forEach(t -> standby.add(t.toString()));
            ArrayNode warm = c.putArray("warmupTasks");
            warmupsByClient.getOrDefault(e.getKey().id(), new TreeSet<>()).forEach(t -> warm.add(t.toString()));
        }
        ObjectNode followup = out.putObject("followup");
        followup.put("probingRebalanceNeeded", probing);
        followup.put("probingRebalanceIntervalMs", configs.probingRebalanceIntervalMs());
        ArrayNode watch = followup.putArray("watchList");
        warmupsByTask.forEach((task, ids) -> ids.forEach(id -> {
            ObjectNode w = watch.addObject();
            w.put("taskId", task.toString());
            w.put("processId", id.toString());
        }));
        return out;
    }

    // ---------------------------------------------------------------------------------------------
    // Warm-up tracking

    /** A warm-up replica: a standby kept or placed on a client that is not caught up. */
    private static final class Warmup {
        final TaskId task;
        final UUID client;

        Warmup(TaskId task, UUID client) {
            this.task = task;
            this.client = client;
        }
    }

    /**
     * Observes TaskMovement. Kafka records the warm-ups of active movements in a local map and
     * does not record those of standby movements, so they are read off the calls:
     * moveActiveAndTryToWarmUp calls destination.assignStandby only for a warm-up;
     * moveStandbyAndTryToWarmUp calls source.assignStandby and then, when the budget is spent,
     * destination.unassignStandby, otherwise the destination keeps its standby as a warm-up. The
     * destination of a standby movement is the key of the last TreeMap lookup before the call
     * (clientStates.get(movement.destination) is its last argument), seen through compareTo.
     */
    static final class Tracker {
        ProcessId lastCompared;
        List<String> trace;
        private final List<Warmup> active = new ArrayList<>();
        private final List<Warmup> standbyCandidates = new ArrayList<>();

        List<Warmup> warmups() {
            List<Warmup> all = new ArrayList<>(active);
            all.addAll(standbyCandidates);
            return all;
        }

        void activeWarmup(TaskId task, ProcessId destination) {
            active.add(new Warmup(task, destination.id()));
        }

        void standbyMovement(TaskId task) {
            standbyCandidates.add(new Warmup(task, lastCompared.id()));
        }

        void standbyRemovedFrom(TaskId task, ProcessId destination) {
            Warmup last = standbyCandidates.remove(standbyCandidates.size() - 1);
            if (!last.task.equals(task) || !last.client.equals(destination.id())) {
                throw new IllegalStateException("warm-up tracking lost the destination of a standby movement");
            }
        }
    }

    private static String caller2() {
        return StackWalker.getInstance().walk(frames -> frames.skip(3).findFirst()
                .map(f -> f.getClassName().replaceAll(".*\\.", "") + "." + f.getMethodName()).orElse(""));
    }

    private static void trace(Path scenarioFile) throws IOException {
        JsonNode scenario = JSON.readTree(Files.readString(scenarioFile).trim());
        JsonNode input = scenario.get("input");
        AssignmentConfigs configs = configs(input.get("configs"));
        Tracker tracker = new Tracker();
        tracker.trace = new ArrayList<>();
        Group group = buildGroup(input, tracker);
        LegacyTaskAssignor assignor = createTaskAssignor(scenario.get("assignor").asText(), group.lagComputationSuccessful);
        RackAwareTaskAssignor rack = new RackAwareTaskAssignor(Cluster.empty(), group.partitionsForTask,
                group.changelogPartitionsForTask, group.tasksForTopicGroup, group.racksForProcessConsumer, null, configs, Time.SYSTEM);
        assignor.assign(group.clientStates, group.allTasks, group.statefulTasks, rack, configs);
        tracker.trace.forEach(System.out::println);
    }

    private static String caller() {
        return StackWalker.getInstance().walk(frames -> frames.skip(2).findFirst()
                .map(f -> f.getClassName().equals(TaskMovement.class.getName()) ? f.getMethodName() : "")
                .orElse(""));
    }

    static final class TrackedProcessId extends ProcessId {
        private final Tracker tracker;

        TrackedProcessId(UUID id, Tracker tracker) {
            super(id);
            this.tracker = tracker;
        }

        @Override
        public int compareTo(ProcessId o) {
            tracker.lastCompared = this;
            return super.compareTo(o);
        }
    }

    static final class TrackedClientState extends ClientState {
        private final Tracker tracker;
        private final ProcessId id;

        TrackedClientState(ProcessId id, Map<String, String> tags, Tracker tracker) {
            super(id, tags);
            this.id = id;
            this.tracker = tracker;
        }

        private void log(String op, TaskId task) {
            if (tracker.trace != null) {
                tracker.trace.add(op + " " + id.id() + " " + task + " " + caller2());
            }
        }

        @Override
        public void assignActive(TaskId task) {
            log("assignActive", task);
            super.assignActive(task);
        }

        @Override
        public void unassignActive(TaskId task) {
            log("unassignActive", task);
            super.unassignActive(task);
        }

        @Override
        public void assignStandby(TaskId task) {
            log("assignStandby", task);
            String caller = caller();
            super.assignStandby(task);
            if (caller.equals("moveActiveAndTryToWarmUp")) {
                tracker.activeWarmup(task, id);
            } else if (caller.equals("moveStandbyAndTryToWarmUp")) {
                tracker.standbyMovement(task);
            }
        }

        @Override
        void unassignStandby(TaskId task) {
            log("unassignStandby", task);
            String caller = caller();
            super.unassignStandby(task);
            if (caller.equals("moveStandbyAndTryToWarmUp")) {
                tracker.standbyRemovedFrom(task, id);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // hashmap: java.util.HashSet iteration order under the engine's operation sequences

    private static void hashMap(Path ops, Path out) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(ops, StandardCharsets.UTF_8);
             BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                JsonNode seq = JSON.readTree(line);
                JsonNode init = seq.get("init");
                HashSet<TaskId> set;
                switch (init.get("kind").asText()) {
                    case "new":
                        set = new HashSet<>();
                        break;
                    case "capacity":
                        set = new HashSet<>(init.get("n").asInt());
                        break;
                    default:
                        set = new HashSet<>(tasks(init.get("items")));
                }
                ObjectNode result = JSON.createObjectNode();
                result.put("id", seq.get("id").asLong());
                ArrayNode orders = result.putArray("orders");
                for (JsonNode op : seq.get("ops")) {
                    switch (op.get(0).asText()) {
                        case "put":
                            set.add(TaskId.parse(op.get(1).asText()));
                            break;
                        case "remove":
                            set.remove(TaskId.parse(op.get(1).asText()));
                            break;
                        case "iterRemove": {
                            TaskId target = TaskId.parse(op.get(1).asText());
                            for (java.util.Iterator<TaskId> it = set.iterator(); it.hasNext(); ) {
                                if (it.next().equals(target)) {
                                    it.remove();
                                    break;
                                }
                            }
                            break;
                        }
                        case "retain":
                            set.retainAll(new HashSet<>(tasks(op.get(1))));
                            break;
                        case "removeAll":
                            set.removeAll(new java.util.LinkedHashSet<>(tasks(op.get(1))));
                            break;
                        default:
                            ArrayNode order = orders.addArray();
                            set.forEach(t -> order.add(t.toString()));
                    }
                }
                w.write(JSON.writeValueAsString(result));
                w.newLine();
            }
        }
    }

    private static List<TaskId> tasks(JsonNode array) {
        List<TaskId> list = new ArrayList<>();
        array.forEach(t -> list.add(TaskId.parse(t.asText())));
        return list;
    }

    // ---------------------------------------------------------------------------------------------
    // bench

    /**
     * Times the leader's collections plus the assignor ("build and assign") and the assignor alone
     * on each scenario: up to {@code warmup} untimed runs (stopping after 20 s), then up to
     * {@code iterations} timed ones (stopping after 60 s, at least one). Prints one JSON line each.
     */
    private static void bench(Path scenarios, int warmup, int iterations) throws IOException {
        for (String line : Files.readAllLines(scenarios, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode scenario = JSON.readTree(line);
            String assignor = scenario.get("assignor").asText();
            JsonNode input = scenario.get("input");
            long warmupEnd = System.nanoTime() + 20_000_000_000L;
            for (int i = 0; i < warmup && System.nanoTime() < warmupEnd; i++) {
                assign(assignor, input, false);
            }
            List<Double> total = new ArrayList<>();
            List<Double> assignOnly = new ArrayList<>();
            long measureEnd = System.nanoTime() + 60_000_000_000L;
            while (total.isEmpty() || (total.size() < iterations && System.nanoTime() < measureEnd)) {
                long t0 = System.nanoTime();
                AssignmentConfigs configs = configs(input.get("configs"));
                Group group = buildGroup(input, null);
                LegacyTaskAssignor a = createTaskAssignor(assignor, group.lagComputationSuccessful);
                RackAwareTaskAssignor rack = new RackAwareTaskAssignor(Cluster.empty(), group.partitionsForTask,
                        group.changelogPartitionsForTask, group.tasksForTopicGroup, group.racksForProcessConsumer, null, configs, Time.SYSTEM);
                long t1 = System.nanoTime();
                a.assign(group.clientStates, group.allTasks, group.statefulTasks, rack, configs);
                long t2 = System.nanoTime();
                total.add((t2 - t0) / 1e6);
                assignOnly.add((t2 - t1) / 1e6);
            }
            total.sort(null);
            assignOnly.sort(null);
            ObjectNode r = JSON.createObjectNode();
            r.put("bench", scenario.get("id").asText());
            r.put("iterations", total.size());
            r.put("medianMsBuildAndAssign", total.get(total.size() / 2));
            r.put("medianMsAssignOnly", assignOnly.get(assignOnly.size() / 2));
            r.put("minMsAssignOnly", assignOnly.get(0));
            System.out.println(JSON.writeValueAsString(r));
            System.out.flush();
        }
    }
}
