package io.kstreamsassignor.bench.streams;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.streams.MemberTaskOffsets;
import org.apache.kafka.coordinator.group.streams.StreamsGroupMember;
import org.apache.kafka.coordinator.group.streams.TasksTuple;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The benchmark's cells: a size, a number of members per process and a case, made into what the
 * coordinator hands an assignor.
 *
 * <ul>
 *   <li>{@code cold}: the members, no previous assignment, no offsets;</li>
 *   <li>{@code warm}: the previous assignment is sticky's own target for the group, and one new
 *       member joins on a new process;</li>
 *   <li>{@code warm-offsets}: as {@code warm}, and the members report task offsets (lags) for
 *       the stateful tasks they hold;</li>
 *   <li>{@code warm-own}: as {@code warm-offsets}, but the previous assignment is
 *       {@code optimized}'s own answer for the group;</li>
 *   <li>{@code stable-own}: the group of {@code warm-own} before its newcomer joins.</li>
 * </ul>
 */
final class Cells {
    static final List<String> CASES = List.of("cold", "warm", "warm-offsets", "warm-own");
    static final String OPTIMIZED_CLASS = "io.kstreamsassignor.plugin.OptimizedStreamsTaskAssignor";

    /** A cell: the call and the previous target (empty when cold). */
    record Cell(Groups.Call call, Map<String, TasksTuple> previous) {
    }

    private final Map<String, Map<String, TasksTuple>> previousTargets = new HashMap<>();
    private final TaskAssignor sticky;
    private final TaskAssignor optimized;

    Cells(final TaskAssignor sticky, final TaskAssignor optimized) {
        this.sticky = sticky;
        this.optimized = optimized;
    }

    static TaskAssignor newSticky() {
        return new StickyTaskAssignor();
    }

    /**
     * The plugin's broker assignor as the broker makes it (public no-argument constructor, then
     * {@code configure} with the broker's configs), loaded by name from the plugin jar on the
     * class path.
     */
    static TaskAssignor newOptimized(final long timeoutMs) {
        try {
            final TaskAssignor assignor = (TaskAssignor) Class.forName(OPTIMIZED_CLASS).getConstructor().newInstance();
            final Map<String, Object> configs = new HashMap<>();
            configs.put("kstreams.assignor.streams.timeout.ms", Long.toString(timeoutMs));
            final String library = System.getProperty("kstreams.assignor.native.library");
            if (library != null && !library.isEmpty()) {
                configs.put("kstreams.assignor.native.library", library);
            }
            ((Configurable) assignor).configure(configs);
            return assignor;
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException("cannot load " + OPTIMIZED_CLASS + " (is the plugin jar on the class path?)", e);
        }
    }

    /** The previous target of a warm case: sticky's (or optimized's) answer for the group without the newcomer. */
    Map<String, TasksTuple> previous(final Groups.Size size, final int perProcess, final boolean own, final String processPrefix) {
        final String key = size.members() + "x" + size.tasks() + "/" + perProcess + "/" + (own ? "own" : "sticky");
        return previousTargets.computeIfAbsent(key, k -> {
            final Map<String, StreamsGroupMember> members = Groups.members(size, perProcess, processPrefix, Map.of(), false);
            final Map<String, MemberTaskOffsets> offsets = Groups.offsets(members, false);
            if (!own) {
                return Groups.target(sticky, size, members, offsets, Map.of());
            }
            // optimized's answer to the cold group, taken as the coordinator's target.
            final Groups.Call call = Groups.capture(size, members, offsets, Map.of());
            return Groups.asTarget(optimized.assign(call.spec(), call.topology()));
        });
    }

    Cell cell(final Groups.Size size, final int perProcess, final String kase, final String processPrefix) {
        final Map<String, TasksTuple> previous;
        final boolean newcomer;
        final boolean withOffsets;
        switch (kase) {
            case "cold":
                previous = Map.of();
                newcomer = false;
                withOffsets = false;
                break;
            case "warm":
                previous = previous(size, perProcess, false, processPrefix);
                newcomer = true;
                withOffsets = false;
                break;
            case "warm-offsets":
                previous = previous(size, perProcess, false, processPrefix);
                newcomer = true;
                withOffsets = true;
                break;
            case "warm-own":
                previous = previous(size, perProcess, true, processPrefix);
                newcomer = true;
                withOffsets = true;
                break;
            case "stable-own":
                // The group before the newcomer of warm-own joins: optimized's own target, offsets.
                previous = previous(size, perProcess, true, processPrefix);
                newcomer = false;
                withOffsets = true;
                break;
            default:
                throw new IllegalArgumentException("unknown case " + kase + " (one of " + CASES + ")");
        }
        final Map<String, StreamsGroupMember> members = Groups.members(size, perProcess, processPrefix, previous, newcomer);
        final Map<String, MemberTaskOffsets> offsets = Groups.offsets(members, withOffsets);
        return new Cell(Groups.capture(size, members, offsets, previous), previous);
    }
}
