package io.kstreamsassignor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.coordinator.group.api.streams.assignor.AssignmentConfigs;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.junit.jupiter.api.Test;

/**
 * The broker assignor's cost at 1,000 members (250 processes of 4) x 10,000 tasks (10
 * subtopologies of 1,000 partitions, half stateful, one standby): the whole call as the
 * coordinator makes it (request written, JNI crossing, engine, response read), median of 7 after
 * 3 warm-up calls. It must stay under the default deadline, or such groups would never get an
 * assignment.
 */
class StreamsTimingTest {
    static final int MEMBERS = 1_000;
    static final int PER_PROCESS = 4;
    static final int SUBTOPOLOGIES = 10;
    static final int PARTITIONS = 1_000;

    static final class Member {
        final String process;
        final Map<String, Set<Integer>> active = new HashMap<>();
        final Map<String, Set<Integer>> standby = new HashMap<>();
        final Map<String, Map<Integer, Long>> offsets = new HashMap<>();

        Member(final String process) {
            this.process = process;
        }
    }

    static GroupSpec bigGroup() {
        final Map<String, Member> members = new LinkedHashMap<>();
        for (int m = 0; m < MEMBERS; m++) {
            members.put("member-" + m, new Member("process-" + (m / PER_PROCESS)));
        }
        final List<Member> list = new ArrayList<>(members.values());
        // The previous assignment: a task on member (task mod members - 40 newcomers), its standby
        // on the next process; offsets reported for both.
        final int owners = MEMBERS - 40;
        int task = 0;
        for (int s = 0; s < SUBTOPOLOGIES; s++) {
            final String sub = Integer.toString(s);
            for (int p = 0; p < PARTITIONS; p++, task++) {
                final Member owner = list.get(task % owners);
                owner.active.computeIfAbsent(sub, k -> new TreeSet<>()).add(p);
                if (s % 2 == 1) {
                    owner.offsets.computeIfAbsent(sub, k -> new HashMap<>()).put(p, 10_000L);
                    final Member copy = list.get((task % owners + PER_PROCESS) % owners);
                    copy.standby.computeIfAbsent(sub, k -> new TreeSet<>()).add(p);
                    copy.offsets.computeIfAbsent(sub, k -> new HashMap<>()).put(p, 9_000L + p % 1_000);
                }
            }
        }
        return new GroupSpec() {
            public Collection<String> memberIds() {
                return members.keySet();
            }

            public MemberAssignmentMetadata memberMetadata(final String id) {
                final Member m = members.get(id);
                return new MemberAssignmentMetadata() {
                    public Optional<String> instanceId() {
                        return Optional.empty();
                    }

                    public Optional<String> rackId() {
                        return Optional.empty();
                    }

                    public String processId() {
                        return m.process;
                    }

                    public Map<String, String> clientTags() {
                        return Map.of();
                    }
                };
            }

            public MemberAssignmentState memberAssignmentState(final String id) {
                final Member m = members.get(id);
                return new MemberAssignmentState() {
                    public Map<String, Set<Integer>> activeTasks() {
                        return m.active;
                    }

                    public Map<String, Set<Integer>> standbyTasks() {
                        return m.standby;
                    }

                    public Map<String, Set<Integer>> warmupTasks() {
                        return Map.of();
                    }

                    public Map<String, Map<Integer, Long>> taskOffsets() {
                        return m.offsets;
                    }

                    public Map<String, Map<Integer, Long>> taskEndOffsets() {
                        return m.offsets;
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

    static TopologyDescriber bigTopology() {
        final List<String> ids = new ArrayList<>();
        for (int s = 0; s < SUBTOPOLOGIES; s++) {
            ids.add(Integer.toString(s));
        }
        return new TopologyDescriber() {
            public List<String> subtopologies() {
                return ids;
            }

            public int maxNumInputPartitions(final String id) {
                return PARTITIONS;
            }

            public boolean isStateful(final String id) {
                return Integer.parseInt(id) % 2 == 1;
            }
        };
    }

    @Test
    void aThousandMembersOverTenThousandTasksStayUnderTheDeadline() {
        assumeTrue(Files.isRegularFile(NativeRoundTripTest.LIBRARY), "no native library at " + NativeRoundTripTest.LIBRARY);
        final OptimizedStreamsTaskAssignor assignor = new OptimizedStreamsTaskAssignor();
        assignor.configure(Map.of(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG, NativeRoundTripTest.LIBRARY.toString(),
            OptimizedStreamsTaskAssignor.TIMEOUT_CONFIG, "10000"));
        NativeEngine.ensureLoaded(NativeRoundTripTest.LIBRARY.toString());
        final GroupSpec spec = bigGroup();
        final TopologyDescriber topology = bigTopology();
        final long[] ms = new long[7];
        final long[] engine = new long[7];
        for (int i = -3; i < ms.length; i++) {
            final long started = System.nanoTime();
            final byte[] bytes = NativeEngine.assignStreams(StreamsCodec.writeRequest(1_700_000_000_000L + i, spec, topology,
                new StreamsCodec.Warmups(2, 10_000L)));
            final StreamsCodec.Response response = StreamsCodec.readResponse(bytes);
            final long elapsed = System.nanoTime() - started;
            if (i >= 0) {
                ms[i] = elapsed / 1_000_000;
                engine[i] = response.engineNanos / 1_000_000;
            }
            assertEquals(MEMBERS, response.assignment.members().size());
        }
        final GroupAssignment viaAssignor = assignor.assign(spec, topology);
        final int active = viaAssignor.members().values().stream()
            .mapToInt(m -> m.activeTasks().values().stream().mapToInt(Set::size).sum()).sum();
        assertEquals(SUBTOPOLOGIES * PARTITIONS, active);
        Arrays.sort(ms);
        Arrays.sort(engine);
        System.out.printf("streams assignor at %d members x %d tasks: median %d ms per call (engine %d ms), min %d, max %d%n",
            MEMBERS, SUBTOPOLOGIES * PARTITIONS, ms[3], engine[3], ms[0], ms[6]);
        assertTrue(ms[3] < 1_000, "median " + ms[3] + " ms is past the default 1 s deadline");
    }
}
