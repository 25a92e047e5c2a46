package io.kstreamsassignor.plugin;

import static io.kstreamsassignor.plugin.TestStates.pid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.AssignmentError;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OptimizedTaskAssignorTest {

    static TestStates.State state() {
        final TestStates.State state = new TestStates.State(TestStates.configs(1, "none"));
        for (int p = 0; p < 4; p++) {
            state.task(new TestStates.Task(new TaskId(0, p), true).partition("store-changelog", p, false, true, null));
            state.task(new TestStates.Task(new TaskId(1, p), false));
        }
        for (int c = 1; c <= 3; c++) {
            final TestStates.Client client = new TestStates.Client(pid(c), 2);
            for (int p = 0; p < 4; p++) {
                client.lags.put(new TaskId(0, p), p % 3 == c - 1 ? -2L : 50L * c);
                if (p % 3 == c - 1) {
                    client.active.add(new TaskId(0, p));
                }
            }
            state.client(client);
        }
        return state;
    }

    static Map<ProcessId, Map<TaskId, AssignedTask.Type>> byClient(final TaskAssignment assignment) {
        final Map<ProcessId, Map<TaskId, AssignedTask.Type>> out = new TreeMap<>();
        for (final KafkaStreamsAssignment client : assignment.assignment()) {
            final Map<TaskId, AssignedTask.Type> tasks = new TreeMap<>();
            client.tasks().forEach((id, task) -> tasks.put(id, task.type()));
            out.put(client.processId(), tasks);
        }
        return out;
    }

    @Test
    void fallsBackToKafkasStickyAssignorWhenTheLibraryIsMissing(@TempDir final Path dir) {
        final Map<String, Object> configs = new HashMap<>();
        configs.put("application.id", "fallback-test");
        configs.put(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG, dir.resolve("no-such-library.so").toString());
        configs.put(OptimizedTaskAssignor.DUMP_DIR_CONFIG, dir.resolve("dumps").toString());

        final TestStates.State state = state();
        final PrintStream stderr = System.err;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final TaskAssignment assignment;
        final TaskAssignment again;
        final OptimizedTaskAssignor assignor = new OptimizedTaskAssignor();
        final OptimizedTaskAssignor second = new OptimizedTaskAssignor();
        try {
            System.setErr(new PrintStream(captured, true, "UTF-8"));
            assignor.configure(configs);
            assignment = assignor.assign(state);
            second.configure(configs);
            again = second.assign(state);
        } catch (final java.io.UnsupportedEncodingException e) {
            throw new AssertionError(e);
        } finally {
            System.setErr(stderr);
        }

        final StickyTaskAssignor sticky = new StickyTaskAssignor();
        sticky.configure(configs);
        final TaskAssignment expected = sticky.assign(state);
        assertEquals(byClient(expected), byClient(assignment));
        assertEquals(byClient(expected), byClient(again));
        assertEquals(AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(state, assignment));

        assertTrue(assignor.lastOutcome().fellBack());
        final String log = new String(captured.toByteArray(), StandardCharsets.UTF_8);
        final String[] errors = log.lines().filter(l -> l.contains("ERROR")).toArray(String[]::new);
        assertEquals(2, errors.length, log);
        for (final String error : errors) {
            assertTrue(error.contains("the native engine could not be loaded from " + dir.resolve("no-such-library.so")), error);
            assertTrue(error.contains("this rebalance uses Kafka's StickyTaskAssignor"), error);
        }
        assertTrue(errors[0].contains("UnsatisfiedLinkError"), errors[0]);
        assertEquals(assignor.lastOutcome().fallbackReason(), second.lastOutcome().fallbackReason());
    }

    @Test
    void logsAnAssignmentErrorKafkaReports() {
        final PrintStream stderr = System.err;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(captured, true, "UTF-8"));
            final OptimizedTaskAssignor assignor = new OptimizedTaskAssignor();
            assignor.onAssignmentComputed(null, null, AssignmentError.NONE);
            assignor.onAssignmentComputed(null, null, AssignmentError.UNKNOWN_TASK_ID);
        } catch (final java.io.UnsupportedEncodingException e) {
            throw new AssertionError(e);
        } finally {
            System.setErr(stderr);
        }
        final String log = new String(captured.toByteArray(), StandardCharsets.UTF_8);
        assertEquals(1, log.lines().filter(l -> l.contains("ERROR")).count(), log);
        assertTrue(log.contains("UNKNOWN_TASK_ID"), log);
    }
}
