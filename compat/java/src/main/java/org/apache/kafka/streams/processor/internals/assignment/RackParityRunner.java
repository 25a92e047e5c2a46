package org.apache.kafka.streams.processor.internals.assignment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedMap;
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
 * Rack-aware active task optimisation through Kafka's own RackAwareTaskAssignor, for
 * compat/java/rack-parity.sh.
 *
 * <p>Usage: {@code RackParityRunner INSTANCES.jsonl OUT.jsonl}. Each input line holds an
 * engine input ({@code input}: clients with racks, stateful tasks, {@code taskPartitions} with
 * the racks of each input partition's replicas, dotted configs) and the current active placement
 * ({@code current}: task → process id). Each output line holds Kafka's optimal total cost
 * ({@code cost}, as optimizeActiveTasks returns it) and its split into traffic and non-overlap
 * cost, recomputed from the placement Kafka chose. Instances with a non-empty {@code standby}
 * placement (task → process id) run optimizeStandbyTasks instead (changelog racks described by a
 * stub topic manager); {@code cost} is then its final standby cost.
 */
public final class RackParityRunner {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RackParityRunner() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: RackParityRunner INSTANCES.jsonl OUT.jsonl");
            System.exit(2);
        }
        int count = 0;
        try (BufferedReader in = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8);
             BufferedWriter out = Files.newBufferedWriter(Path.of(args[1]), StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                out.write(JSON.writeValueAsString(run(JSON.readTree(line))));
                out.newLine();
                count++;
            }
        }
        System.err.println("rack parity: Kafka optimised " + count + " instances");
    }

    private static ObjectNode run(JsonNode instance) {
        JsonNode input = instance.get("input");
        JsonNode c = input.path("configs");
        int traffic = c.get("rack.aware.assignment.traffic_cost").asInt();
        int nonOverlap = c.get("rack.aware.assignment.non_overlap_cost").asInt();
        JsonNode standbys = instance.path("standby");
        boolean standbyMode = standbys.size() > 0;
        AssignmentConfigs configs = new AssignmentConfigs(10000L, 2, standbyMode ? 1 : 0, 600000L, List.of(),
                OptionalInt.of(traffic), OptionalInt.of(nonOverlap),
                c.get("rack.aware.assignment.strategy").asText());

        Map<String, Node> nodeOfRack = new HashMap<>();
        SortedMap<ProcessId, ClientState> clients = new TreeMap<>();
        Map<ProcessId, Map<String, Optional<String>>> consumerRacks = new HashMap<>();
        Map<ProcessId, String> rackOf = new HashMap<>();
        for (JsonNode client : input.get("clients")) {
            ProcessId pid = new ProcessId(UUID.fromString(client.get("processId").asText()));
            String rack = client.get("rackId").asText();
            nodeOfRack.computeIfAbsent(rack, r -> new Node(nodeOfRack.size(), "host-" + r, 9092, r));
            clients.put(pid, new ClientState(pid, client.get("capacity").asInt()));
            consumerRacks.put(pid, Map.of("consumer-" + pid, Optional.of(rack)));
            rackOf.put(pid, rack);
        }

        Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
        Map<TaskId, Set<TopicPartition>> changelogPartitionsForTask = new HashMap<>();
        Map<String, List<TopicPartitionInfo>> changelogTopics = new HashMap<>();
        Map<TaskId, List<Set<String>>> racksOfTask = new HashMap<>();
        Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
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
                List<Node> replicas = new ArrayList<>();
                for (String r : replicaRacks) {
                    replicas.add(nodeOfRack.computeIfAbsent(r, x -> new Node(nodeOfRack.size(), "host-" + x, 9092, x)));
                }
                Node[] array = replicas.toArray(new Node[0]);
                partitionInfos.add(new PartitionInfo(tp.topic(), tp.partition(), array[0], array, array));
                parts.add(tp);
                racks.add(replicaRacks);
            }
            partitionsForTask.put(task, parts);
            racksOfTask.put(task, racks);
            Set<TopicPartition> changelogs = new HashSet<>();
            k = 0;
            for (JsonNode partition : entry.getValue().path("changelog")) {
                TopicPartition tp = new TopicPartition("chg-" + task.subtopology() + "-" + k++, task.partition());
                List<Node> replicas = new ArrayList<>();
                for (JsonNode r : partition) {
                    String rack = r.asText();
                    replicas.add(nodeOfRack.computeIfAbsent(rack, x -> new Node(nodeOfRack.size(), "host-" + x, 9092, x)));
                }
                changelogTopics.computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                        .add(new TopicPartitionInfo(tp.partition(), replicas.get(0), replicas, replicas));
                changelogs.add(tp);
            }
            changelogPartitionsForTask.put(task, changelogs);
        }
        Cluster cluster = new Cluster("rack-parity", nodeOfRack.values(), partitionInfos, Set.of(), Set.of());

        Map<TaskId, ProcessId> current = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> placed = instance.get("current").fields();
        while (placed.hasNext()) {
            Map.Entry<String, JsonNode> entry = placed.next();
            TaskId task = TaskId.parse(entry.getKey());
            ProcessId pid = new ProcessId(UUID.fromString(entry.getValue().asText()));
            clients.get(pid).assignActive(task);
            current.put(task, pid);
        }

        InternalTopicManager topics = new InternalTopicManager(Time.SYSTEM, null, new StreamsConfig(
                Map.of(StreamsConfig.APPLICATION_ID_CONFIG, "rack-parity", StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092"))) {
            @Override
            public Map<String, List<TopicPartitionInfo>> getTopicPartitionInfo(Set<String> names) {
                Map<String, List<TopicPartitionInfo>> described = new HashMap<>();
                names.forEach(n -> described.put(n, changelogTopics.get(n)));
                return described;
            }
        };
        RackAwareTaskAssignor assignor = new RackAwareTaskAssignor(cluster, partitionsForTask,
                standbyMode ? changelogPartitionsForTask : Collections.emptyMap(),
                tasksForTopicGroup, consumerRacks, topics, configs, Time.SYSTEM);
        if (!assignor.canEnableRackAwareAssignor()) {
            throw new IllegalStateException("rack-aware assignment not enabled for " + instance);
        }
        if (standbyMode) {
            Iterator<Map.Entry<String, JsonNode>> copies = standbys.fields();
            while (copies.hasNext()) {
                Map.Entry<String, JsonNode> entry = copies.next();
                clients.get(new ProcessId(UUID.fromString(entry.getValue().asText()))).assignStandby(TaskId.parse(entry.getKey()));
            }
            ObjectNode result = JSON.createObjectNode();
            result.put("cost", assignor.optimizeStandbyTasks(clients, traffic, nonOverlap, (s, d, t, all) -> true));
            return result;
        }
        long cost = assignor.optimizeActiveTasks(new TreeSet<>(current.keySet()), clients, traffic, nonOverlap);

        long trafficCost = 0;
        long nonOverlapCost = 0;
        for (Map.Entry<ProcessId, ClientState> client : clients.entrySet()) {
            String rack = rackOf.get(client.getKey());
            for (TaskId task : client.getValue().activeTasks()) {
                for (Set<String> replicaRacks : racksOfTask.get(task)) {
                    if (!replicaRacks.contains(rack)) {
                        trafficCost += traffic;
                    }
                }
                if (!current.get(task).equals(client.getKey())) {
                    nonOverlapCost += nonOverlap;
                }
            }
        }
        ObjectNode result = JSON.createObjectNode();
        result.put("cost", cost);
        result.put("traffic", trafficCost);
        result.put("nonOverlap", nonOverlapCost);
        return result;
    }
}
