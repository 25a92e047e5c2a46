package io.kstreamsassignor.plugin;

import static io.kstreamsassignor.plugin.TestStates.hex;
import static io.kstreamsassignor.plugin.TestStates.pid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.junit.jupiter.api.Test;

class ResponseReaderTest {
    static final String RESPONSE =
        "00000001"                                      // version
            + "00000002"                                    // clients
            + "0000000000000000 0000000000000001"           // ...-0001
            + "00000001 | 00000000 00000001"                // active: 0_1
            + "00000000"                                    // standby: none
            + "0000000000000000 0000000000000002"           // ...-0002
            + "00000001 | 00000001 00000000"                // active: 1_0
            + "00000001 | 00000000 00000001"                // standby: 0_1
            + "01 | 0000000000000000 0000000000000002 | 000000000000ee48" // follow-up on ...-0002 at 61000
            + "00000002 6f6b"                               // summary "ok"
            + "ffffffff"                                    // dump: null
            + "0000000000003039";                           // engineNanos 12345

    @Test
    void readsTheDocumentedLayout() {
        final ResponseReader.Response response = ResponseReader.read(hex(RESPONSE));

        final Map<ProcessId, KafkaStreamsAssignment> byClient = new HashMap<>();
        for (final KafkaStreamsAssignment a : response.assignment().assignment()) {
            byClient.put(a.processId(), a);
        }
        assertEquals(2, byClient.size());
        final KafkaStreamsAssignment first = byClient.get(pid(1));
        assertEquals(Collections.singletonList(new TaskId(0, 1)), ResponseReader.tasksOfType(first, AssignedTask.Type.ACTIVE));
        assertEquals(Collections.emptyList(), ResponseReader.tasksOfType(first, AssignedTask.Type.STANDBY));
        assertEquals(Optional.empty(), first.followupRebalanceDeadline());
        final KafkaStreamsAssignment second = byClient.get(pid(2));
        assertEquals(Collections.singletonList(new TaskId(1, 0)), ResponseReader.tasksOfType(second, AssignedTask.Type.ACTIVE));
        assertEquals(Arrays.asList(new TaskId(0, 1)), ResponseReader.tasksOfType(second, AssignedTask.Type.STANDBY));
        assertEquals(Optional.of(Instant.ofEpochMilli(61_000)), second.followupRebalanceDeadline());
        assertEquals(pid(2), response.followupClient());
        assertEquals(61_000L, response.followupDeadlineMs());
        assertEquals("ok", response.summary());
        assertNull(response.dump());
        assertEquals(12_345L, response.engineNanos());
    }

    @Test
    void readsADump() {
        final ResponseReader.Response response = ResponseReader.read(hex(
            "00000001 | 00000000 | 00 | 00000000 | 00000002 7b7d | 0000000000000000"));
        assertEquals("", response.summary());
        assertEquals("{}", response.dump());
        assertNull(response.followupClient());
        assertTrue(response.assignment().assignment().isEmpty());
    }

    @Test
    void namesTheFieldAndOffsetOfACutResponse() {
        final String cut = RESPONSE.replaceAll("[\\s|]", "");
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ResponseReader.read(hex(cut.substring(0, cut.length() - 4))));
        assertTrue(e.getMessage().contains("engineNanos at byte"), e.getMessage());
    }

    @Test
    void refusesACountLargerThanTheBytesLeft() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ResponseReader.read(hex("00000001 | 7fffffff | 00")));
        assertTrue(e.getMessage().contains("clients at byte 4 counts 2147483647 items"), e.getMessage());
    }

    @Test
    void refusesTrailingBytesAnotherVersionAndAnUnknownFollowupClient() {
        assertThrows(IllegalArgumentException.class,
            () -> ResponseReader.read(hex("00000001 | 00000000 | 00 | 00000000 | ffffffff | 0000000000000000 | 00")));
        assertThrows(IllegalArgumentException.class,
            () -> ResponseReader.read(hex("00000002 | 00000000 | 00 | 00000000 | ffffffff | 0000000000000000")));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ResponseReader.read(hex(
            "00000001 | 00000000 | 01 | 0000000000000000 0000000000000009 | 0000000000000001 | 00000000 | ffffffff | 0000000000000000")));
        assertTrue(e.getMessage().contains("not one of the assigned clients"), e.getMessage());
    }

    @Test
    void refusesATaskGivenTwiceToOneClient() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ResponseReader.read(hex(
            "00000001 | 00000001 | 0000000000000000 0000000000000001 | 00000001 00000000 00000000"
                + "| 00000001 00000000 00000000 | 00 | 00000000 | ffffffff | 0000000000000000")));
        assertTrue(e.getMessage().contains("already has it as ACTIVE"), e.getMessage());
    }

    @Test
    void refusesATaskListedTwiceAsStandbyAndSaysWhere() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ResponseReader.read(hex(
            "00000001 | 00000001 | 0000000000000000 0000000000000001 | 00000000"
                + "| 00000002 00000001 00000003 00000001 00000003 | 00 | 00000000 | ffffffff | 0000000000000000")));
        assertTrue(e.getMessage().contains("clients[0].standby[1] at byte 40 gives task 1_3 to a client that already has it as STANDBY"),
            e.getMessage());
    }
}
