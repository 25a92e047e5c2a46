package io.kstreamsassignor.bench.streams;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.streams.TasksTuple;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What an answer is worth beside its time.
 *
 * @param moves          active tasks whose member differs from the previous target's (-1: no previous)
 * @param spread         max − min active tasks per member
 * @param statefulSpread max − min stateful active tasks per member
 * @param extraCopies    standby copies (the API carries warm-ups as standbys) beyond
 *                       {@code num.standby.replicas} × stateful tasks; negative when some are missing
 * @param problems       tasks without exactly one active member, and standbys on the process of
 *                       their own active (0 for a valid answer)
 */
record Quality(int moves, int spread, int statefulSpread, long extraCopies, int problems) {

    static Quality of(final GroupAssignment answer, final GroupSpec spec, final Groups.Size size,
                      final Map<String, TasksTuple> previous) {
        final int tasks = size.tasks();
        final Map<String, Integer> index = new HashMap<>();
        final String[] process = new String[spec.memberIds().size()];
        for (final String id : spec.memberIds()) {
            process[index.size()] = spec.memberMetadata(id).processId();
            index.put(id, index.size());
        }
        final int[] owner = new int[tasks];
        Arrays.fill(owner, -1);
        final int[] active = new int[process.length];
        final int[] stateful = new int[process.length];
        int problems = 0;
        for (final Map.Entry<String, MemberAssignment> e : answer.members().entrySet()) {
            final Integer m = index.get(e.getKey());
            if (m == null) {
                problems++;
                continue;
            }
            for (final Map.Entry<String, Set<Integer>> sub : e.getValue().activeTasks().entrySet()) {
                final int s = Integer.parseInt(sub.getKey());
                for (final int p : sub.getValue()) {
                    final int t = s * Groups.PARTITIONS + p;
                    if (owner[t] != -1) {
                        problems++;
                    }
                    owner[t] = m;
                    active[m]++;
                    if (s % 2 == 1) {
                        stateful[m]++;
                    }
                }
            }
        }
        for (final int o : owner) {
            if (o == -1) {
                problems++;
            }
        }
        long copies = 0;
        for (final Map.Entry<String, MemberAssignment> e : answer.members().entrySet()) {
            final Integer m = index.get(e.getKey());
            if (m == null) {
                continue;
            }
            for (final Map.Entry<String, Set<Integer>> sub : e.getValue().standbyTasks().entrySet()) {
                final int s = Integer.parseInt(sub.getKey());
                for (final int p : sub.getValue()) {
                    copies++;
                    final int o = owner[s * Groups.PARTITIONS + p];
                    if (o != -1 && process[o].equals(process[m])) {
                        problems++;
                    }
                }
            }
        }
        int moves = -1;
        if (!previous.isEmpty()) {
            moves = 0;
            for (final Map.Entry<String, TasksTuple> e : previous.entrySet()) {
                final Integer m = index.get(e.getKey());
                for (final Map.Entry<String, Set<Integer>> sub : e.getValue().activeTasks().entrySet()) {
                    final int s = Integer.parseInt(sub.getKey());
                    for (final int p : sub.getValue()) {
                        if (m == null || owner[s * Groups.PARTITIONS + p] != m) {
                            moves++;
                        }
                    }
                }
            }
        }
        return new Quality(moves, spread(active), spread(stateful),
            copies - Long.parseLong(Groups.STANDBYS) * size.statefulTasks(), problems);
    }

    private static int spread(final int[] counts) {
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;
        for (final int c : counts) {
            min = Math.min(min, c);
            max = Math.max(max, c);
        }
        return counts.length == 0 ? 0 : max - min;
    }
}
