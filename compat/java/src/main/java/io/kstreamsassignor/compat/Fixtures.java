package io.kstreamsassignor.compat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.StreamsAssignmentProtocolVersions;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The fixture cases: inputs handed to the Java encoders, hand-made byte strings for Java to decode,
 * and inputs the Java encoders refuse. {@link #generate} writes the .bin files and manifest.json
 * described in fixtures/wire/FORMAT.md.
 */
public final class Fixtures {
    static final int LATEST = StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION;
    static final int MAX_ENVELOPE_VERSION = 3;

    static final ProcessId SPEC_PROCESS = process("00112233-4455-6677-8899-aabbccddeeff");
    static final ProcessId TYPICAL_PROCESS = process("5a1e7c3d-2b4f-4e6a-9c8d-0f1e2d3c4b5a");
    static final String TYPICAL_ENDPOINT = "host-1.example.com:8080";

    /** One fixture file. */
    record Entry(String file, String message, int version, String caseName, String origin, byte[] bytes) {
    }

    /** An input the Java encoder refused. */
    record EncodeError(String message, int version, String caseName, ObjectNode input, String javaError) {
    }

    /** Inputs of a SubscriptionInfo, encodable at versions {@code from..to}. */
    record Sub(String name, int from, int to, ProcessId process, String endPoint, Map<TaskId, Long> sums,
            int uniqueField, int errorCode, Map<String, String> tags) {
        SubscriptionInfo build(int version) {
            return new SubscriptionInfo(version, LATEST, process, endPoint, sums, (byte) uniqueField, errorCode, tags);
        }

        /** The view of the inputs themselves, for inputs that cannot be encoded. */
        ObjectNode inputView(int version) {
            Set<TaskId> active = new HashSet<>();
            Set<TaskId> standby = new HashSet<>();
            sums.forEach((task, sum) -> (sum == -2L ? active : standby).add(task));
            return View.subscription(version, LATEST, process.id().toString(), endPoint, active, standby, sums,
                    uniqueField, errorCode, tags);
        }
    }

    /** Inputs of an AssignmentInfo, encodable at versions {@code from..to}. */
    record Asg(String name, int from, int to, int commonlySupported, List<TaskId> active,
            Map<TaskId, Set<TopicPartition>> standby, Map<HostInfo, Set<TopicPartition>> hosts,
            Map<HostInfo, Set<TopicPartition>> standbyHosts, int errorCode, Long nextRebalanceMs) {
        AssignmentInfo build(int version) {
            AssignmentInfo info = new AssignmentInfo(version, commonlySupported, active, standby, hosts,
                    standbyHosts, errorCode);
            if (nextRebalanceMs != null) {
                info.setNextRebalanceTime(nextRebalanceMs);
            }
            return info;
        }
    }

    private final List<Entry> entries = new ArrayList<>();
    private final List<EncodeError> encodeErrors = new ArrayList<>();

    private Fixtures() {
    }

    // ================================================================ subscription cases

    static List<Sub> subscriptionCases() {
        List<Sub> cases = new ArrayList<>();
        cases.add(new Sub("empty", 1, LATEST, SPEC_PROCESS, null, Map.of(), 0, 0, Map.of()));
        cases.add(typicalSubscription());
        cases.add(new Sub("spec-vector", 1, LATEST, SPEC_PROCESS, "h:1", specSums(), 1, 0, Map.of("az", "b")));
        cases.add(new Sub("non-ascii-endpoint", 1, LATEST, TYPICAL_PROCESS, "hôst-ü.例え:9090", specSums(), 2, 0,
                Map.of()));
        cases.add(new Sub("nul-endpoint", 1, LATEST, TYPICAL_PROCESS, "nul\u0000host:1234", specSums(), 3, 0,
                Map.of()));
        cases.add(largeSubscription());
        cases.add(new Sub("shutdown-requested", 9, LATEST, TYPICAL_PROCESS, TYPICAL_ENDPOINT, specSums(), 7, 4,
                Map.of("az", "us-east-1a")));
        cases.add(namedTopologySubscription(10));
        cases.add(new Sub("max-unique-field", 11, 11, TYPICAL_PROCESS, TYPICAL_ENDPOINT, specSums(), -128, 0,
                Map.of("az", "us-east-1a")));
        // The named-topology vector of java-golden-vectors.txt.
        Map<TaskId, Long> named = new LinkedHashMap<>();
        named.put(new TaskId(2, 3, "nt"), 7L);
        named.put(new TaskId(2, 4), 8L);
        cases.add(new Sub("spec-vector-named", 10, 10, SPEC_PROCESS, "", named, -1, 4, Map.of()));
        return cases;
    }

    /** The offset sums of the spec vectors, in their insertion order. */
    static Map<TaskId, Long> specSums() {
        Map<TaskId, Long> sums = new LinkedHashMap<>();
        sums.put(new TaskId(0, 0), -2L);
        sums.put(new TaskId(0, 1), 100L);
        sums.put(new TaskId(1, 0), -3L);
        return sums;
    }

    static Sub typicalSubscription() {
        Map<TaskId, Long> sums = new HashMap<>();
        sums.put(new TaskId(0, 0), -2L);
        sums.put(new TaskId(0, 1), -2L);
        sums.put(new TaskId(0, 2), 1234L);
        sums.put(new TaskId(1, 0), -2L);
        sums.put(new TaskId(1, 1), 0L);
        sums.put(new TaskId(1, 3), 987_654_321L);
        sums.put(new TaskId(2, 0), 42L);
        sums.put(new TaskId(2, 1), -2L);
        sums.put(new TaskId(2, 4), 5_000_000_000L);
        sums.put(new TaskId(2, 7), 7L);
        Map<String, String> tags = new HashMap<>();
        tags.put("az", "us-east-1a");
        tags.put("rack", "r7");
        return new Sub("typical", 1, LATEST, TYPICAL_PROCESS, TYPICAL_ENDPOINT, sums, 5, 0, tags);
    }

    static Sub largeSubscription() {
        Map<TaskId, Long> sums = new HashMap<>();
        for (int subtopology = 0; subtopology < 20; subtopology++) {
            for (int partition = 0; partition < 100; partition++) {
                int k = subtopology * 100 + partition;
                long sum;
                if (k % 5 == 0) {
                    sum = -2L;
                } else if (k % 97 == 1) {
                    sum = 0L;
                } else if (k == 1999) {
                    sum = Long.MAX_VALUE;
                } else {
                    // Deterministic values of varying magnitude, from a few bits up to 55 bits.
                    sum = mix(k) & ((1L << (8 + k % 48)) - 1);
                }
                sums.put(new TaskId(subtopology, partition), sum);
            }
        }
        Map<String, String> tags = new HashMap<>();
        tags.put("az", "eu-west-1b");
        tags.put("rack", "rack-17");
        tags.put("zone-group", "g2");
        return new Sub("large", 1, LATEST, TYPICAL_PROCESS, TYPICAL_ENDPOINT, sums, 42, 0, tags);
    }

    static Sub namedTopologySubscription(int from) {
        Map<TaskId, Long> sums = new HashMap<>();
        sums.put(new TaskId(0, 0, "alpha"), -2L);
        sums.put(new TaskId(0, 1, "alpha"), 10L);
        sums.put(new TaskId(1, 0, "βeta"), -2L);
        sums.put(new TaskId(0, 0, "βeta"), 25L);
        sums.put(new TaskId(0, 0), -2L);
        sums.put(new TaskId(1, 2), 99L);
        return new Sub("named-topology", from, LATEST, TYPICAL_PROCESS, TYPICAL_ENDPOINT, sums, 9, 0,
                Map.of("az", "us-east-1a"));
    }

    // ================================================================ assignment cases

    static List<Asg> assignmentCases() {
        List<Asg> cases = new ArrayList<>();
        cases.add(new Asg("empty", 1, LATEST, LATEST, List.of(), Map.of(), Map.of(), Map.of(), 0, null));
        cases.add(specAssignment());
        cases.add(typicalAssignment());
        for (int code = 1; code <= 4; code++) {
            cases.add(new Asg("error-" + code, 4, LATEST, LATEST, List.of(), Map.of(), Map.of(), Map.of(), code,
                    null));
        }
        List<TaskId> one = List.of(new TaskId(0, 0));
        Map<HostInfo, Set<TopicPartition>> oneHost = Map.of(new HostInfo("host-1.example.com", 8080),
                set(tp("input", 0)));
        cases.add(new Asg("next-rebalance-0", 7, LATEST, LATEST, one, Map.of(), oneHost, Map.of(), 0, 0L));
        cases.add(new Asg("next-rebalance-max", 7, LATEST, LATEST, one, Map.of(), oneHost, Map.of(), 0,
                Long.MAX_VALUE));
        cases.add(namedTopologyAssignment(10));
        cases.add(modifiedUtf8Assignment());
        String longHost = "h".repeat(65_535);
        cases.add(new Asg("long-host", 4, 4, 4, one, Map.of(),
                Map.of(new HostInfo(longHost, 8080), set(tp("input", 0))), Map.of(), 0, null));
        cases.add(largeAssignment());
        // The two single-purpose vectors of java-golden-vectors.txt.
        cases.add(new Asg("spec-vector-named", 10, 10, LATEST, List.of(new TaskId(0, 0, "né")), Map.of(), Map.of(),
                Map.of(), 0, null));
        cases.add(new Asg("spec-vector-modified-utf8", 4, 4, 4, List.of(), Map.of(),
                Map.of(new HostInfo("a\u0000\uD83D\uDE00", -1), set(tp("é", 0))), Map.of(), 0, null));
        return cases;
    }

    static Asg specAssignment() {
        List<TaskId> active = List.of(new TaskId(0, 0), new TaskId(0, 0), new TaskId(1, 2));
        Map<TaskId, Set<TopicPartition>> standby = new HashMap<>();
        standby.put(new TaskId(1, 1), set(tp("t1", 1)));
        HostInfo host = new HostInfo("h", 1);
        Map<HostInfo, Set<TopicPartition>> hosts = new HashMap<>();
        hosts.put(host, set(tp("t0", 0), tp("t1", 0)));
        Map<HostInfo, Set<TopicPartition>> standbyHosts = new HashMap<>();
        standbyHosts.put(host, set(tp("t1", 1)));
        return new Asg("spec-vector", 1, LATEST, 9, active, standby, hosts, standbyHosts, 0, 1_700_000_000_000L);
    }

    static final List<TopicPartition> TYPICAL_ASSIGNED = List.of(tp("input-a", 0), tp("input-a", 1),
            tp("input-a", 2), tp("input-b", 0), tp("input-c", 0), tp("input-d", 3));

    static Asg typicalAssignment() {
        // One entry per assigned partition, in partition order: task 1_0 joins input-b and input-c.
        List<TaskId> active = List.of(new TaskId(0, 0), new TaskId(0, 1), new TaskId(0, 2), new TaskId(1, 0),
                new TaskId(1, 0), new TaskId(2, 3));
        Map<TaskId, Set<TopicPartition>> standby = new HashMap<>();
        standby.put(new TaskId(0, 3), set(tp("input-a", 3)));
        standby.put(new TaskId(1, 1), set(tp("input-b", 1), tp("input-c", 1)));
        standby.put(new TaskId(2, 0), set(tp("input-d", 0)));
        HostInfo one = new HostInfo("host-1.example.com", 8080);
        HostInfo two = new HostInfo("host-2.example.com", 8080);
        HostInfo three = new HostInfo("10.0.0.3", 9090);
        Map<HostInfo, Set<TopicPartition>> hosts = new HashMap<>();
        hosts.put(one, new HashSet<>(TYPICAL_ASSIGNED));
        hosts.put(two, set(tp("input-a", 3), tp("input-b", 1), tp("input-c", 1), tp("input-d", 0)));
        hosts.put(three, set(tp("input-b", 2), tp("input-c", 2), tp("input-d", 1), tp("input-d", 2)));
        Map<HostInfo, Set<TopicPartition>> standbyHosts = new HashMap<>();
        standbyHosts.put(one, set(tp("input-a", 3), tp("input-b", 1), tp("input-c", 1), tp("input-d", 0)));
        standbyHosts.put(two, set(tp("input-a", 0), tp("input-b", 0), tp("input-c", 0)));
        standbyHosts.put(three, set(tp("input-a", 1), tp("input-d", 3)));
        return new Asg("typical", 1, LATEST, LATEST, active, standby, hosts, standbyHosts, 0, 1_712_345_678_901L);
    }

    static Asg namedTopologyAssignment(int from) {
        List<TaskId> active = List.of(new TaskId(1, 2, "alpha"), new TaskId(0, 0, "né"), new TaskId(0, 1));
        Map<TaskId, Set<TopicPartition>> standby = new HashMap<>();
        standby.put(new TaskId(0, 3, "alpha"), set(tp("alpha-in", 3)));
        standby.put(new TaskId(1, 1, "né"), set(tp("né-in", 1)));
        Map<HostInfo, Set<TopicPartition>> hosts = new HashMap<>();
        hosts.put(new HostInfo("host-1.example.com", 8080), set(tp("alpha-in", 2), tp("input", 1), tp("né-in", 0)));
        hosts.put(new HostInfo("host-2.example.com", 8080), set(tp("alpha-in", 3), tp("né-in", 1)));
        Map<HostInfo, Set<TopicPartition>> standbyHosts = new HashMap<>();
        standbyHosts.put(new HostInfo("host-1.example.com", 8080), set(tp("alpha-in", 3), tp("né-in", 1)));
        return new Asg("named-topology", from, LATEST, LATEST, active, standby, hosts, standbyHosts, 0, null);
    }

    static Asg modifiedUtf8Assignment() {
        HostInfo nulAndEmoji = new HostInfo("a\u0000\uD83D\uDE00", -1);
        HostInfo loneSurrogate = new HostInfo("x\uD800y", 7);
        List<TaskId> active = List.of(new TaskId(0, 0), new TaskId(1, 0));
        Map<TaskId, Set<TopicPartition>> standby = new HashMap<>();
        standby.put(new TaskId(0, 1), set(tp("é", 1)));
        Map<HostInfo, Set<TopicPartition>> hosts = new HashMap<>();
        hosts.put(nulAndEmoji, set(tp("é", 0)));
        hosts.put(loneSurrogate, set(tp("t", 0)));
        Map<HostInfo, Set<TopicPartition>> standbyHosts = new HashMap<>();
        standbyHosts.put(loneSurrogate, set(tp("é", 1)));
        return new Asg("modified-utf8", 2, LATEST, LATEST, active, standby, hosts, standbyHosts, 0, null);
    }

    static Asg largeAssignment() {
        // 10 topics x 200 partitions; task t_p reads topic-t partition p. This member runs the tasks of
        // partitions 0..99 and holds standbys for partitions 100..199; 100 hosts share the partitions.
        List<TaskId> active = new ArrayList<>();
        Map<TaskId, Set<TopicPartition>> standby = new HashMap<>();
        Map<HostInfo, Set<TopicPartition>> hosts = new HashMap<>();
        Map<HostInfo, Set<TopicPartition>> standbyHosts = new HashMap<>();
        List<HostInfo> hostList = new ArrayList<>();
        for (int h = 0; h < 100; h++) {
            hostList.add(new HostInfo(String.format("host-%02d.example.com", h), 8080 + h % 3));
        }
        for (int topic = 0; topic < 10; topic++) {
            for (int partition = 0; partition < 200; partition++) {
                TopicPartition tp = tp("topic-" + topic, partition);
                TaskId task = new TaskId(topic, partition);
                if (partition < 100) {
                    active.add(task);
                } else {
                    standby.put(task, set(tp));
                }
                hosts.computeIfAbsent(hostList.get((partition + 7 * topic) % 100), k -> new HashSet<>()).add(tp);
                standbyHosts.computeIfAbsent(hostList.get((partition + 7 * topic + 1) % 100), k -> new HashSet<>())
                        .add(tp);
            }
        }
        return new Asg("large", LATEST, LATEST, LATEST, active, standby, hosts, standbyHosts, 0,
                1_712_345_678_901L);
    }

    // ================================================================ hand-made inputs

    /** Hand-made byte strings: message, case name, hex (spaces allowed). */
    static List<String[]> handmade() {
        return List.of(
                // SubscriptionInfo, from java-golden-vectors.txt
                h(View.SUBSCRIPTION, "future", "0000000c 0000000c"),
                h(View.SUBSCRIPTION, "future-lsv-11", "0000000c 0000000b"),
                h(View.SUBSCRIPTION, "future-short", "0000000c 000000"),
                h(View.SUBSCRIPTION, "version-0", "00000000 00112233445566778899aabbccddeeff 00000000 00000000"),
                h(View.SUBSCRIPTION, "lsv-2", "00000003 00000002 00112233445566778899aabbccddeeff 00000000 00000000 00000000"),
                h(View.SUBSCRIPTION, "lsv-unknown", "00000003 ffffffff 00112233445566778899aabbccddeeff 00000000 00000000 00000000"),
                h(View.SUBSCRIPTION, "negative-prev-tasks", "00000004 0000000b 00112233445566778899aabbccddeeff ffffffff"),
                h(View.SUBSCRIPTION, "huge-prev-tasks", "00000004 0000000b 00112233445566778899aabbccddeeff 7fffffff"),
                h(View.SUBSCRIPTION, "truncated-task", "00000004 0000000b 00112233445566778899aabbccddeeff 00000001 00000000 00000000 00000000"),
                h(View.SUBSCRIPTION, "endpoint-too-long", "00000004 0000000b 00112233445566778899aabbccddeeff 00000000 00000000 00000005 6869"),
                h(View.SUBSCRIPTION, "endpoint-negative", "00000004 0000000b 00112233445566778899aabbccddeeff 00000000 00000000 ffffffff"),
                h(View.SUBSCRIPTION, "three-bytes", "000000"),
                h(View.SUBSCRIPTION, "trailing-bytes", "00000004 0000000b 00112233445566778899aabbccddeeff 00000000 00000000 00000000 deadbeef"),
                h(View.SUBSCRIPTION, "task-in-both", "00000006 0000000b 00112233445566778899aabbccddeeff 00000001 00000000 00000001 00000001 00000000 00000001 00000000"),
                h(View.SUBSCRIPTION, "named-topology-empty", "0000000a 0000000b 00112233445566778899aabbccddeeff 00000000 00000001 00000001 00000002 0000000000000005 0000 00 00000000"),
                h(View.SUBSCRIPTION, "named-topology-negative-length", "0000000a 0000000b 00112233445566778899aabbccddeeff 00000000 00000001 00000001 00000002 0000000000000005 fffe 00 00000000"),
                h(View.SUBSCRIPTION, "duplicate-tag", "0000000b 0000000b 00112233445566778899aabbccddeeff 00000000 00000000 00 00000000 00000002 00000001 61 00000001 62 00000001 61 00000001 63"),
                h(View.SUBSCRIPTION, "duplicate-task", "00000007 0000000b 00112233445566778899aabbccddeeff 00000000 00000002 00000001 00000001 00000003 0000000000000001 00000001 00000001 00000003 0000000000000009"),
                // SubscriptionInfo, additional
                h(View.SUBSCRIPTION, "future-trailing", "0000000c 0000000c 00112233 44556677 8899aabb"),
                // AssignmentInfo, from java-golden-vectors.txt
                h(View.ASSIGNMENT, "version-0", "00000000"),
                h(View.ASSIGNMENT, "future-version", "0000000c 0000000c"),
                h(View.ASSIGNMENT, "empty-input", ""),
                h(View.ASSIGNMENT, "negative-active-count", "00000001 ffffffff"),
                h(View.ASSIGNMENT, "negative-standby-count", "00000001 00000000 ffffffff"),
                h(View.ASSIGNMENT, "negative-standby-partition-count", "00000001 00000000 00000001 00000000 00000000 ffffffff"),
                h(View.ASSIGNMENT, "negative-host-count", "00000002 00000000 00000000 ffffffff"),
                h(View.ASSIGNMENT, "negative-topic-dict-count", "00000006 00000006 00000000 00000000 ffffffff"),
                h(View.ASSIGNMENT, "negative-host-map-counts", "00000006 00000006 00000000 00000000 00000000 ffffffff ffffffff 00000000"),
                h(View.ASSIGNMENT, "unknown-topic-index", "00000006 00000006 00000000 00000000 00000001 00000000 0001 7a 00000001 0001 68 00000001 00000001 00000005 00000003 00000000 00000000"),
                h(View.ASSIGNMENT, "truncated", "00000007 00000007 00000000 00000000 00000000 00000000 00000000 00000000 00"),
                h(View.ASSIGNMENT, "trailing-bytes", "00000007 00000007 00000000 00000000 00000000 00000000 00000000 00000000 0000000000000000 ff"),
                h(View.ASSIGNMENT, "negative-topology-name-length", "0000000a 0000000a 00000001 00000001 00000002 ffffffff 00000000 00000000 00000000 00000000 00000000 7fffffffffffffff"),
                h(View.ASSIGNMENT, "malformed-utf", "00000004 00000004 00000000 00000000 00000001 0001 ff"),
                h(View.ASSIGNMENT, "huge-active-count", "00000001 7fffffff"),
                h(View.ASSIGNMENT, "duplicate-standby-task", "00000001 00000000 00000002 00000001 00000001 00000000 00000001 00000001 00000001 0001 74 00000005"),
                // AssignmentInfo, additional: a raw 00 inside a host (Java writes C0 80), and a topic
                // spelled with overlong 2- and 3-byte forms of "t" and "a" (Java writes 74 61).
                h(View.ASSIGNMENT, "raw-nul-host", "00000004 00000004 00000001 00000000 00000001 00000000 00000001 0003 610062 00000001 00000001 0001 74 00000001 00000000"),
                h(View.ASSIGNMENT, "overlong-topic", "00000004 00000004 00000000 00000001 00000000 00000001 00000001 0005 c1b4e081a1 00000001 00000000 00000000"),
                // AssignmentInfo, additional: 4.4.0 rejects a count above (whole buffer size / 8) for active
                // tasks as corrupt; a count within that bound but beyond the bytes left hits end of input.
                h(View.ASSIGNMENT, "active-count-at-limit", "00000001 00000001"),
                h(View.ASSIGNMENT, "active-count-over-limit", "00000001 00000002"),
                // Consumer-protocol envelopes, from java-golden-vectors.txt
                h(View.SUBSCRIPTION_ENVELOPE, "trailing-fields", "0007 00000001 000161 00000002 cafe 00000000 00000005 ffff 99999999"),
                h(View.SUBSCRIPTION_ENVELOPE, "negative-version", "ffff 00000000"),
                h(View.SUBSCRIPTION_ENVELOPE, "user-data-overflow", "0000 00000000 00000010 cafe"),
                h(View.SUBSCRIPTION_ENVELOPE, "null-user-data", "0000 00000000 ffffffff"),
                h(View.SUBSCRIPTION_ENVELOPE, "truncated", "0001 00000000 ffffffff 0000"),
                h(View.SUBSCRIPTION_ENVELOPE, "empty-rack", "0003 00000000 ffffffff 00000000 ffffffff 0000"),
                h(View.ASSIGNMENT_ENVELOPE, "future-version", "0009 00000001 000161 00000001 00000003 00000001 ee 1234"),
                // Consumer-protocol envelopes, additional
                h(View.SUBSCRIPTION_ENVELOPE, "short-header", "00"),
                h(View.ASSIGNMENT_ENVELOPE, "negative-version", "ffff 00000000 ffffffff"),
                h(View.ASSIGNMENT_ENVELOPE, "null-user-data", "0000 00000000 ffffffff"),
                h(View.ASSIGNMENT_ENVELOPE, "truncated", "0003 00000001 0001 61"));
    }

    private static String[] h(String message, String name, String hex) {
        return new String[] {message, name, hex};
    }

    // ================================================================ building

    static Fixtures build() {
        Fixtures f = new Fixtures();
        f.buildSubscriptions();
        f.buildAssignments();
        f.buildEnvelopes();
        for (String[] input : handmade()) {
            byte[] bytes = HexFormat.of().parseHex(input[2].replace(" ", ""));
            int version = versionField(input[0], bytes);
            f.add(input[0], version, input[1], "handmade", bytes);
        }
        f.buildEncodeErrors();
        f.entries.sort(Comparator.comparing(Entry::file));
        return f;
    }

    private void buildSubscriptions() {
        for (Sub c : subscriptionCases()) {
            for (int v = c.from(); v <= c.to(); v++) {
                add(View.SUBSCRIPTION, v, c.name(), "java-encoded", View.bytes(c.build(v).encode()));
            }
        }
    }

    private void buildAssignments() {
        for (Asg c : assignmentCases()) {
            for (int v = c.from(); v <= c.to(); v++) {
                add(View.ASSIGNMENT, v, c.name(), "java-encoded", View.bytes(c.build(v).encode()));
            }
        }
    }

    private void buildEnvelopes() {
        ByteBuffer cafe = ByteBuffer.wrap(new byte[] {(byte) 0xca, (byte) 0xfe});
        ByteBuffer streamsSubscription = typicalSubscription().build(LATEST).encode();
        ByteBuffer streamsAssignment = typicalAssignment().build(LATEST).encode();
        for (short v = 0; v <= MAX_ENVELOPE_VERSION; v++) {
            Subscription typical = new Subscription(List.of("b", "a"), cafe.duplicate(),
                    List.of(tp("b", 1), tp("a", 2), tp("a", 0)), 5, Optional.of("r1"));
            Subscription bare = new Subscription(List.of("a"), null, List.of(), -1, Optional.empty());
            Subscription streams = new Subscription(List.of("input", "repartition"), streamsSubscription.duplicate(),
                    List.of(tp("repartition", 0), tp("input", 0), tp("input", 1)), 12, Optional.of("rack-a"));
            addSubscriptionEnvelope(v, "typical", typical);
            addSubscriptionEnvelope(v, "null-user-data-no-rack", bare);
            addSubscriptionEnvelope(v, "streams-user-data", streams);

            Assignment assignment = new Assignment(List.of(tp("b", 1), tp("a", 2), tp("b", 0)), cafe.duplicate());
            Assignment streamsAssigned = new Assignment(TYPICAL_ASSIGNED, streamsAssignment.duplicate());
            add(View.ASSIGNMENT_ENVELOPE, v, "typical", "java-encoded",
                    View.bytes(ConsumerProtocol.serializeAssignment(assignment, v)));
            add(View.ASSIGNMENT_ENVELOPE, v, "streams-user-data", "java-encoded",
                    View.bytes(ConsumerProtocol.serializeAssignment(streamsAssigned, v)));
        }
    }

    private void addSubscriptionEnvelope(short version, String name, Subscription subscription) {
        add(View.SUBSCRIPTION_ENVELOPE, version, name, "java-encoded",
                View.bytes(ConsumerProtocol.serializeSubscription(subscription, version)));
    }

    private void buildEncodeErrors() {
        Sub named = namedTopologySubscription(10);
        try {
            named.build(9).encode();
            throw new IllegalStateException("Java encoded a named topology at subscription v9");
        } catch (RuntimeException e) {
            encodeErrors.add(new EncodeError(View.SUBSCRIPTION, 9, "named-topology", named.inputView(9),
                    View.errorText(e)));
        }
        refusedAssignment(namedTopologyAssignment(9), 9, "named-topology");
        List<TaskId> one = List.of(new TaskId(0, 0));
        refusedAssignment(new Asg("host-too-long", 4, 4, 4, one, Map.of(),
                Map.of(new HostInfo("x".repeat(70_000), 8080), set(tp("input", 0))), Map.of(), 0, null), 4,
                "host-too-long");
        refusedAssignment(new Asg("host-too-long-euro", 4, 4, 4, one, Map.of(),
                Map.of(new HostInfo("€".repeat(21_846), 8080), set(tp("input", 0))), Map.of(), 0, null), 4,
                "host-too-long-euro");
    }

    private void refusedAssignment(Asg c, int version, String name) {
        AssignmentInfo info = c.build(version);
        try {
            info.encode();
            throw new IllegalStateException("Java encoded assignment case " + name + " at v" + version);
        } catch (RuntimeException e) {
            encodeErrors.add(new EncodeError(View.ASSIGNMENT, version, name, View.assignment(info),
                    View.errorText(e)));
        }
    }

    private void add(String message, int version, String name, String origin, byte[] bytes) {
        String file = message + "/v" + Math.max(0, version) + "/" + name + ".bin";
        for (Entry e : entries) {
            if (e.file().equals(file)) {
                throw new IllegalStateException("duplicate fixture " + file);
            }
        }
        entries.add(new Entry(file, message, version, name, origin, bytes));
    }

    /** The version in the bytes' own version field; 0 when there are too few bytes to hold one. */
    static int versionField(String message, byte[] bytes) {
        boolean envelope = message.endsWith("-envelope");
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        if (envelope) {
            return bytes.length >= 2 ? buffer.getShort(0) : 0;
        }
        return bytes.length >= 4 ? buffer.getInt(0) : 0;
    }

    // ================================================================ output

    ObjectNode manifest() throws IOException {
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        ObjectNode manifest = nodes.objectNode();
        manifest.put("kafkaStreamsVersion", streamsVersion());
        manifest.put("latestSupportedVersion", LATEST);
        manifest.put("generator", "compat/java");
        ArrayNode fixtures = manifest.putArray("fixtures");
        for (Entry e : entries) {
            ObjectNode node = fixtures.addObject();
            node.put("file", e.file());
            node.put("message", e.message());
            node.put("version", e.version());
            node.put("case", e.caseName());
            node.put("origin", e.origin());
            try {
                node.set("expected", View.normalise(e.message(), View.decode(e.message(), e.bytes())));
            } catch (Throwable t) {
                node.put("javaError", View.errorText(t));
            }
        }
        ArrayNode errors = manifest.putArray("encodeErrors");
        for (EncodeError e : encodeErrors) {
            ObjectNode node = errors.addObject();
            node.put("message", e.message());
            node.put("version", e.version());
            node.put("case", e.caseName());
            node.set("input", View.normalise(e.message(), e.input()));
            node.put("javaError", e.javaError());
        }
        return manifest;
    }

    /** Writes every file into {@code dir}; .bin files of earlier runs that are no longer cases are removed. */
    static void generate(Path dir, boolean quiet) throws IOException {
        Fixtures f = build();
        Set<String> wanted = new TreeSet<>();
        for (Entry e : f.entries) {
            Path path = dir.resolve(e.file());
            Files.createDirectories(path.getParent());
            Files.write(path, e.bytes());
            wanted.add(e.file());
        }
        for (String stale : binFiles(dir)) {
            if (!wanted.contains(stale)) {
                Files.delete(dir.resolve(stale));
                if (!quiet) {
                    System.out.println("removed stale " + stale);
                }
            }
        }
        byte[] manifest = View.prettyBytes(f.manifest());
        Files.write(dir.resolve("manifest.json"), manifest);
        if (!quiet) {
            System.out.println(summary(f));
            System.out.println("wrote " + f.entries.size() + " fixtures, " + f.encodeErrors.size()
                    + " encode errors and manifest.json to " + dir);
        }
    }

    /** Regenerates into a temporary directory and compares with {@code dir}; returns the exit code. */
    static int check(Path dir) throws IOException {
        Path temp = Files.createTempDirectory("kstreams-compat-check");
        try {
            generate(temp, true);
            Set<String> generated = new TreeSet<>(binFiles(temp));
            generated.add("manifest.json");
            Set<String> committed = new TreeSet<>(binFiles(dir));
            if (Files.exists(dir.resolve("manifest.json"))) {
                committed.add("manifest.json");
            }
            List<String> problems = new ArrayList<>();
            for (String file : generated) {
                if (!committed.contains(file)) {
                    problems.add("missing   " + file);
                } else if (!Arrays.equals(Files.readAllBytes(temp.resolve(file)),
                        Files.readAllBytes(dir.resolve(file)))) {
                    problems.add("differs   " + file);
                }
            }
            for (String file : committed) {
                if (!generated.contains(file)) {
                    problems.add("unexpected " + file);
                }
            }
            problems.forEach(System.out::println);
            if (problems.isEmpty()) {
                System.out.println("check ok: " + generated.size() + " files in " + dir
                        + " equal the regenerated ones byte for byte");
                return 0;
            }
            System.out.println("check FAILED: " + problems.size() + " of " + generated.size()
                    + " files differ from the regenerated ones");
            return 1;
        } finally {
            try (Stream<Path> walk = Files.walk(temp)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.delete(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
        }
    }

    /** The .bin files under the message directories of {@code dir}, as relative paths with '/'. */
    static List<String> binFiles(Path dir) throws IOException {
        List<String> files = new ArrayList<>();
        for (String message : View.MESSAGES) {
            Path root = dir.resolve(message);
            if (!Files.isDirectory(root)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(root)) {
                walk.filter(p -> Files.isRegularFile(p) && p.getFileName().toString().endsWith(".bin"))
                        .map(p -> dir.relativize(p).toString().replace('\\', '/'))
                        .forEach(files::add);
            }
        }
        Collections.sort(files);
        return files;
    }

    /** Case counts per message and version directory. */
    static String summary(Fixtures f) {
        Map<String, Map<Integer, Integer>> counts = new TreeMap<>();
        for (Entry e : f.entries) {
            counts.computeIfAbsent(e.message(), k -> new TreeMap<>())
                    .merge(Math.max(0, e.version()), 1, Integer::sum);
        }
        return counts.entrySet().stream()
                .map(m -> m.getKey() + ": " + m.getValue().entrySet().stream()
                        .map(v -> "v" + v.getKey() + "=" + v.getValue())
                        .collect(Collectors.joining(" ")))
                .collect(Collectors.joining("\n"));
    }

    // ================================================================ helpers

    /** The version recorded in the kafka-streams jar on the class path. */
    static String streamsVersion() throws IOException {
        Properties properties = new Properties();
        try (InputStream in = SubscriptionInfo.class.getResourceAsStream("/kafka/kafka-streams-version.properties")) {
            if (in == null) {
                throw new IOException("kafka/kafka-streams-version.properties not found on the class path");
            }
            properties.load(in);
        }
        return properties.getProperty("version");
    }

    static TopicPartition tp(String topic, int partition) {
        return new TopicPartition(topic, partition);
    }

    static Set<TopicPartition> set(TopicPartition... partitions) {
        return new HashSet<>(Arrays.asList(partitions));
    }

    static ProcessId process(String uuid) {
        return new ProcessId(UUID.fromString(uuid));
    }

    /** SplitMix64 finaliser: a fixed, well-spread function of {@code k}. */
    static long mix(long k) {
        long z = k * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
