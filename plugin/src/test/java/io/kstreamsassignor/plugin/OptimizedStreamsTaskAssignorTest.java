package io.kstreamsassignor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.coordinator.group.api.streams.assignor.AssignmentConfigs;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.junit.jupiter.api.Test;

class OptimizedStreamsTaskAssignorTest {
    static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC);

    /** A group of {@code members} members over {@code processes} processes; member 0 runs every task. */
    static GroupSpec group(final int members, final int processes, final int tasks, final int standbys) {
        final Map<String, MemberAssignmentMetadata> metas = new LinkedHashMap<>();
        final Map<String, MemberAssignmentState> states = new HashMap<>();
        for (int m = 0; m < members; m++) {
            final String process = "process-" + (m % processes);
            final String id = "member-" + m;
            metas.put(id, new MemberAssignmentMetadata() {
                public Optional<String> instanceId() {
                    return Optional.empty();
                }

                public Optional<String> rackId() {
                    return Optional.of("rack-" + process.hashCode() % 3);
                }

                public String processId() {
                    return process;
                }

                public Map<String, String> clientTags() {
                    return Map.of();
                }
            });
            final Map<String, Set<Integer>> active = new HashMap<>();
            final Map<String, Map<Integer, Long>> offsets = new HashMap<>();
            if (m == 0) {
                final Set<Integer> all = new TreeSet<>();
                final Map<Integer, Long> ends = new HashMap<>();
                for (int p = 0; p < tasks; p++) {
                    all.add(p);
                    ends.put(p, 1_000L);
                }
                active.put("0", all);
                offsets.put("0", ends);
            }
            states.put(id, new MemberAssignmentState() {
                public Map<String, Set<Integer>> activeTasks() {
                    return active;
                }

                public Map<String, Set<Integer>> standbyTasks() {
                    return Map.of();
                }

                public Map<String, Set<Integer>> warmupTasks() {
                    return Map.of();
                }

                public Map<String, Map<Integer, Long>> taskOffsets() {
                    return offsets;
                }

                public Map<String, Map<Integer, Long>> taskEndOffsets() {
                    return offsets;
                }
            });
        }
        return new GroupSpec() {
            public Collection<String> memberIds() {
                return metas.keySet();
            }

            public MemberAssignmentMetadata memberMetadata(final String id) {
                return metas.get(id);
            }

            public MemberAssignmentState memberAssignmentState(final String id) {
                return states.get(id);
            }

            public AssignmentConfigs configs() {
                return new AssignmentConfigs() {
                    public int numStandbyReplicas() {
                        return standbys;
                    }

                    public List<String> rackAwareAssignmentTags() {
                        return List.of();
                    }
                };
            }
        };
    }

    static TopologyDescriber topology(final int tasks) {
        return new TopologyDescriber() {
            public List<String> subtopologies() {
                return List.of("0");
            }

            public int maxNumInputPartitions(final String id) {
                return tasks;
            }

            public boolean isStateful(final String id) {
                return true;
            }
        };
    }

    @Test
    void itsNameIsOptimized() {
        assertEquals("optimized", new OptimizedStreamsTaskAssignor().name());
    }

    @Test
    void anEngineFailureBecomesATaskAssignorException() {
        final OptimizedStreamsTaskAssignor assignor = new OptimizedStreamsTaskAssignor(CLOCK, bytes -> {
            throw new NativeEngineException("no process available to assign active task 0_0");
        });
        final TaskAssignorException e = assertThrows(TaskAssignorException.class, () -> assignor.assign(group(2, 2, 4, 1), topology(4)));
        assertTrue(e.getMessage().contains("no process available"), e.getMessage());
    }

    @Test
    void aMalformedResponseBecomesATaskAssignorException() {
        final OptimizedStreamsTaskAssignor assignor = new OptimizedStreamsTaskAssignor(CLOCK, bytes -> new byte[] {0, 0, 0, 1, 0x7f, 0, 0, 0});
        final TaskAssignorException e = assertThrows(TaskAssignorException.class, () -> assignor.assign(group(2, 2, 4, 1), topology(4)));
        assertTrue(e.getMessage().contains("count 2130706432 at byte 4"), e.getMessage());
    }

    @Test
    void aLateEngineIsAbandonedAtTheDeadline() {
        final OptimizedStreamsTaskAssignor assignor = new OptimizedStreamsTaskAssignor(CLOCK, bytes -> {
            try {
                Thread.sleep(5_000);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new byte[0];
        });
        assignor.configure(Map.of(OptimizedStreamsTaskAssignor.TIMEOUT_CONFIG, "100"));
        final long started = System.nanoTime();
        final TaskAssignorException e = assertThrows(TaskAssignorException.class, () -> assignor.assign(group(2, 2, 4, 1), topology(4)));
        final long ms = (System.nanoTime() - started) / 1_000_000;
        assertTrue(e.getMessage().contains("more than 100 ms"), e.getMessage());
        assertTrue(ms < 2_000, ms + " ms");
    }

    @Test
    void warmupsAreHandedOutAsStandbys() {
        // The response of one member with active 0_0, standby 0_1 and warm-up 0_2.
        final byte[] response = {
            0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 'm',
            0, 0, 0, 1, 0, 0, 0, 1, '0', 0, 0, 0, 1, 0, 0, 0, 0,
            0, 0, 0, 1, 0, 0, 0, 1, '0', 0, 0, 0, 1, 0, 0, 0, 1,
            0, 0, 0, 1, 0, 0, 0, 1, '0', 0, 0, 0, 1, 0, 0, 0, 2,
            0, 0, 0, 2, 'o', 'k', 0, 0, 0, 0, 0, 0, 0, 9,
        };
        final StreamsCodec.Response r = StreamsCodec.readResponse(response);
        assertEquals(new MemberAssignment(Map.of("0", Set.of(0)), Map.of("0", Set.of(1, 2))), r.assignment.members().get("m"));
        assertEquals(1, r.warmups);
        assertEquals("ok", r.summary);
        assertEquals(9, r.engineNanos);
        assertThrows(IllegalArgumentException.class, () -> StreamsCodec.readResponse(java.util.Arrays.copyOf(response, response.length - 1)));
    }

    @Test
    void theNativeEngineAssignsEveryTaskOnce() {
        assumeTrue(Files.isRegularFile(NativeRoundTripTest.LIBRARY), "no native library at " + NativeRoundTripTest.LIBRARY);
        final OptimizedStreamsTaskAssignor assignor = new OptimizedStreamsTaskAssignor();
        assignor.configure(Map.of(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG, NativeRoundTripTest.LIBRARY.toString()));
        final GroupAssignment assignment = assignor.assign(group(6, 3, 12, 1), topology(12));
        final List<Integer> active = new ArrayList<>();
        final Set<String> members = new HashSet<>();
        assignment.members().forEach((id, m) -> {
            members.add(id);
            m.activeTasks().getOrDefault("0", Set.of()).forEach(active::add);
        });
        active.sort(null);
        final List<Integer> want = new ArrayList<>();
        for (int p = 0; p < 12; p++) {
            want.add(p);
        }
        assertEquals(want, active);
        assertEquals(6, members.size());
        // The caught-up process keeps its tasks; the other processes restore (standbys, warm-ups) first.
        final int standbys = assignment.members().values().stream().mapToInt(m -> m.standbyTasks().getOrDefault("0", Set.of()).size()).sum();
        assertTrue(standbys >= 12, standbys + " standbys");
        // A group with no members is refused with the engine's reason.
        final TaskAssignorException e = assertThrows(TaskAssignorException.class, () -> assignor.assign(group(0, 1, 4, 1), topology(4)));
        assertTrue(e.getMessage().contains("no process available"), e.getMessage());
    }

    /** The bound on extra copies the assignor sends when configured with {@code configs}. */
    static int sentBound(final Map<String, ?> configs) {
        final int[] sent = {-1};
        final OptimizedStreamsTaskAssignor assignor = new OptimizedStreamsTaskAssignor(CLOCK, bytes -> {
            // version, nowMs, numStandbyReplicas, then numWarmupReplicas at byte 16.
            sent[0] = ByteBuffer.wrap(bytes).getInt(16);
            return new byte[] {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 'o', 'k', 0, 0, 0, 0, 0, 0, 0, 0};
        });
        assignor.configure(configs);
        assignor.assign(group(2, 2, 4, 1), topology(4));
        return sent[0];
    }

    @Test
    void theBoundOnExtraCopiesIsTheBrokersNumWarmupReplicas() {
        final String key = OptimizedStreamsTaskAssignor.NUM_WARMUP_REPLICAS_CONFIG;
        assertEquals("group.streams.num.warmup.replicas", key);
        assertEquals(2, sentBound(Map.of()), "Kafka's default");
        assertEquals(0, sentBound(Map.of(key, "0")), "0 turns them off");
        assertEquals(5, sentBound(Map.of(key, 5)));
        assertEquals(7, sentBound(Map.of(key, " 7 ")));
        // Values Kafka's broker would refuse fall back to its default, with a warning.
        assertEquals(2, sentBound(Map.of(key, "-1")));
        assertEquals(2, sentBound(Map.of(key, "two")));
        assertEquals(2, sentBound(Map.of(key, Long.MAX_VALUE)));
    }

    @Test
    void theLogLineCountsTheExtraCopiesApartFromTheStandbysAskedFor() {
        assumeTrue(Files.isRegularFile(NativeRoundTripTest.LIBRARY), "no native library at " + NativeRoundTripTest.LIBRARY);
        NativeEngine.ensureLoaded(NativeRoundTripTest.LIBRARY.toString());
        // 100 one-member processes over 10 subtopologies of 100 tasks (500 stateful, one standby
        // each), a tenth of the members new; no copy counts as caught up (acceptable lag 0), so
        // standbys that move leave fresher copies behind.
        final GroupSpec spec = StreamsCancellationTest.group("log", 100, 1, 10, 100);
        final int[] extras = new int[3];
        final int[] bounds = {0, 2, 1_000};
        for (int i = 0; i < bounds.length; i++) {
            final StreamsCodec.Response r = StreamsCodec.readResponse(NativeEngine.assignStreams(StreamsCodec.writeRequest(CLOCK.millis(), spec,
                StreamsCancellationTest.topology(10, 100), new StreamsCodec.Warmups(bounds[i], 0L))));
            final int copies = r.assignment.members().values().stream()
                .mapToInt(m -> m.standbyTasks().values().stream().mapToInt(Set::size).sum()).sum();
            extras[i] = copies - 500;
            System.out.printf("bound %d: %s%n", bounds[i], r.summary);
            assertTrue(r.summary.startsWith("optimized: 1000 active tasks and 500 standbys (num.standby.replicas) over 100 members of 100 processes; "
                + extras[i] + " extra copies handed out as standbys (at most group.streams.num.warmup.replicas=" + bounds[i] + "): "), r.summary);
        }
        assertEquals(0, extras[0]);
        assertEquals(2, extras[1]);
        assertTrue(extras[2] > 2, extras[2] + " extra copies without a bound that binds");
    }
}
