package io.kstreamsassignor.bench.streams;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.MemberState;
import org.apache.kafka.coordinator.group.streams.MemberTaskOffsets;
import org.apache.kafka.coordinator.group.streams.StreamsGroupMember;
import org.apache.kafka.coordinator.group.streams.TargetAssignmentBuilder;
import org.apache.kafka.coordinator.group.streams.TasksTuple;
import org.apache.kafka.coordinator.group.streams.TasksTupleWithEpochs;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredInternalTopic;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredSubtopology;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredTopology;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The benchmark's groups, and the {@link GroupSpec} and {@link TopologyDescriber} that the
 * coordinator of kafka-group-coordinator 4.4.0 builds for them: each is taken from a real
 * {@link TargetAssignmentBuilder} run over {@link StreamsGroupMember}s, their reported task offsets,
 * the configured topology and the previous target, with an assignor that only keeps what it is
 * handed.
 *
 * <p>Shape: sub-topologies of {@value #PARTITIONS} partitions, every second one (odd index)
 * stateful with a changelog, {@code num.standby.replicas=1}, {@code perProcess} members per
 * process.
 */
final class Groups {
    static final int PARTITIONS = 100;
    static final String STANDBYS = "1";

    /** What the coordinator hands an assignor. */
    record Call(GroupSpec spec, TopologyDescriber topology) {
    }

    /** The task layout of one size: {@code tasks / 100} sub-topologies. */
    record Size(int members, int tasks) {
        int subtopologies() {
            return tasks / PARTITIONS;
        }

        int statefulTasks() {
            return subtopologies() / 2 * PARTITIONS;
        }

        static Size parse(final String text) {
            final String[] parts = text.toLowerCase().split("x");
            return new Size(Integer.parseInt(parts[0].replace("_", "").replace(",", "")),
                Integer.parseInt(parts[1].replace("_", "").replace(",", "")));
        }

        @Override
        public String toString() {
            return String.format("%,d × %,d", members, tasks);
        }
    }

    private Groups() {
    }

    static ConfiguredTopology topology(final Size size) {
        final TreeMap<String, ConfiguredSubtopology> subtopologies = new TreeMap<>();
        for (int s = 0; s < size.subtopologies(); s++) {
            final String id = Integer.toString(s);
            final Map<String, ConfiguredInternalTopic> changelogs = s % 2 == 1
                ? Map.of(id + "-changelog", new ConfiguredInternalTopic(id + "-changelog", PARTITIONS, Optional.empty(), Map.of()))
                : Map.of();
            subtopologies.put(id, new ConfiguredSubtopology(PARTITIONS, Set.of(id + "-source"), Map.of(), Set.of(), changelogs));
        }
        return new ConfiguredTopology(0, 0L, Optional.of(subtopologies), Map.of(), Optional.empty());
    }

    static Map<String, String> assignmentConfigs() {
        final Map<String, String> configs = new HashMap<>();
        configs.put("num.standby.replicas", STANDBYS);
        configs.put("rack.aware.assignment.tags", "");
        return configs;
    }

    /** The member ids of the group without a newcomer: {@code m-0 … m-(n-1)}. */
    static String memberId(final int i) {
        return "m-" + i;
    }

    static final String NEW_MEMBER = "m-new";

    /**
     * The coordinator's members: {@code size.members()} members on processes of
     * {@code perProcess} (process ids start with {@code processPrefix}), each with its tasks of
     * {@code previous} (the previous target, or empty), plus one new member on a new process when
     * {@code newcomer}.
     */
    static Map<String, StreamsGroupMember> members(final Size size, final int perProcess, final String processPrefix,
                                                   final Map<String, TasksTuple> previous, final boolean newcomer) {
        final Map<String, StreamsGroupMember> members = new LinkedHashMap<>();
        for (int i = 0; i < size.members(); i++) {
            final String id = memberId(i);
            members.put(id, member(id, processPrefix + "p-" + (i / perProcess), previous.getOrDefault(id, TasksTuple.EMPTY)));
        }
        if (newcomer) {
            members.put(NEW_MEMBER, member(NEW_MEMBER, processPrefix + "p-new", TasksTuple.EMPTY));
        }
        return members;
    }

    private static StreamsGroupMember member(final String id, final String process, final TasksTuple tasks) {
        final Map<String, Map<Integer, Integer>> active = new HashMap<>();
        tasks.activeTasks().forEach((sub, partitions) -> {
            final Map<Integer, Integer> epochs = new HashMap<>();
            partitions.forEach(p -> epochs.put(p, 1));
            active.put(sub, epochs);
        });
        return new StreamsGroupMember.Builder(id)
            .setMemberEpoch(2)
            .setPreviousMemberEpoch(1)
            .setState(MemberState.STABLE)
            .setInstanceId(null)
            .setRackId(null)
            .setRebalanceTimeoutMs(300_000)
            .setClientId("client")
            .setClientHost("localhost")
            .setTopologyEpoch(0)
            .setProcessId(process)
            .setUserEndpoint(null)
            .setClientTags(Map.of())
            .setAssignedTasks(new TasksTupleWithEpochs(active, tasks.standbyTasks(), tasks.warmupTasks()))
            .setTasksPendingRevocation(TasksTupleWithEpochs.EMPTY)
            .build();
    }

    /**
     * The offsets members report with their heartbeats when {@code withOffsets}: each member its
     * changelog offset for every stateful task it holds (active: caught up at 1,000,000; standby:
     * behind by 0 to 19,999, so about half within the default acceptable recovery lag of 10,000),
     * and the end offset for its stateful active tasks. Otherwise nothing.
     */
    static Map<String, MemberTaskOffsets> offsets(final Map<String, StreamsGroupMember> members, final boolean withOffsets) {
        final Map<String, MemberTaskOffsets> out = new LinkedHashMap<>();
        for (final StreamsGroupMember m : members.values()) {
            if (!withOffsets) {
                out.put(m.memberId(), MemberTaskOffsets.EMPTY);
                continue;
            }
            final Map<String, Map<Integer, Long>> offsets = new HashMap<>();
            final Map<String, Map<Integer, Long>> ends = new HashMap<>();
            m.assignedTasks().activeTasksWithEpochs().forEach((sub, partitions) -> {
                if (Integer.parseInt(sub) % 2 == 1) {
                    for (final int p : partitions.keySet()) {
                        offsets.computeIfAbsent(sub, k -> new HashMap<>()).put(p, 1_000_000L);
                        ends.computeIfAbsent(sub, k -> new HashMap<>()).put(p, 1_000_000L);
                    }
                }
            });
            m.assignedTasks().standbyTasks().forEach((sub, partitions) -> {
                for (final int p : partitions) {
                    final long lag = Math.floorMod((sub + ":" + p + ":" + m.memberId()).hashCode(), 20_000);
                    offsets.computeIfAbsent(sub, k -> new HashMap<>()).put(p, 1_000_000L - lag);
                }
            });
            out.put(m.memberId(), new MemberTaskOffsets(offsets, ends));
        }
        return out;
    }

    /** Runs the coordinator's target-assignment path with {@code assignor}; returns the new target. */
    static Map<String, TasksTuple> target(final TaskAssignor assignor, final Size size,
                                          final Map<String, StreamsGroupMember> members,
                                          final Map<String, MemberTaskOffsets> offsets,
                                          final Map<String, TasksTuple> previous) {
        return new TargetAssignmentBuilder("bench-group", 3, assignor, assignmentConfigs())
            .withTime(Time.SYSTEM)
            .withMembers(members)
            .withTaskOffsets(offsets)
            .withTopology(topology(size))
            .withTargetAssignment(previous)
            .build()
            .targetAssignment();
    }

    /** The GroupSpec and TopologyDescriber the coordinator builds for this group. */
    static Call capture(final Size size, final Map<String, StreamsGroupMember> members,
                        final Map<String, MemberTaskOffsets> offsets, final Map<String, TasksTuple> previous) {
        final Call[] seen = new Call[1];
        final TaskAssignor keeper = new TaskAssignor() {
            @Override
            public String name() {
                return "capture";
            }

            @Override
            public GroupAssignment assign(final GroupSpec spec, final TopologyDescriber topology) {
                seen[0] = new Call(spec, topology);
                final Map<String, MemberAssignment> empty = new HashMap<>();
                for (final String id : spec.memberIds()) {
                    empty.put(id, new MemberAssignment(Map.of(), Map.of()));
                }
                return new GroupAssignment(empty);
            }
        };
        target(keeper, size, members, offsets, previous);
        return seen[0];
    }

    /** An assignor's answer as the coordinator's target (active, standby; no warm-ups in the API). */
    static Map<String, TasksTuple> asTarget(final GroupAssignment answer) {
        final Map<String, TasksTuple> out = new HashMap<>();
        answer.members().forEach((id, m) -> out.put(id, new TasksTuple(m.activeTasks(), m.standbyTasks(), Map.of())));
        return out;
    }
}
