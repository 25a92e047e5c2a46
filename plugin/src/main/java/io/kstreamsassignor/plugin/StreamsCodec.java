package io.kstreamsassignor.plugin;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
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
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;

/**
 * The streams layout of docs/plugin.md ("The broker assignor"): a {@link GroupSpec} with its
 * {@link TopologyDescriber} as request bytes, and the response bytes as a {@link GroupAssignment}
 * (warm-ups handed out as standbys: the API's assignment has no warm-up field).
 */
public final class StreamsCodec {
    /** The layout version; the native library refuses any other. */
    public static final int VERSION = 1;

    private StreamsCodec() {
    }

    /** The broker's warm-up settings, which the API's {@link AssignmentConfigs} does not carry. */
    public static final class Warmups {
        final int numWarmupReplicas;
        final long acceptableRecoveryLag;

        /** {@code group.streams.num.warmup.replicas} and {@code group.streams.acceptable.recovery.lag}. */
        public Warmups(final int numWarmupReplicas, final long acceptableRecoveryLag) {
            this.numWarmupReplicas = numWarmupReplicas;
            this.acceptableRecoveryLag = acceptableRecoveryLag;
        }
    }

    /** The request bytes of one call. */
    public static byte[] writeRequest(final long nowMs, final GroupSpec spec, final TopologyDescriber topology, final Warmups warmups) {
        final Out out = new Out();
        final AssignmentConfigs configs = spec.configs();
        out.i32(VERSION);
        out.i64(nowMs);
        out.i32(configs.numStandbyReplicas());
        out.i32(warmups.numWarmupReplicas);
        out.i64(warmups.acceptableRecoveryLag);
        final List<String> tags = configs.rackAwareAssignmentTags() == null ? List.of() : configs.rackAwareAssignmentTags();
        out.i32(tags.size());
        tags.forEach(out::string);
        final List<String> subtopologies = topology.subtopologies();
        out.i32(subtopologies.size());
        for (final String id : subtopologies) {
            out.string(id);
            out.i32(topology.maxNumInputPartitions(id));
            out.i8(topology.isStateful(id) ? 1 : 0);
        }
        final List<String> members = new ArrayList<>(spec.memberIds());
        out.i32(members.size());
        for (final String id : members) {
            final MemberAssignmentMetadata meta = spec.memberMetadata(id);
            final MemberAssignmentState state = spec.memberAssignmentState(id);
            out.string(id);
            out.string(meta.processId());
            out.nullable(meta.instanceId());
            out.nullable(meta.rackId());
            final Map<String, String> clientTags = meta.clientTags() == null ? Map.of() : meta.clientTags();
            out.i32(clientTags.size());
            clientTags.forEach((k, v) -> {
                out.string(k);
                out.string(v);
            });
            out.tasks(state.activeTasks());
            out.tasks(state.standbyTasks());
            out.tasks(state.warmupTasks());
            out.offsets(state.taskOffsets());
            out.offsets(state.taskEndOffsets());
        }
        return out.bytes();
    }

    /** The native library's answer: the assignment, its log line and the engine's nanoseconds. */
    public static final class Response {
        /** Every member's tasks, warm-ups among the standbys. */
        public final GroupAssignment assignment;
        /** The engine's warm-up tasks, counted over the group. */
        public final int warmups;
        /** One line for the log. */
        public final String summary;
        /** The engine's time in nanoseconds. */
        public final long engineNanos;

        Response(final GroupAssignment assignment, final int warmups, final String summary, final long engineNanos) {
            this.assignment = assignment;
            this.warmups = warmups;
            this.summary = summary;
            this.engineNanos = engineNanos;
        }
    }

    /**
     * Reads response bytes.
     *
     * @throws IllegalArgumentException when they do not follow the layout
     */
    public static Response readResponse(final byte[] bytes) {
        final ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            final int version = in.getInt();
            if (version != VERSION) {
                throw new IllegalArgumentException("response layout version " + version + ", expected " + VERSION);
            }
            final int n = count(in, 16);
            final Map<String, MemberAssignment> members = new HashMap<>(n * 2);
            int warmups = 0;
            for (int i = 0; i < n; i++) {
                final String id = string(in);
                final Map<String, Set<Integer>> active = tasks(in);
                final Map<String, Set<Integer>> standby = tasks(in);
                final Map<String, Set<Integer>> warmup = tasks(in);
                for (final Map.Entry<String, Set<Integer>> e : warmup.entrySet()) {
                    warmups += e.getValue().size();
                    standby.computeIfAbsent(e.getKey(), k -> new TreeSet<>()).addAll(e.getValue());
                }
                members.put(id, new MemberAssignment(active, standby));
            }
            final String summary = string(in);
            final long nanos = in.getLong();
            if (in.hasRemaining()) {
                throw new IllegalArgumentException(in.remaining() + " byte(s) after the response at byte " + in.position());
            }
            return new Response(new GroupAssignment(members), warmups, summary, nanos);
        } catch (final BufferUnderflowException e) {
            throw new IllegalArgumentException("the response ends early at byte " + in.position(), e);
        }
    }

    private static int count(final ByteBuffer in, final int minSize) {
        final int at = in.position();
        final int n = in.getInt();
        if (n < 0 || (long) n * minSize > in.remaining()) {
            throw new IllegalArgumentException("count " + n + " at byte " + at + " does not fit the " + in.remaining() + " byte(s) left");
        }
        return n;
    }

    private static String string(final ByteBuffer in) {
        final int len = count(in, 1);
        final String s = new String(in.array(), in.position(), len, StandardCharsets.UTF_8);
        in.position(in.position() + len);
        return s;
    }

    private static Map<String, Set<Integer>> tasks(final ByteBuffer in) {
        final int n = count(in, 8);
        final Map<String, Set<Integer>> tasks = new HashMap<>(n * 2);
        for (int i = 0; i < n; i++) {
            final String id = string(in);
            final int k = count(in, 4);
            final Set<Integer> partitions = new HashSet<>(k * 2);
            for (int j = 0; j < k; j++) {
                partitions.add(in.getInt());
            }
            tasks.put(id, partitions);
        }
        return tasks;
    }

    /** A growing big-endian buffer. */
    private static final class Out {
        private ByteBuffer buf = ByteBuffer.allocate(1 << 12);

        private void room(final int n) {
            if (buf.remaining() < n) {
                final ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + n));
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
        }

        void i8(final int v) {
            room(1);
            buf.put((byte) v);
        }

        void i32(final int v) {
            room(4);
            buf.putInt(v);
        }

        void i64(final long v) {
            room(8);
            buf.putLong(v);
        }

        void string(final String s) {
            final byte[] b = s.getBytes(StandardCharsets.UTF_8);
            room(4 + b.length);
            buf.putInt(b.length);
            buf.put(b);
        }

        void nullable(final Optional<String> s) {
            if (s != null && s.isPresent()) {
                string(s.get());
            } else {
                i32(-1);
            }
        }

        void tasks(final Map<String, Set<Integer>> tasks) {
            final Map<String, Set<Integer>> t = tasks == null ? Collections.emptyMap() : tasks;
            i32(t.size());
            for (final Map.Entry<String, Set<Integer>> e : t.entrySet()) {
                string(e.getKey());
                room(4 + 4 * e.getValue().size());
                buf.putInt(e.getValue().size());
                for (final int p : e.getValue()) {
                    buf.putInt(p);
                }
            }
        }

        void offsets(final Map<String, Map<Integer, Long>> offsets) {
            final Map<String, Map<Integer, Long>> o = offsets == null ? Collections.emptyMap() : offsets;
            i32(o.size());
            for (final Map.Entry<String, Map<Integer, Long>> e : o.entrySet()) {
                string(e.getKey());
                room(4 + 12 * e.getValue().size());
                buf.putInt(e.getValue().size());
                for (final Map.Entry<Integer, Long> p : e.getValue().entrySet()) {
                    buf.putInt(p.getKey());
                    buf.putLong(p.getValue());
                }
            }
        }

        byte[] bytes() {
            final byte[] b = new byte[buf.position()];
            buf.flip();
            buf.get(b);
            return b;
        }
    }
}
