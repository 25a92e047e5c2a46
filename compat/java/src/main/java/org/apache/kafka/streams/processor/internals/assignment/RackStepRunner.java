package org.apache.kafka.streams.processor.internals.assignment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.InternalTopicManager;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;

/**
 * Kafka's rack-aware step on its own, for the rack fixtures ({@code fixtures/rack}) and for
 * compat/bench-rack.sh: {@code optimizeActiveTasks} over every placed active task, then, if the
 * placement has standbys, {@code optimizeStandbyTasks} with the default standby assignor's swap rule
 * (always allowed), as the high-availability assignor calls them. This is what the engine's
 * {@code optimize_rack_aware} does.
 *
 * <p>An instance is one JSON object: {@code input} (an engine input: clients with {@code rackId}
 * and {@code capacity}, stateful tasks, {@code taskPartitions} with the replica racks of every input
 * and changelog partition, dotted configs) and {@code placement} ({@code active}: task → process id,
 * {@code standby}: task → process ids). Costs are the input's
 * {@code rack.aware.assignment.traffic_cost} / {@code non_overlap_cost}, or 10 and 1.
 *
 * <pre>
 * RackStepRunner replay IN.jsonl OUT.jsonl      one result line per instance line
 * RackStepRunner bench MAX_SECONDS STEP FILE    time one step (active or standby) on one instance
 * </pre>
 *
 * <p>A result holds {@code activeCost} (what optimizeActiveTasks returns), its split into
 * {@code activeTrafficCost} and {@code activeNonOverlapCost} (recomputed from the placement),
 * {@code standbyCost} (what optimizeStandbyTasks returns, 0 without standbys) and the final
 * {@code placement}, keys in task order and process ids sorted.
 */
public final class RackStepRunner {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int DEFAULT_TRAFFIC_COST = 10;
    private static final int DEFAULT_NON_OVERLAP_COST = 1;

    private RackStepRunner() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("replay")) {
            replay(Path.of(args[1]), Path.of(args[2]));
        } else if (args.length == 4 && args[0].equals("bench") && Set.of("active", "standby").contains(args[2])) {
            bench(Path.of(args[3]), args[2], Double.parseDouble(args[1]));
        } else {
            System.err.println("usage: RackStepRunner replay IN.jsonl OUT.jsonl | bench MAX_SECONDS active|standby FILE");
            System.exit(2);
        }
    }

    private static void replay(Path in, Path out) throws Exception {
        int count = 0;
        try (BufferedReader reader = Files.newBufferedReader(in, StandardCharsets.UTF_8);
             BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                Instance instance = new Instance(JSON.readTree(line));
                writer.write(JSON.writeValueAsString(instance.run().toJson()));
                writer.newLine();
                count++;
            }
        }
        System.err.println("rack step: Kafka optimised " + count + " instances");
    }

    /**
     * Times one step on one instance file (actives and standbys placed): {@code active} is
     * optimizeActiveTasks on the actives alone, {@code standby} optimizeStandbyTasks on actives and
     * standbys. Warm-up runs until 3 have been done or a third of MAX_SECONDS is spent, then
     * measured runs until 15 have been done or MAX_SECONDS is spent; if the warm-up alone used up
     * the budget, its last run is the one measurement (a run that long is dominated by compiled
     * code anyway). Every run gets fresh client states and a fresh assignor whose rack lookups are
     * done before the clock starts; only the optimize call is timed. Prints one JSON line with the
     * median.
     */
    private static void bench(Path file, String step, double maxSeconds) throws Exception {
        Instance instance = new Instance(JSON.readTree(Files.readString(file, StandardCharsets.UTF_8)));
        java.util.function.Supplier<Result> run = step.equals("active") ? instance::runActive : instance::runStandby;
        long budget = (long) (maxSeconds * 1e9);
        long start = System.nanoTime();
        int warmups = 0;
        Result result = null;
        while (warmups < 3 && System.nanoTime() - start < budget / 3) {
            result = run.get();
            warmups++;
        }
        List<Long> times = new ArrayList<>();
        if (System.nanoTime() - start >= budget) {
            times.add(result.activeNanos + result.standbyNanos);
            warmups--;
        }
        while (times.isEmpty() || (times.size() < 15 && System.nanoTime() - start < budget)) {
            result = run.get();
            times.add(result.activeNanos + result.standbyNanos);
        }
        ObjectNode line = JSON.createObjectNode();
        line.put("file", file.getFileName().toString());
        line.put("step", step);
        line.put("warmups", warmups);
        line.put("iterations", times.size());
        line.put("medianMs", median(times) / 1e6);
        line.put("cost", step.equals("active") ? result.activeCost : result.standbyCost);
        System.out.println(JSON.writeValueAsString(line));
    }

    private static double median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
    }

    static final class Result {
        long activeCost;
        long activeTrafficCost;
        long activeNonOverlapCost;
        long standbyCost;
        long activeNanos;
        long standbyNanos;
        SortedMap<TaskId, ProcessId> active = new TreeMap<>();
        SortedMap<TaskId, SortedSet<ProcessId>> standby = new TreeMap<>();

        ObjectNode toJson() {
            ObjectNode node = JSON.createObjectNode();
            node.put("activeCost", activeCost);
            node.put("activeTrafficCost", activeTrafficCost);
            node.put("activeNonOverlapCost", activeNonOverlapCost);
            node.put("standbyCost", standbyCost);
            ObjectNode placement = node.putObject("placement");
            ObjectNode actives = placement.putObject("active");
            active.forEach((task, pid) -> actives.put(task.toString(), pid.toString()));
            ObjectNode standbys = placement.putObject("standby");
            standby.forEach((task, pids) -> {
                ArrayNode list = standbys.putArray(task.toString());
                pids.forEach(pid -> list.add(pid.toString()));
            });
            return node;
        }
    }

    /** One parsed instance: everything Kafka's assignor needs, built once. */
    static final class Instance {
        final AssignmentConfigs configs;
        final int traffic;
        final int nonOverlap;
        final Cluster cluster;
        final Map<ProcessId, Integer> capacity = new TreeMap<>();
        final Map<ProcessId, String> rackOf = new HashMap<>();
        final Map<ProcessId, Map<String, Optional<String>>> consumerRacks = new HashMap<>();
        final Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
        final Map<TaskId, Set<TopicPartition>> changelogPartitionsForTask = new HashMap<>();
        final Map<String, List<TopicPartitionInfo>> changelogTopics = new HashMap<>();
        final Map<TaskId, List<Set<String>>> racksOfTask = new HashMap<>();
        final Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
        final SortedMap<TaskId, ProcessId> active = new TreeMap<>();
        final SortedMap<TaskId, List<ProcessId>> standby = new TreeMap<>();
        final InternalTopicManager topics;

        Instance(JsonNode instance) {
            JsonNode input = instance.get("input");
            JsonNode c = input.path("configs");
            if (c.path("rack.aware.assignment.tags").size() > 0) {
                throw new IllegalArgumentException("client tags are not supported: the standby swap rule is the default's");
            }
            traffic = c.path("rack.aware.assignment.traffic_cost").isNumber()
                    ? c.get("rack.aware.assignment.traffic_cost").asInt() : DEFAULT_TRAFFIC_COST;
            nonOverlap = c.path("rack.aware.assignment.non_overlap_cost").isNumber()
                    ? c.get("rack.aware.assignment.non_overlap_cost").asInt() : DEFAULT_NON_OVERLAP_COST;
            configs = new AssignmentConfigs(10000L, 2, c.path("num.standby.replicas").asInt(0), 600000L, List.of(),
                    OptionalInt.of(traffic), OptionalInt.of(nonOverlap),
                    c.get("rack.aware.assignment.strategy").asText());

            Map<String, Node> nodeOfRack = new TreeMap<>();
            for (JsonNode client : input.get("clients")) {
                ProcessId pid = new ProcessId(UUID.fromString(client.get("processId").asText()));
                String rack = client.get("rackId").asText();
                node(nodeOfRack, rack);
                capacity.put(pid, client.get("capacity").asInt());
                consumerRacks.put(pid, Map.of("consumer-" + pid, Optional.of(rack)));
                rackOf.put(pid, rack);
            }
            List<PartitionInfo> partitionInfos = new ArrayList<>();
            Iterator<Map.Entry<String, JsonNode>> tasks = input.get("taskPartitions").fields();
            while (tasks.hasNext()) {
                Map.Entry<String, JsonNode> entry = tasks.next();
                TaskId task = TaskId.parse(entry.getKey());
                tasksForTopicGroup.computeIfAbsent(new Subtopology(task.subtopology(), null), s -> new HashSet<>()).add(task);
                Set<TopicPartition> parts = new HashSet<>();
                List<Set<String>> racks = new ArrayList<>();
                int k = 0;
                for (JsonNode partition : entry.getValue().get("input")) {
                    TopicPartition tp = new TopicPartition("in-" + task.subtopology() + "-" + k++, task.partition());
                    Set<String> replicaRacks = new TreeSet<>();
                    partition.forEach(r -> replicaRacks.add(r.asText()));
                    Node[] replicas = replicaRacks.stream().map(r -> node(nodeOfRack, r)).toArray(Node[]::new);
                    partitionInfos.add(new PartitionInfo(tp.topic(), tp.partition(), replicas[0], replicas, replicas));
                    parts.add(tp);
                    racks.add(replicaRacks);
                }
                partitionsForTask.put(task, parts);
                racksOfTask.put(task, racks);
                Set<TopicPartition> changelogs = new HashSet<>();
                k = 0;
                for (JsonNode partition : entry.getValue().path("changelog")) {
                    TopicPartition tp = new TopicPartition("chg-" + task.subtopology() + "-" + k++, task.partition());
                    Set<String> replicaRacks = new TreeSet<>();
                    partition.forEach(r -> replicaRacks.add(r.asText()));
                    List<Node> replicas = replicaRacks.stream().map(r -> node(nodeOfRack, r)).toList();
                    changelogTopics.computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                            .add(new TopicPartitionInfo(tp.partition(), replicas.get(0), replicas, replicas));
                    changelogs.add(tp);
                }
                changelogPartitionsForTask.put(task, changelogs);
            }
            cluster = new Cluster("rack-step", nodeOfRack.values(), partitionInfos, Set.of(), Set.of());
            JsonNode placement = instance.get("placement");
            placement.get("active").fields().forEachRemaining(e ->
                    active.put(TaskId.parse(e.getKey()), new ProcessId(UUID.fromString(e.getValue().asText()))));
            placement.path("standby").fields().forEachRemaining(e -> {
                List<ProcessId> pids = new ArrayList<>();
                e.getValue().forEach(p -> pids.add(new ProcessId(UUID.fromString(p.asText()))));
                standby.put(TaskId.parse(e.getKey()), pids);
            });
            topics = new InternalTopicManager(Time.SYSTEM, null, new StreamsConfig(Map.of(
                    StreamsConfig.APPLICATION_ID_CONFIG, "rack-step", StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092"))) {
                @Override
                public Map<String, List<TopicPartitionInfo>> getTopicPartitionInfo(Set<String> names) {
                    Map<String, List<TopicPartitionInfo>> described = new HashMap<>();
                    names.forEach(n -> described.put(n, changelogTopics.get(n)));
                    return described;
                }
            };
        }

        private static Node node(Map<String, Node> nodeOfRack, String rack) {
            return nodeOfRack.computeIfAbsent(rack, r -> new Node(nodeOfRack.size(), "host-" + r, 9092, r));
        }

        private SortedMap<ProcessId, ClientState> clients(boolean withStandbys) {
            SortedMap<ProcessId, ClientState> clients = new TreeMap<>();
            capacity.forEach((pid, cap) -> clients.put(pid, new ClientState(pid, cap)));
            active.forEach((task, pid) -> clients.get(pid).assignActive(task));
            if (withStandbys) {
                standby.forEach((task, pids) -> pids.forEach(pid -> clients.get(pid).assignStandby(task)));
            }
            return clients;
        }

        private RackAwareTaskAssignor assignor() {
            RackAwareTaskAssignor assignor = new RackAwareTaskAssignor(cluster, partitionsForTask,
                    changelogPartitionsForTask, tasksForTopicGroup, consumerRacks, topics, configs, Time.SYSTEM);
            if (!assignor.canEnableRackAwareAssignor()) {
                throw new IllegalStateException("rack-aware assignment not enabled");
            }
            return assignor;
        }

        /**
         * The instance's step: with no standbys placed, optimizeActiveTasks on the actives (Kafka
         * runs it before placing standbys); otherwise optimizeStandbyTasks on actives and standbys.
         */
        Result run() {
            return standby.isEmpty() ? runActive() : runStandby();
        }

        /** Fresh client states (actives only) and assignor, then the timed optimizeActiveTasks. */
        Result runActive() {
            SortedMap<ProcessId, ClientState> clients = clients(false);
            RackAwareTaskAssignor assignor = assignor();
            Result result = new Result();
            long t0 = System.nanoTime();
            result.activeCost = assignor.optimizeActiveTasks(new TreeSet<>(active.keySet()), clients, traffic, nonOverlap);
            result.activeNanos = System.nanoTime() - t0;
            return collect(result, clients);
        }

        /** Fresh client states (actives and standbys) and assignor, then the timed optimizeStandbyTasks. */
        Result runStandby() {
            SortedMap<ProcessId, ClientState> clients = clients(true);
            RackAwareTaskAssignor assignor = assignor();
            Result result = new Result();
            long t0 = System.nanoTime();
            result.standbyCost = assignor.optimizeStandbyTasks(clients, traffic, nonOverlap, (s, d, t, all) -> true);
            result.standbyNanos = System.nanoTime() - t0;
            collect(result, clients);
            result.activeCost = result.activeTrafficCost + result.activeNonOverlapCost;
            return result;
        }

        private Result collect(Result result, SortedMap<ProcessId, ClientState> clients) {
            clients.forEach((pid, state) -> {
                String rack = rackOf.get(pid);
                for (TaskId task : state.activeTasks()) {
                    result.active.put(task, pid);
                    for (Set<String> replicaRacks : racksOfTask.get(task)) {
                        if (!replicaRacks.contains(rack)) {
                            result.activeTrafficCost += traffic;
                        }
                    }
                    if (!active.get(task).equals(pid)) {
                        result.activeNonOverlapCost += nonOverlap;
                    }
                }
                for (TaskId task : state.standbyTasks()) {
                    result.standby.computeIfAbsent(task, t -> new TreeSet<>()).add(pid);
                }
            });
            return result;
        }
    }
}
