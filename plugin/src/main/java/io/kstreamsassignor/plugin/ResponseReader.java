package io.kstreamsassignor.plugin;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;

/**
 * Reads the engine's response (version 1 of the crossing format in docs/plugin.md) into a
 * {@link TaskAssignment}. Every count is checked against the bytes left before anything is
 * allocated; a malformed response fails with the field and its byte offset.
 */
public final class ResponseReader {
    /** The version of the crossing format this reader speaks. */
    public static final int VERSION = 1;

    private ResponseReader() {
    }

    /** One decoded response. */
    public static final class Response {
        private final TaskAssignment assignment;
        private final ProcessId followupClient;
        private final long followupDeadlineMs;
        private final String summary;
        private final String dump;
        private final long engineNanos;

        Response(final TaskAssignment assignment, final ProcessId followupClient, final long followupDeadlineMs,
                 final String summary, final String dump, final long engineNanos) {
            this.assignment = assignment;
            this.followupClient = followupClient;
            this.followupDeadlineMs = followupDeadlineMs;
            this.summary = summary;
            this.dump = dump;
            this.engineNanos = engineNanos;
        }

        /** The assignment, one {@link KafkaStreamsAssignment} per client of the response, in its order. */
        public TaskAssignment assignment() {
            return assignment;
        }

        /** The client that triggers the probing rebalance, or null when none is wanted. */
        public ProcessId followupClient() {
            return followupClient;
        }

        /** The probing rebalance's deadline (epoch ms); meaningful only with a {@link #followupClient}. */
        public long followupDeadlineMs() {
            return followupDeadlineMs;
        }

        /** The engine's one-line summary, for the log. */
        public String summary() {
            return summary;
        }

        /** The {@code assign --input} JSON of this rebalance, or null when it was not asked for. */
        public String dump() {
            return dump;
        }

        /** The time the bridge spent inside the engine, in nanoseconds. */
        public long engineNanos() {
            return engineNanos;
        }
    }

    /**
     * Decodes {@code bytes}.
     *
     * @throws IllegalArgumentException when the bytes are not a version-1 response
     */
    public static Response read(final byte[] bytes) {
        final Cursor in = new Cursor(bytes);
        final int version = in.int32("version");
        if (version != VERSION) {
            throw new IllegalArgumentException("response version " + version + " is not the " + VERSION + " this plugin reads");
        }
        final int clientCount = in.count("clients", 16 + 4 + 4);
        final Map<ProcessId, KafkaStreamsAssignment> clients = new LinkedHashMap<>();
        for (int i = 0; i < clientCount; i++) {
            final int at = in.position();
            final ProcessId processId = in.processId("clients[" + i + "].processId");
            final int activeAt = in.position();
            final long[] active = readKeys(in, "active", i);
            final int standbyAt = in.position();
            final long[] standby = readKeys(in, "standby", i);
            refuseRepeats(i, active, activeAt, standby, standbyAt);
            final AssignedTask[] tasks = new AssignedTask[active.length + standby.length];
            for (int k = 0; k < active.length; k++) {
                tasks[k] = new AssignedTask(taskId(active[k]), AssignedTask.Type.ACTIVE);
            }
            for (int k = 0; k < standby.length; k++) {
                tasks[active.length + k] = new AssignedTask(taskId(standby[k]), AssignedTask.Type.STANDBY);
            }
            if (clients.put(processId, KafkaStreamsAssignment.of(processId, new DistinctTasks(tasks))) != null) {
                throw new IllegalArgumentException("response: client " + processId + " at byte " + at + " is listed twice");
            }
        }
        final int present = in.int8("followup");
        ProcessId followupClient = null;
        long deadlineMs = 0;
        if (present == 1) {
            final int at = in.position();
            followupClient = in.processId("followup.processId");
            deadlineMs = in.int64("followup.deadlineMs");
            final KafkaStreamsAssignment client = clients.get(followupClient);
            if (client == null) {
                throw new IllegalArgumentException("response: the follow-up client " + followupClient + " at byte " + at
                    + " is not one of the assigned clients");
            }
            clients.put(followupClient, client.withFollowupRebalance(Instant.ofEpochMilli(deadlineMs)));
        } else if (present != 0) {
            throw new IllegalArgumentException("response: followup flag " + present + " at byte " + (in.position() - 1)
                + " is neither 0 nor 1");
        }
        final String summary = in.string("summary", false);
        final String dump = in.string("dump", true);
        final long engineNanos = in.int64("engineNanos");
        if (in.remaining() != 0) {
            throw new IllegalArgumentException("response: " + in.remaining() + " bytes after the end, at byte " + in.position());
        }
        return new Response(new TaskAssignment(new ArrayList<>(clients.values())), followupClient, deadlineMs,
            summary, dump, engineNanos);
    }

    private static TaskId taskId(final long key) {
        return new TaskId((int) (key >>> 32), (int) key);
    }

    /**
     * Tasks already known to be distinct ({@link #refuseRepeats}) as the {@code Set} that
     * {@code KafkaStreamsAssignment.of} reads once: no hashing on the way in.
     */
    private static final class DistinctTasks extends AbstractSet<AssignedTask> {
        private final AssignedTask[] tasks;

        DistinctTasks(final AssignedTask[] tasks) {
            this.tasks = tasks;
        }

        @Override
        public Iterator<AssignedTask> iterator() {
            return Arrays.asList(tasks).iterator();
        }

        @Override
        public int size() {
            return tasks.length;
        }
    }

    /** One task list of client {@code client}: each task as its key, subtopology in the high half. */
    private static long[] readKeys(final Cursor in, final String list, final int client) {
        final int count = in.count("clients[" + client + "]." + list, 8);
        final long[] keys = new long[count];
        for (int i = 0; i < count; i++) {
            final int at = in.position();
            final int subtopology = in.int32(list);
            final int partition = in.int32(list);
            if (subtopology < 0 || partition < 0) {
                throw new IllegalArgumentException("response: clients[" + client + "]." + list + "[" + i + "] at byte " + at
                    + " is the task " + subtopology + "_" + partition + ", which cannot exist");
            }
            keys[i] = ((long) subtopology << 32) | partition;
        }
        return keys;
    }

    /** Refuses a task given twice to one client, in one list or in both (a sort of primitive keys). */
    private static void refuseRepeats(final int client, final long[] active, final int activeAt,
                                      final long[] standby, final int standbyAt) {
        final long[] all = Arrays.copyOf(active, active.length + standby.length);
        System.arraycopy(standby, 0, all, active.length, standby.length);
        Arrays.sort(all);
        for (int i = 1; i < all.length; i++) {
            if (all[i] != all[i - 1]) {
                continue;
            }
            // Rare: say where, at the later of the two places in wire order.
            final int lists = active.length + standby.length;
            for (int k = 1; k < lists; k++) {
                final boolean isActive = k < active.length;
                final long key = isActive ? active[k] : standby[k - active.length];
                for (int j = 0; j < k; j++) {
                    if ((j < active.length ? active[j] : standby[j - active.length]) == key) {
                        final int index = isActive ? k : k - active.length;
                        throw new IllegalArgumentException("response: clients[" + client + "]." + (isActive ? "active" : "standby")
                            + "[" + index + "] at byte " + ((isActive ? activeAt : standbyAt) + 4 + 8 * index) + " gives task "
                            + (int) (key >>> 32) + "_" + (int) key + " to a client that already has it as "
                            + (j < active.length ? AssignedTask.Type.ACTIVE : AssignedTask.Type.STANDBY));
                    }
                }
            }
        }
    }

    private static final class Cursor {
        private final ByteBuffer buffer;

        Cursor(final byte[] bytes) {
            this.buffer = ByteBuffer.wrap(bytes);
        }

        int position() {
            return buffer.position();
        }

        int remaining() {
            return buffer.remaining();
        }

        private void need(final String field, final long bytes) {
            if (buffer.remaining() < bytes) {
                throw new IllegalArgumentException("response: " + field + " at byte " + buffer.position() + " needs "
                    + bytes + " bytes but only " + buffer.remaining() + " are left");
            }
        }

        int int8(final String field) {
            need(field, 1);
            return buffer.get();
        }

        int int32(final String field) {
            need(field, 4);
            return buffer.getInt();
        }

        long int64(final String field) {
            need(field, 8);
            return buffer.getLong();
        }

        /** A count of items of at least {@code minItemBytes} each, checked against the bytes left. */
        int count(final String field, final int minItemBytes) {
            final int at = buffer.position();
            final int count = int32(field);
            if (count < 0) {
                throw new IllegalArgumentException("response: " + field + " at byte " + at + " has the count " + count);
            }
            if ((long) count * minItemBytes > buffer.remaining()) {
                throw new IllegalArgumentException("response: " + field + " at byte " + at + " counts " + count
                    + " items but only " + buffer.remaining() + " bytes are left");
            }
            return count;
        }

        ProcessId processId(final String field) {
            need(field, 16);
            return new ProcessId(new UUID(buffer.getLong(), buffer.getLong()));
        }

        String string(final String field, final boolean nullable) {
            final int at = buffer.position();
            final int length = int32(field);
            if (length == -1 && nullable) {
                return null;
            }
            if (length < 0) {
                throw new IllegalArgumentException("response: " + field + " at byte " + at + " has the length " + length);
            }
            need(field, length);
            final byte[] utf8 = new byte[length];
            try {
                buffer.get(utf8);
            } catch (final BufferUnderflowException e) {
                throw new IllegalArgumentException("response: " + field + " at byte " + at + " is cut short", e);
            }
            return new String(utf8, StandardCharsets.UTF_8);
        }
    }

    /** The tasks of one type in {@code assignment}, for tests and tools. */
    public static List<TaskId> tasksOfType(final KafkaStreamsAssignment assignment, final AssignedTask.Type type) {
        final List<TaskId> out = new ArrayList<>();
        for (final AssignedTask task : assignment.tasks().values()) {
            if (task.type() == type) {
                out.add(task.id());
            }
        }
        out.sort(null);
        return out;
    }
}
