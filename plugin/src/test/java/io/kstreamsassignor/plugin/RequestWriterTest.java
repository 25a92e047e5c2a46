package io.kstreamsassignor.plugin;

import static io.kstreamsassignor.plugin.TestStates.hex;
import static io.kstreamsassignor.plugin.TestStates.pid;
import static io.kstreamsassignor.plugin.TestStates.toHex;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.junit.jupiter.api.Test;

class RequestWriterTest {

    @Test
    void writesTheDocumentedLayout() {
        final TestStates.Client first = new TestStates.Client(pid(1), 2);
        first.rack = "r1";
        first.tags.put("z", "a");
        first.active.add(new TaskId(0, 1));
        first.lags.put(new TaskId(0, 1), -2L);
        first.lags.put(new TaskId(0, 2), 500L);   // not reported by it: the unreported lag of 0_2
        final TestStates.Client second = new TestStates.Client(pid(2), 1);
        second.standby.add(new TaskId(0, 1));
        second.lags = null; // lags not computed: lagCount -1
        final TestStates.State state = new TestStates.State(TestStates.configs(1, "none"))
            .task(new TestStates.Task(new TaskId(1, 0), false).partition("in", 0, true, false, Collections.singleton("r1")))
            .task(new TestStates.Task(new TaskId(0, 1), true).partition("in", 1, true, false, Collections.singleton("r1"))
                .partition("store-changelog", 1, false, true, null))
            .task(new TestStates.Task(new TaskId(0, 2), true).partition("store-changelog", 2, false, true, null))
            .task(new TestStates.Task(new TaskId(0, 3), true)) // a store without a changelog: no lags
            .client(second)
            .client(first);
        final Map<String, String> configs = new LinkedHashMap<>();
        configs.put("k", "v");

        final byte[] bytes = RequestWriter.write(state, "app", 1000L, RequestWriter.FLAG_DUMP, configs);

        final byte[] expected = hex(
            "00000001"                                  // version
                + "00000003 617070"                         // applicationId "app"
                + "00000000000003e8"                        // nowMs 1000
                + "01"                                      // flags: dump
                + "00000001 | 00000001 6b | 00000001 76"    // configs: k=v
                + "00000004"                                // tasks
                + "00000000 00000001 | 01 | ffffffffffffffff | 00000000" // 0_1 stateful, every client reported it,
                                                                          // no partitions (strategy none)
                + "00000000 00000002 | 01 | 00000000000001f4 | 00000000" // 0_2: lagFor of ...-0001, which did not report it
                + "00000000 00000003 | 01 | ffffffffffffffff | 00000000" // 0_3: stateful without a changelog
                + "00000001 00000000 | 00 | ffffffffffffffff | 00000000" // 1_0 stateless
                + "00000002"                                // clients, by process id
                + "0000000000000000 0000000000000001"       // process id ...-0001
                + "00000002"                                // threads
                + "00000002 7231"                           // rack "r1"
                + "00000001 | 00000001 7a | 00000001 61"    // tags z=a
                + "00000001 | 00000000 00000001"            // previous active: 0_1
                + "00000000"                                // previous standby: none
                + "00000001 | 00000000 00000001 fffffffffffffffe" // lags of the reported tasks: 0_1 -> -2
                + "0000000000000000 0000000000000002"       // process id ...-0002
                + "00000001"                                // threads
                + "ffffffff"                                // rack: null
                + "00000000"                                // tags: none
                + "00000000"                                // previous active: none
                + "00000001 | 00000000 00000001"            // previous standby: 0_1
                + "ffffffff");                              // lags not computed
        assertEquals(toHex(expected), toHex(bytes));
    }

    @Test
    void writesPartitionsWithRacksWhenRackAware() {
        final Set<String> racks = new TreeSet<>(Arrays.asList("r2", "r1"));
        final TestStates.State state = new TestStates.State(TestStates.configs(0, "min_traffic"))
            .task(new TestStates.Task(new TaskId(0, 0), true)
                .partition("b", 0, false, true, racks)
                .partition("a", 0, true, false, null));

        final byte[] bytes = RequestWriter.write(state, "", 0L, 0, Collections.emptyMap());

        final byte[] expected = hex(
            "00000001 | 00000000 | 0000000000000000 | 00 | 00000000"   // version, "", nowMs 0, flags 0, no configs
                + "00000001 | 00000000 00000000 | 01"                   // one task, 0_0 stateful
                + "ffffffffffffffff"                                     // no client left it unreported
                + "00000002"                                             // two partitions, by topic
                + "01 | ffffffff"                                        // a-0: source, racks unknown
                + "02 | 00000002 | 00000002 7231 | 00000002 7232"        // b-0: changelog, racks r1 r2
                + "00000000");                                           // no clients
        assertEquals(toHex(expected), toHex(bytes));
    }

    @Test
    void sendsKafkasConfigsAndTheEngineKeysItWasConfiguredWith() {
        final AssignmentConfigs configs = new AssignmentConfigs(10_000L, 3, 2, 120_000L, Arrays.asList("zone", "rack"),
            OptionalInt.of(7), OptionalInt.empty(), "balance_subtopology");
        final Map<String, Object> configured = new HashMap<>();
        configured.put("num.standby.replicas", 9);               // Kafka's value wins
        configured.put("stream.imbalance.percentage", 10);
        configured.put("max.spare.replicas", Arrays.asList("1"));
        configured.put("not.an.engine.key", "x");
        final List<String> engineKeys = Arrays.asList("num.standby.replicas", "stream.imbalance.percentage",
            "max.spare.replicas", "unset.engine.key");

        final Map<String, String> out = RequestWriter.configs(configs, configured, engineKeys);

        final Map<String, String> expected = new LinkedHashMap<>();
        expected.put("acceptable.recovery.lag", "10000");
        expected.put("max.warmup.replicas", "3");
        expected.put("num.standby.replicas", "2");
        expected.put("probing.rebalance.interval.ms", "120000");
        expected.put("rack.aware.assignment.tags", "zone,rack");
        expected.put("rack.aware.assignment.strategy", "balance_subtopology");
        expected.put("rack.aware.assignment.traffic_cost", "7");
        expected.put("max.spare.replicas", "1");
        expected.put("stream.imbalance.percentage", "10");
        assertEquals(expected, out);
        assertEquals(Arrays.asList(expected.keySet().toArray()), Arrays.asList(out.keySet().toArray()));
    }

    @Test
    void leavesOutEmptyTagsAndCosts() {
        final Map<String, String> out = RequestWriter.configs(TestStates.configs(0, "none"), null, null);
        assertEquals(Arrays.asList("acceptable.recovery.lag", "max.warmup.replicas", "num.standby.replicas",
            "probing.rebalance.interval.ms", "rack.aware.assignment.strategy"), Arrays.asList(out.keySet().toArray()));
    }

    @Test
    void refusesNamedTopologies() {
        final TestStates.State state = new TestStates.State(TestStates.configs(0, "none"))
            .task(new TestStates.Task(new TaskId(0, 0, "orders"), true));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> RequestWriter.write(state, "app", 0L, 0, Collections.emptyMap()));
        assertTrue(e.getMessage().contains("named topolog"), e.getMessage());
    }
}
