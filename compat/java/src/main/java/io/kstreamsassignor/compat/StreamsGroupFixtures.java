package io.kstreamsassignor.compat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.common.message.StreamsGroupDescribeRequestData;
import org.apache.kafka.common.message.StreamsGroupDescribeRequestDataJsonConverter;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.Assignment;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.DescribedGroup;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.Endpoint;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.KeyValue;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.Member;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.Subtopology;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.TaskIds;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.TaskOffset;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.TopicInfo;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.Topology;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.TopologyDescription;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.TopologyDescriptionGlobalStore;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.TopologyDescriptionNode;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData.TopologyDescriptionSubtopology;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseDataJsonConverter;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;

/**
 * Golden bytes of Kafka's StreamsGroupDescribe messages (API key 89), written by the generated
 * {@code StreamsGroupDescribe*Data} classes of kafka-clients, with the JSON their generated
 * {@code JsonConverter} writes as the expected decoded value: {@code fixtures/streams-group/}.
 *
 * <pre>java -cp kstreams-compat.jar io.kstreamsassignor.compat.StreamsGroupFixtures OUT_DIR</pre>
 */
public final class StreamsGroupFixtures {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private StreamsGroupFixtures() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        ArrayNode fixtures = JsonNodeFactory.instance.arrayNode();
        for (short v = 0; v <= 1; v++) {
            request(out, fixtures, v, "one-group", new StreamsGroupDescribeRequestData().setGroupIds(List.of("wc")));
            request(out, fixtures, v, "two-groups-with-operations", new StreamsGroupDescribeRequestData()
                .setGroupIds(List.of("wc", "orders-app")).setIncludeAuthorizedOperations(true)
                .setIncludeTopologyDescription(v >= 1));
            response(out, fixtures, v, "rich", new StreamsGroupDescribeResponseData().setThrottleTimeMs(7)
                .setGroups(List.of(richGroup(v))));
            response(out, fixtures, v, "nulls-and-empties", new StreamsGroupDescribeResponseData()
                .setGroups(List.of(sparseGroup(v), notFound("gone"))));
            response(out, fixtures, v, "group-id-not-found", new StreamsGroupDescribeResponseData()
                .setGroups(List.of(notFound("nope"))));
            StreamsGroupDescribeResponseData tagged = new StreamsGroupDescribeResponseData()
                .setGroups(List.of(sparseGroup(v)));
            tagged.unknownTaggedFields().add(new RawTaggedField(5, new byte[] {1, 2, 3}));
            tagged.groups().get(0).members().get(0).unknownTaggedFields().add(new RawTaggedField(0, new byte[0]));
            response(out, fixtures, v, "unknown-tagged-fields", tagged);
        }
        ObjectNode manifest = JsonNodeFactory.instance.objectNode();
        manifest.put("kafkaClientsVersion", "4.4.0");
        manifest.put("generator", "compat/java StreamsGroupFixtures");
        manifest.set("fixtures", fixtures);
        Files.writeString(out.resolve("manifest.json"), JSON.writeValueAsString(manifest) + "\n");
    }

    private static DescribedGroup notFound(String id) {
        return new DescribedGroup().setGroupId(id).setErrorCode((short) 69)
            .setErrorMessage("Group " + id + " not found.");
    }

    private static TaskIds tasks(String subtopology, Integer... partitions) {
        return new TaskIds().setSubtopologyId(subtopology).setPartitions(List.of(partitions));
    }

    private static TaskOffset offset(String subtopology, int partition, long offset) {
        return new TaskOffset().setSubtopologyId(subtopology).setPartition(partition).setOffset(offset);
    }

    private static KeyValue kv(String k, String v) {
        return new KeyValue().setKey(k).setValue(v);
    }

    private static DescribedGroup richGroup(short v) {
        Topology topology = new Topology().setEpoch(2).setSubtopologies(List.of(
            new Subtopology().setSubtopologyId("0").setSourceTopics(List.of("words"))
                .setRepartitionSinkTopics(List.of("wc-counts-repartition"))
                .setStateChangelogTopics(List.of())
                .setRepartitionSourceTopics(List.of()),
            new Subtopology().setSubtopologyId("1").setSourceTopics(List.of("wc-counts-repartition"))
                .setRepartitionSinkTopics(List.of())
                .setStateChangelogTopics(List.of(new TopicInfo().setName("wc-counts-changelog")
                    .setTopicConfigs(List.of(kv("cleanup.policy", "compact")))))
                .setRepartitionSourceTopics(List.of(new TopicInfo().setName("wc-counts-repartition")
                    .setPartitions(4).setReplicationFactor((short) 3)
                    .setTopicConfigs(List.of(kv("retention.ms", "-1"), kv("cleanup.policy", "delete")))))));
        Member a = new Member().setMemberId("m-a").setMemberEpoch(12).setInstanceId("wc-1").setRackId("rack-a")
            .setClientId("wc-client-StreamThread-1").setClientHost("/10.0.0.7").setTopologyEpoch(2)
            .setProcessId("6c3a5f2e-1b2d-4e5f-8a9b-0c1d2e3f4a5b")
            .setUserEndpoint(new Endpoint().setHost("wc-1.example").setPort(65535))
            .setClientTags(List.of(kv("zone", "eu-1a"), kv("tier", "gold")))
            .setTaskOffsets(List.of(offset("1", 0, 900), offset("1", 1, -2)))
            .setTaskEndOffsets(List.of(offset("1", 0, 1000), offset("1", 1, 50)))
            .setAssignment(new Assignment().setActiveTasks(List.of(tasks("0", 0, 1), tasks("1", 0)))
                .setStandbyTasks(List.of(tasks("1", 2))).setWarmupTasks(List.of()))
            .setTargetAssignment(new Assignment().setActiveTasks(List.of(tasks("0", 0, 1), tasks("1", 0)))
                .setStandbyTasks(List.of(tasks("1", 2))).setWarmupTasks(List.of(tasks("1", 1))))
            .setIsClassic(false);
        Member b = new Member().setMemberId("m-b").setMemberEpoch(11).setClientId("wc-client-2")
            .setClientHost("/10.0.0.8").setTopologyEpoch(2).setProcessId("p-b")
            .setClientTags(List.of()).setTaskOffsets(List.of()).setTaskEndOffsets(List.of())
            .setAssignment(new Assignment().setActiveTasks(List.of()).setStandbyTasks(List.of()).setWarmupTasks(List.of()))
            .setTargetAssignment(new Assignment().setActiveTasks(List.of(tasks("0", 2, 3), tasks("1", 3)))
                .setStandbyTasks(List.of()).setWarmupTasks(List.of()))
            .setIsClassic(true);
        DescribedGroup g = new DescribedGroup().setGroupId("wc").setGroupState("Reconciling").setGroupEpoch(13)
            .setAssignmentEpoch(12).setTopology(topology).setMembers(List.of(a, b)).setAuthorizedOperations(0x0d8);
        if (v >= 1) {
            TopologyDescriptionNode source = new TopologyDescriptionNode().setName("KSTREAM-SOURCE-0000000000")
                .setNodeType((byte) 1).setSourceTopics(List.of("words")).setStores(List.of())
                .setSuccessors(List.of("KSTREAM-SINK-0000000001"));
            TopologyDescriptionNode sink = new TopologyDescriptionNode().setName("KSTREAM-SINK-0000000001")
                .setNodeType((byte) 3).setSourceTopics(List.of()).setSinkTopic("wc-counts-repartition")
                .setStores(List.of()).setSuccessors(List.of());
            TopologyDescriptionNode store = new TopologyDescriptionNode().setName("KTABLE-SOURCE-0000000003")
                .setNodeType((byte) 2).setSourceTopics(List.of()).setStores(List.of("global-store"))
                .setSuccessors(List.of());
            g.setTopologyDescription(new TopologyDescription()
                    .setSubtopologies(List.of(new TopologyDescriptionSubtopology().setSubtopologyId("0")
                        .setNodes(List.of(source, sink))))
                    .setGlobalStores(List.of(new TopologyDescriptionGlobalStore()
                        .setSource(source.duplicate().setName("KSTREAM-SOURCE-0000000002"))
                        .setProcessor(store))))
                .setTopologyDescriptionStatus((byte) 3).setAssignorName("sticky");
        }
        return g;
    }

    private static DescribedGroup sparseGroup(short v) {
        Member m = new Member().setMemberId("").setClientId("").setClientHost("").setProcessId("")
            .setClientTags(List.of()).setTaskOffsets(List.of()).setTaskEndOffsets(List.of())
            .setAssignment(new Assignment()).setTargetAssignment(new Assignment());
        DescribedGroup g = new DescribedGroup().setGroupId("empty").setGroupState("NotReady")
            .setTopology(new Topology().setEpoch(-1).setSubtopologies(null)).setMembers(List.of(m));
        if (v >= 1) {
            g.setTopologyDescriptionStatus((byte) 1);
        }
        return g;
    }

    private static ByteBuffer bytes(Message m, short v) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, v));
        m.write(new ByteBufferAccessor(buf), cache, v);
        buf.flip();
        return buf;
    }

    private static void write(Path out, ArrayNode fixtures, String message, short v, String name, Message m,
                              com.fasterxml.jackson.databind.JsonNode expected) throws Exception {
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

    private static void request(Path out, ArrayNode fixtures, short v, String name, StreamsGroupDescribeRequestData m)
            throws Exception {
        write(out, fixtures, "request", v, name, m, StreamsGroupDescribeRequestDataJsonConverter.write(m, v));
    }

    private static void response(Path out, ArrayNode fixtures, short v, String name, StreamsGroupDescribeResponseData m)
            throws Exception {
        write(out, fixtures, "response", v, name, m, StreamsGroupDescribeResponseDataJsonConverter.write(m, v));
    }
}
