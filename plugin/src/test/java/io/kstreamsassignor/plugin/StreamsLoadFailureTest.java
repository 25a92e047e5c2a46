package io.kstreamsassignor.plugin;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.junit.jupiter.api.Test;

/** A JVM of its own (surefire forks per class): no native library is loaded before this test. */
class StreamsLoadFailureTest {
    @Test
    void aLibraryThatDoesNotLoadBecomesATaskAssignorExceptionEveryTime() {
        final OptimizedStreamsTaskAssignor assignor = new OptimizedStreamsTaskAssignor();
        assignor.configure(Map.of(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG, "/nonexistent/libkstreams_assignor_jni.so"));
        for (int i = 0; i < 2; i++) {
            final TaskAssignorException e = assertThrows(TaskAssignorException.class,
                () -> assignor.assign(OptimizedStreamsTaskAssignorTest.group(2, 2, 4, 1), OptimizedStreamsTaskAssignorTest.topology(4)));
            assertTrue(e.getMessage().contains("could not be loaded from /nonexistent/"), e.getMessage());
        }
    }
}
