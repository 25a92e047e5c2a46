package io.kstreamsassignor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.AssignmentError;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the real native library, when the build has one (skipped otherwise). */
class NativeRoundTripTest {
    static final Path LIBRARY = Paths.get(System.getProperty("native.library",
        "../target/release/libkstreams_assignor_jni.so")).toAbsolutePath().normalize();

    @Test
    void assignsThroughTheNativeEngineAndWritesTheDump(@TempDir final Path dir) throws Exception {
        assumeTrue(Files.isRegularFile(LIBRARY), "no native library at " + LIBRARY);
        final Map<String, Object> configs = new HashMap<>();
        configs.put("application.id", "round-trip");
        configs.put(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG, LIBRARY.toString());
        configs.put(OptimizedTaskAssignor.DUMP_DIR_CONFIG, dir.resolve("dumps").toString());
        final OptimizedTaskAssignor assignor =
            new OptimizedTaskAssignor(Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC));
        assignor.configure(configs);

        final TestStates.State state = OptimizedTaskAssignorTest.state();
        final TaskAssignment assignment = assignor.assign(state);

        final OptimizedTaskAssignor.Outcome outcome = assignor.lastOutcome();
        assertFalse(outcome.fellBack(), outcome.fallbackReason());
        assertEquals(AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(state, assignment));
        assertEquals(3, assignment.assignment().size());
        assertTrue(outcome.response().summary().contains("over 3 clients"), outcome.response().summary());
        assertEquals(dir.resolve("dumps").resolve("round-trip-1700000000000.json"), outcome.dumpFile());
        final String dump = new String(Files.readAllBytes(outcome.dumpFile()), StandardCharsets.UTF_8);
        assertTrue(dump.startsWith("{"), dump);
        assertNotNull(NativeEngine.version());
        assertTrue(Arrays.asList(NativeEngine.configKeys()).contains("num.standby.replicas"));
    }

    @Test
    void theEngineRefusesAMalformedRequestWithItsException() {
        assumeTrue(Files.isRegularFile(LIBRARY), "no native library at " + LIBRARY);
        NativeEngine.ensureLoaded(LIBRARY.toString());
        final NativeEngineException e = assertThrows(NativeEngineException.class,
            () -> NativeEngine.assign(new byte[] {0, 0, 0, 1, 0, 0, 0x7f}));
        assertTrue(e.getMessage().contains("malformed"), e.getMessage());
    }

    private static OptimizedTaskAssignor assignor(final Map<String, Object> extra) {
        final Map<String, Object> configs = new HashMap<>(extra);
        configs.put("application.id", "round-trip-errors");
        configs.put(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG, LIBRARY.toString());
        final OptimizedTaskAssignor assignor = new OptimizedTaskAssignor();
        assignor.configure(configs);
        return assignor;
    }

    @Test
    void fallsBackWhenTheEngineRefusesAConfig() {
        assumeTrue(Files.isRegularFile(LIBRARY), "no native library at " + LIBRARY);
        NativeEngine.ensureLoaded(LIBRARY.toString());
        assumeTrue(Arrays.asList(NativeEngine.configKeys()).contains("stream.imbalance.percentage"));
        final OptimizedTaskAssignor assignor = assignor(Map.of("stream.imbalance.percentage", "101"));
        final TestStates.State state = OptimizedTaskAssignorTest.state();
        final TaskAssignment assignment = assignor.assign(state);
        final OptimizedTaskAssignor.Outcome outcome = assignor.lastOutcome();
        assertTrue(outcome.fellBack());
        assertTrue(outcome.fallbackReason().startsWith("the native engine could not assign this rebalance: "),
            outcome.fallbackReason());
        assertTrue(outcome.fallbackReason().contains("stream.imbalance.percentage"), outcome.fallbackReason());
        assertEquals(AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(state, assignment));
    }

    @Test
    void fallsBackOnANamedTopology() {
        assumeTrue(Files.isRegularFile(LIBRARY), "no native library at " + LIBRARY);
        final TestStates.State state = new TestStates.State(TestStates.configs(0, "none"))
            .task(new TestStates.Task(new org.apache.kafka.streams.processor.TaskId(0, 0, "orders"), false))
            .client(new TestStates.Client(TestStates.pid(1), 1));
        final OptimizedTaskAssignor assignor = assignor(Map.of());
        assignor.assign(state);
        final OptimizedTaskAssignor.Outcome outcome = assignor.lastOutcome();
        assertTrue(outcome.fellBack());
        assertTrue(outcome.fallbackReason().contains("named topologies are not supported"), outcome.fallbackReason());
    }

    @Test
    void aDumpThatCannotBeWrittenDoesNotFailTheRebalance(@TempDir final Path dir) throws Exception {
        assumeTrue(Files.isRegularFile(LIBRARY), "no native library at " + LIBRARY);
        final Path notADirectory = Files.createFile(dir.resolve("a-file"));
        final OptimizedTaskAssignor assignor = assignor(Map.of(OptimizedTaskAssignor.DUMP_DIR_CONFIG, notADirectory.toString()));
        final TestStates.State state = OptimizedTaskAssignorTest.state();
        final TaskAssignment assignment = assignor.assign(state);
        final OptimizedTaskAssignor.Outcome outcome = assignor.lastOutcome();
        assertFalse(outcome.fellBack(), outcome.fallbackReason());
        assertEquals(null, outcome.dumpFile());
        assertNotNull(outcome.response().dump());
        assertEquals(AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(state, assignment));
    }
}
