package io.kstreamsassignor.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.common.message.StreamsGroupHeartbeatRequestData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatRequestDataJsonConverter;
import org.apache.kafka.common.message.StreamsGroupHeartbeatResponseData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatResponseDataJsonConverter;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;

/**
 * Golden bytes of Kafka's StreamsGroupHeartbeat messages (API key 88), written by the generated
 * {@code StreamsGroupHeartbeat*Data} classes of kafka-clients, with the JSON their generated
 * {@code JsonConverter} writes as the expected decoded value: {@code fixtures/streams-heartbeat/}.
 *
 * <pre>java -cp kstreams-compat.jar io.kstreamsassignor.compat.StreamsHeartbeatFixtures OUT_DIR</pre>
 */
public final class StreamsHeartbeatFixtures {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private StreamsHeartbeatFixtures() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        ArrayNode fixtures = JsonNodeFactory.instance.arrayNode();
        for (short v = 0; v <= 1; v++) {
            request(out, fixtures, v, "join", join());
            request(out, fixtures, v, "steady", new StreamsGroupHeartbeatRequestData().setGroupId("wc")
                .setMemberId("m-1").setMemberEpoch(7).setEndpointInformationEpoch(3));
            request(out, fixtures, v, "acknowledge", acknowledge());
            request(out, fixtures, v, "static-leave", new StreamsGroupHeartbeatRequestData().setGroupId("wc")
                .setMemberId("m-1").setMemberEpoch(-2).setEndpointInformationEpoch(3).setInstanceId("rust-1")
                .setShutdownApplication(true));
            response(out, fixtures, v, "assignment", assignment(v));
            response(out, fixtures, v, "unchanged", new StreamsGroupHeartbeatResponseData().setMemberId("m-1")
                .setMemberEpoch(8).setHeartbeatIntervalMs(5000).setTaskOffsetIntervalMs(60000)
                .setEndpointInformationEpoch(4));
            response(out, fixtures, v, "fenced", new StreamsGroupHeartbeatResponseData().setErrorCode((short) 110)
                .setErrorMessage("The member epoch 6 is fenced.").setMemberId("m-1").setMemberEpoch(-1));
            StreamsGroupHeartbeatResponseData tagged = new StreamsGroupHeartbeatResponseData().setMemberId("m-1")
                .setMemberEpoch(2).setHeartbeatIntervalMs(5000);
            tagged.unknownTaggedFields().add(new RawTaggedField(9, new byte[] {4, 5}));
            response(out, fixtures, v, "unknown-tagged-fields", tagged);
        }
        ObjectNode manifest = JsonNodeFactory.instance.objectNode();
        manifest.put("kafkaClientsVersion", "4.4.0");
        manifest.put("generator", "compat/java StreamsHeartbeatFixtures");
        manifest.set("fixtures", fixtures);
        Files.writeString(out.resolve("manifest.json"), JSON.writeValueAsString(manifest) + "\n");
    }

    private static StreamsGroupHeartbeatRequestData.KeyValue kv(String k, String v) {
        return new StreamsGroupHeartbeatRequestData.KeyValue().setKey(k).setValue(v);
    }

    private static StreamsGroupHeartbeatRequestData.TaskIds reqTasks(String subtopology, Integer... partitions) {
        return new StreamsGroupHeartbeatRequestData.TaskIds().setSubtopologyId(subtopology).setPartitions(List.of(partitions));
    }

    private static StreamsGroupHeartbeatRequestData.TaskOffset offset(String subtopology, int partition, long offset) {
        return new StreamsGroupHeartbeatRequestData.TaskOffset().setSubtopologyId(subtopology).setPartition(partition)
            .setOffset(offset);
    }

    /** A join as a Java member of the word count sends it: the whole topology, every field set. */
    private static StreamsGroupHeartbeatRequestData join() {
        StreamsGroupHeartbeatRequestData.Subtopology split = new StreamsGroupHeartbeatRequestData.Subtopology()
            .setSubtopologyId("0").setSourceTopics(List.of("lines", "more-lines"))
            .setRepartitionSinkTopics(List.of("wc-counts-repartition"))
            .setCopartitionGroups(List.of(new StreamsGroupHeartbeatRequestData.CopartitionGroup()
                .setSourceTopics(List.of((short) 0, (short) 1))));
        StreamsGroupHeartbeatRequestData.Subtopology count = new StreamsGroupHeartbeatRequestData.Subtopology()
            .setSubtopologyId("1").setSourceTopicRegex(List.of("audit-.*"))
            .setRepartitionSourceTopics(List.of(new StreamsGroupHeartbeatRequestData.TopicInfo()
                .setName("wc-counts-repartition").setPartitions(4).setReplicationFactor((short) 3)
                .setTopicConfigs(List.of(kv("cleanup.policy", "delete"), kv("retention.ms", "-1")))))
            .setStateChangelogTopics(List.of(new StreamsGroupHeartbeatRequestData.TopicInfo()
                .setName("wc-counts-changelog").setReplicationFactor((short) -1)
                .setTopicConfigs(List.of(kv("cleanup.policy", "compact")))));
        return new StreamsGroupHeartbeatRequestData().setGroupId("wc").setMemberId("m-1").setMemberEpoch(0)
            .setEndpointInformationEpoch(-1).setInstanceId("rust-1").setRackId("rack-a").setRebalanceTimeoutMs(300000)
            .setTopology(new StreamsGroupHeartbeatRequestData.Topology().setEpoch(0).setSubtopologies(List.of(split, count)))
            .setActiveTasks(List.of()).setStandbyTasks(List.of()).setWarmupTasks(List.of())
            .setProcessId("2f1e5c4a-7d3b-4c1e-9a8f-0b6d5e4c3a21")
            .setUserEndpoint(new StreamsGroupHeartbeatRequestData.Endpoint().setHost("app-1.example").setPort(65535))
            .setClientTags(List.of(kv("zone", "eu-1")))
            .setTaskOffsets(List.of(offset("1", 0, 1200), offset("1", 3, Long.MAX_VALUE)))
            .setTaskEndOffsets(List.of(offset("1", 0, 1500)));
    }

    /** A heartbeat that acknowledges a reconciled assignment, with the offsets of a warm-up. */
    private static StreamsGroupHeartbeatRequestData acknowledge() {
        return new StreamsGroupHeartbeatRequestData().setGroupId("wc").setMemberId("m-1").setMemberEpoch(8)
            .setEndpointInformationEpoch(4)
            .setActiveTasks(List.of(reqTasks("0", 0, 2), reqTasks("1", 1)))
            .setStandbyTasks(List.of(reqTasks("1", 2)))
            .setWarmupTasks(List.of(reqTasks("1", 3)))
            .setTaskOffsets(List.of(offset("1", 2, 90), offset("1", 3, 40)))
            .setTaskEndOffsets(List.of(offset("1", 2, 100), offset("1", 3, 100)));
    }

    private static StreamsGroupHeartbeatResponseData.TaskIds tasks(String subtopology, Integer... partitions) {
        return new StreamsGroupHeartbeatResponseData.TaskIds().setSubtopologyId(subtopology).setPartitions(List.of(partitions));
    }

    private static StreamsGroupHeartbeatResponseData assignment(short v) {
        StreamsGroupHeartbeatResponseData r = new StreamsGroupHeartbeatResponseData().setThrottleTimeMs(3)
            .setMemberId("m-1").setMemberEpoch(8).setHeartbeatIntervalMs(5000).setTaskOffsetIntervalMs(60000)
            .setStatus(List.of(new StreamsGroupHeartbeatResponseData.Status().setStatusCode((byte) 3)
                .setStatusDetail("Internal topics are missing: [wc-counts-changelog]")))
            .setActiveTasks(List.of(tasks("0", 0, 2), tasks("1", 1)))
            .setStandbyTasks(List.of(tasks("1", 2)))
            .setWarmupTasks(List.of(tasks("1", 3)))
            .setEndpointInformationEpoch(4)
            .setPartitionsByUserEndpoint(List.of(new StreamsGroupHeartbeatResponseData.EndpointToPartitions()
                .setUserEndpoint(new StreamsGroupHeartbeatResponseData.Endpoint().setHost("app-1.example").setPort(8080))
                .setActivePartitions(List.of(new StreamsGroupHeartbeatResponseData.TopicPartition().setTopic("lines")
                    .setPartitions(List.of(0, 2))))
                .setStandbyPartitions(List.of())));
        if (v == 0) {
            r.setAcceptableRecoveryLagLegacy(10000);
        } else {
            r.setAcceptableRecoveryLag(5_000_000_000L).setTopologyDescriptionRequired(true);
        }
        return r;
    }

    private static ByteBuffer bytes(Message m, short v) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, v));
        m.write(new ByteBufferAccessor(buf), cache, v);
        buf.flip();
        return buf;
    }

    private static void write(Path out, ArrayNode fixtures, String message, short v, String name, Message m,
                              JsonNode expected) throws Exception {
        String file = message + "/v" + v + "/" + name + ".bin";
        Path path = out.resolve(file);
        Files.createDirectories(path.getParent());
        ByteBuffer buf = bytes(m, v);
        byte[] raw = new byte[buf.remaining()];
        buf.get(raw);
        Files.write(path, raw);
        ObjectNode entry = fixtures.addObject();
        entry.put("file", file);
        entry.put("message", message);
        entry.put("version", v);
        entry.put("case", name);
        entry.put("origin", "java-encoded");
        entry.set("expected", expected);
    }

    private static void request(Path out, ArrayNode fixtures, short v, String name, StreamsGroupHeartbeatRequestData m)
            throws Exception {
        write(out, fixtures, "request", v, name, m, StreamsGroupHeartbeatRequestDataJsonConverter.write(m, v));
    }

    private static void response(Path out, ArrayNode fixtures, short v, String name, StreamsGroupHeartbeatResponseData m)
            throws Exception {
        write(out, fixtures, "response", v, name, m, StreamsGroupHeartbeatResponseDataJsonConverter.write(m, v));
    }
}
