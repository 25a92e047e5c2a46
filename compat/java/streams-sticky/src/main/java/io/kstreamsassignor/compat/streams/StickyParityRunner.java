package io.kstreamsassignor.compat.streams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.streams.AssignmentRefiner;
import org.apache.kafka.coordinator.group.streams.MemberState;
import org.apache.kafka.coordinator.group.streams.MemberTaskOffsets;
import org.apache.kafka.coordinator.group.streams.StreamsGroupMember;
import org.apache.kafka.coordinator.group.streams.TargetAssignmentBuilder;
import org.apache.kafka.coordinator.group.streams.TasksTuple;
import org.apache.kafka.coordinator.group.streams.TasksTupleWithEpochs;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredInternalTopic;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredSubtopology;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredTopology;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Runs groups through the coordinator's own target-assignment path of kafka-group-coordinator
 * 4.4.0: {@link TargetAssignmentBuilder} with {@link StickyTaskAssignor} over real
 * {@link StreamsGroupMember}s and their reported task offsets, then, with warm-ups enabled,
 * {@link AssignmentRefiner} as {@code GroupMetadataManager} calls it (falling back to the target
 * when the refinement changes the active task count).
 *
 * <pre>StickyParityRunner run groups.jsonl java.jsonl</pre>
 *
 * Each input line is {@code {"id", "spec", "topology"}} as the Rust engine serializes them; each
 * output line {@code {"id", "result"}} (members by id, tasks sorted) or {@code {"id", "error"}}.
 */
public final class StickyParityRunner {
    private static final ObjectMapper JSON = new ObjectMapper();

    private StickyParityRunner() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3 || !args[0].equals("run")) {
            System.err.println("usage: StickyParityRunner run groups.jsonl java.jsonl");
            System.exit(2);
        }
        int groups = 0;
        int errors = 0;
        try (BufferedReader in = Files.newBufferedReader(Path.of(args[1]), StandardCharsets.UTF_8);
             BufferedWriter out = Files.newBufferedWriter(Path.of(args[2]), StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode group = JSON.readTree(line);
                ObjectNode answer = JSON.createObjectNode();
                answer.put("id", group.get("id").asText());
                try {
                    answer.set("result", run(group.get("spec"), group.get("topology")));
                } catch (TaskAssignorException e) {
                    answer.put("error", e.getMessage());
                    errors++;
                }
                out.write(JSON.writeValueAsString(answer));
                out.write('\n');
                groups++;
            }
        }
        System.err.println("java: " + groups + " groups through TargetAssignmentBuilder + StickyTaskAssignor (" + errors + " refused)");
    }

    private static ObjectNode run(JsonNode spec, JsonNode topologyJson) {
        JsonNode configs = spec.path("configs");
        int standbys = configs.path("num.standby.replicas").asInt(0);
        int warmups = configs.path("group.streams.num.warmup.replicas").asInt(0);
        long recoveryLag = configs.path("group.streams.acceptable.recovery.lag").asLong(0);
        StringBuilder tags = new StringBuilder();
        for (JsonNode tag : configs.path("rack.aware.assignment.tags")) {
            tags.append(tags.length() == 0 ? "" : ",").append(tag.asText());
        }
        // The group's assignment configs as the coordinator stores them.
        Map<String, String> assignmentConfigs = new HashMap<>();
        assignmentConfigs.put("num.standby.replicas", Integer.toString(standbys));
        assignmentConfigs.put("rack.aware.assignment.tags", tags.toString());

        // The coordinator's members, in the spec's order.
        Map<String, StreamsGroupMember> members = new LinkedHashMap<>();
        Map<String, MemberTaskOffsets> offsets = new LinkedHashMap<>();
        for (JsonNode m : spec.path("members")) {
            String memberId = m.get("memberId").asText();
            Map<String, String> clientTags = new HashMap<>();
            m.path("clientTags").fields().forEachRemaining(e -> clientTags.put(e.getKey(), e.getValue().asText()));
            Map<String, Map<Integer, Integer>> active = new HashMap<>();
            m.path("activeTasks").fields().forEachRemaining(e -> {
                Map<Integer, Integer> epochs = new HashMap<>();
                e.getValue().fields().forEachRemaining(p -> epochs.put(Integer.parseInt(p.getKey()), p.getValue().asInt()));
                active.put(e.getKey(), epochs);
            });
            StreamsGroupMember member = new StreamsGroupMember.Builder(memberId)
                .setMemberEpoch(1)
                .setPreviousMemberEpoch(0)
                .setState(MemberState.STABLE)
                .setInstanceId(textOrNull(m.get("instanceId")))
                .setRackId(textOrNull(m.get("rackId")))
                .setRebalanceTimeoutMs(300000)
                .setClientId("client")
                .setClientHost("localhost")
                .setTopologyEpoch(0)
                .setProcessId(m.get("processId").asText())
                .setUserEndpoint(null)
                .setClientTags(clientTags)
                .setAssignedTasks(new TasksTupleWithEpochs(active, tasks(m.path("standbyTasks")), tasks(m.path("warmupTasks"))))
                .setTasksPendingRevocation(TasksTupleWithEpochs.EMPTY)
                .build();
            members.put(memberId, member);
            offsets.put(memberId, new MemberTaskOffsets(taskValues(m.path("taskOffsets")), taskValues(m.path("taskEndOffsets"))));
        }

        TreeMap<String, ConfiguredSubtopology> subtopologies = new TreeMap<>();
        for (JsonNode s : topologyJson.path("subtopologies")) {
            String id = s.get("id").asText();
            int partitions = s.get("partitions").asInt();
            Map<String, ConfiguredInternalTopic> changelogs = s.get("stateful").asBoolean()
                ? Map.of(id + "-changelog", new ConfiguredInternalTopic(id + "-changelog", partitions, Optional.empty(), Map.of()))
                : Map.of();
            subtopologies.put(id, new ConfiguredSubtopology(partitions, Set.of(id + "-source"), Map.of(), Set.of(), changelogs));
        }
        ConfiguredTopology topology = new ConfiguredTopology(0, 0L, Optional.of(subtopologies), Map.of(), Optional.empty());

        Map<String, TasksTuple> target = new TargetAssignmentBuilder("group", 2, new StickyTaskAssignor(), assignmentConfigs)
            .withTime(Time.SYSTEM)
            .withMembers(members)
            .withTaskOffsets(offsets)
            .withTopology(topology)
            .withTargetAssignment(Map.of())
            .build()
            .targetAssignment();
        // GroupMetadataManager.refineAssignment: the refiner only with warm-ups enabled, and the
        // target itself when the refinement changes the number of active tasks.
        Map<String, TasksTuple> refined = target;
        if (warmups > 0) {
            refined = AssignmentRefiner.refine(members, target, offsets, topology, warmups, recoveryLag);
            if (!AssignmentRefiner.preservesActiveTaskCount(target, refined)) {
                refined = target;
            }
        }

        ObjectNode byMember = JSON.createObjectNode();
        for (Map.Entry<String, TasksTuple> e : new TreeMap<>(refined).entrySet()) {
            ObjectNode tuple = JSON.createObjectNode();
            tuple.set("activeTasks", sorted(e.getValue().activeTasks()));
            tuple.set("standbyTasks", sorted(e.getValue().standbyTasks()));
            tuple.set("warmupTasks", sorted(e.getValue().warmupTasks()));
            byMember.set(e.getKey(), tuple);
        }
        ObjectNode result = JSON.createObjectNode();
        result.set("members", byMember);
        return result;
    }

    private static String textOrNull(JsonNode node) {
        return node == null || node.isNull() ? null : node.asText();
    }

    private static Map<String, Set<Integer>> tasks(JsonNode node) {
        Map<String, Set<Integer>> out = new HashMap<>();
        node.fields().forEachRemaining(e -> {
            Set<Integer> partitions = new HashSet<>();
            e.getValue().forEach(p -> partitions.add(p.asInt()));
            out.put(e.getKey(), partitions);
        });
        return out;
    }

    private static Map<String, Map<Integer, Long>> taskValues(JsonNode node) {
        Map<String, Map<Integer, Long>> out = new HashMap<>();
        node.fields().forEachRemaining(e -> {
            Map<Integer, Long> values = new HashMap<>();
            e.getValue().fields().forEachRemaining(p -> values.put(Integer.parseInt(p.getKey()), p.getValue().asLong()));
            out.put(e.getKey(), values);
        });
        return out;
    }

    private static ObjectNode sorted(Map<String, Set<Integer>> tasks) {
        ObjectNode out = JSON.createObjectNode();
        for (Map.Entry<String, Set<Integer>> e : new TreeMap<>(tasks).entrySet()) {
            if (e.getValue().isEmpty()) {
                continue;
            }
            ArrayNode partitions = out.putArray(e.getKey());
            for (Iterator<Integer> it = new TreeSet<>(e.getValue()).iterator(); it.hasNext();) {
                partitions.add(it.next());
            }
        }
        return out;
    }
}
