package org.apache.kafka.streams.processor.internals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.ReferenceContainer;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;

/**
 * Runs Kafka Streams' own {@code StreamsPartitionAssignor.assign} (the leader's whole assignment)
 * on cases written by the crate's {@code tests/leader_assign.rs}, with the admin client, the main
 * consumer, the clock and the task manager replaced by stand-ins that answer from the case, and
 * the id of the synthetic client of members from the future fixed to the crate's.
 *
 * <p>Input: one JSON object per line: {@code numStandby}, {@code partitions} (external topic →
 * count), {@code endOffsets} (changelog partition "topic-p" → end offset, or null: unavailable),
 * {@code leader} (process id), {@code now} (ms), {@code members} ([{id, subscription (hex envelope)}]).
 * The topology is the word-count example with application id "wc".
 * Output: one JSON object per line: {@code members} (member id → hex assignment envelope) or
 * {@code error}.
 *
 * <p>{@code AssignParity IN OUT --time N} also times {@code assign} alone (the stand-ins set up
 * beforehand) N more times per case after the run whose answer is written, and prints one JSON
 * line per case to standard output: {@code runsMs} and {@code medianMs}.
 */
public final class AssignParity {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String APP = "wc";
    /** The crate's {@code leader::FUTURE_PROCESS_ID}. */
    private static final String FUTURE_PROCESS_ID = "ffffffff-ffff-ffff-ffff-fffffffffffe";

    private AssignParity() { }

    public static void main(final String[] args) throws Exception {
        final int timed;
        if (args.length == 2) {
            timed = 0;
        } else if (args.length == 4 && args[2].equals("--time")) {
            timed = Integer.parseInt(args[3]);
        } else {
            System.err.println("usage: AssignParity IN OUT [--time N]");
            System.exit(2);
            return;
        }
        try (BufferedReader in = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8);
             BufferedWriter out = Files.newBufferedWriter(Path.of(args[1]), StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                final JsonNode c = JSON.readTree(line);
                ObjectNode result;
                try {
                    result = run(c, new long[1]);
                } catch (final Exception e) {
                    result = JSON.createObjectNode();
                    result.put("error", e.toString());
                }
                out.write(JSON.writeValueAsString(result));
                out.newLine();
                if (timed > 0) {
                    final long[] nanos = new long[timed];
                    final long[] one = new long[1];
                    for (int i = 0; i < timed; i++) {
                        run(c, one);
                        nanos[i] = one[0];
                    }
                    final ObjectNode timing = JSON.createObjectNode();
                    final double[] ms = Arrays.stream(nanos).mapToDouble(n -> n / 1e6).toArray();
                    final ArrayNode runs = timing.putArray("runsMs");
                    for (final double m : ms) {
                        runs.add(Math.round(m * 10) / 10.0);
                    }
                    final double[] sorted = ms.clone();
                    Arrays.sort(sorted);
                    timing.put("medianMs", sorted[sorted.length / 2]);
                    System.out.println(JSON.writeValueAsString(timing));
                }
            }
        }
    }

    private static Properties props(final int numStandby) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BuiltInDslStoreSuppliers.InMemoryDslStoreSuppliers.class);
        props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, numStandby);
        return props;
    }

    private static InternalTopologyBuilder wordCount(final Properties props) throws ReflectiveOperationException {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(props)));
        builder.stream("text-lines", Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(v -> Arrays.asList(v.split(" ")))
            .groupBy((k, v) -> v, Grouped.as("words"))
            .count(Materialized.as("word-counts"))
            .toStream()
            .to("word-counts-out", Produced.with(Serdes.String(), Serdes.Long()));
        final Topology topology = builder.build(props);
        final Field f = Topology.class.getDeclaredField("internalTopologyBuilder");
        f.setAccessible(true);
        return (InternalTopologyBuilder) f.get(topology);
    }

    private static final class NoAdminTopicManager extends InternalTopicManager {
        NoAdminTopicManager(final Properties props) {
            super(Time.SYSTEM, null, new StreamsConfig(props));
        }

        @Override
        public Set<String> makeReady(final Map<String, InternalTopicConfig> topics) {
            return new HashSet<>();
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T stub(final Class<T> type, final java.lang.reflect.InvocationHandler handler) {
        return (T) Proxy.newProxyInstance(AssignParity.class.getClassLoader(), new Class<?>[] {type}, handler);
    }

    private static TopicPartition parsePartition(final String s) {
        final int dash = s.lastIndexOf('-');
        return new TopicPartition(s.substring(0, dash), Integer.parseInt(s.substring(dash + 1)));
    }

    /** Runs one case; {@code assignNanos[0]} gets the time of {@code assign} alone. */
    private static ObjectNode run(final JsonNode c, final long[] assignNanos) throws Exception {
        final Properties props = props(c.get("numStandby").asInt());
        final long now = c.get("now").asLong();
        final InternalTopologyBuilder itb = wordCount(props);
        final TopologyMetadata topologyMetadata = new TopologyMetadata(itb, new StreamsConfig(props));
        topologyMetadata.buildAndRewriteTopology();

        final sun.misc.Unsafe unsafe;
        {
            final Field uf = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            uf.setAccessible(true);
            unsafe = (sun.misc.Unsafe) uf.get(null);
        }
        final TaskManager taskManager = (TaskManager) unsafe.allocateInstance(TaskManager.class);
        setField(taskManager, "processId", new ProcessId(UUID.fromString(c.get("leader").asText())));
        setField(taskManager, "topologyMetadata", topologyMetadata);

        final JsonNode endOffsets = c.get("endOffsets");
        final Admin admin = stub(Admin.class, (proxy, method, args) -> {
            if (method.getName().equals("listOffsets")) {
                if (endOffsets == null || endOffsets.isNull()) {
                    throw new TimeoutException("end offsets unavailable");
                }
                final Map<TopicPartition, ?> request = (Map<TopicPartition, ?>) args[0];
                final Map<TopicPartition, KafkaFuture<ListOffsetsResultInfo>> futures = new HashMap<>();
                for (final TopicPartition tp : request.keySet()) {
                    final JsonNode v = endOffsets.get(tp.topic() + "-" + tp.partition());
                    if (v == null) {
                        throw new TimeoutException("no end offset for " + tp);
                    }
                    futures.put(tp, KafkaFuture.completedFuture(new ListOffsetsResultInfo(v.asLong(), -1L, Optional.empty())));
                }
                return new ListOffsetsResult(futures);
            }
            throw new UnsupportedOperationException("admin." + method.getName());
        });
        final Consumer<byte[], byte[]> consumer = stub(Consumer.class, (proxy, method, args) -> {
            if (method.getName().equals("committed")) {
                return new HashMap<>();
            }
            throw new UnsupportedOperationException("consumer." + method.getName());
        });
        final Time time = stub(Time.class, (proxy, method, args) -> {
            switch (method.getName()) {
                case "milliseconds":
                case "hiResClockMs":
                    return now;
                case "nanoseconds":
                    return now * 1_000_000L;
                default:
                    return null;
            }
        });

        final ReferenceContainer refs = new ReferenceContainer();
        refs.mainConsumer = consumer;
        refs.adminClient = admin;
        refs.taskManager = taskManager;
        refs.time = time;
        refs.streamsMetadataState = (StreamsMetadataState) unsafe.allocateInstance(StreamsMetadataState.class);
        refs.clientTags = new HashMap<>();
        final Map<String, Object> configs = new HashMap<>();
        for (final String k : props.stringPropertyNames()) {
            configs.put(k, props.get(k));
        }
        configs.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, c.get("numStandby").asInt());
        configs.put(StreamsConfig.InternalConfig.REFERENCE_CONTAINER_PARTITION_ASSIGNOR, refs);

        // The synthetic client of members from the future: Kafka draws its id at random; the
        // crate uses a fixed one, which is set here so that both order clients alike.
        // (Initialise the class first, or its static initialiser would overwrite the id.)
        Class.forName(StreamsPartitionAssignor.class.getName(), true, AssignParity.class.getClassLoader());
        final Field futureId = StreamsPartitionAssignor.class.getDeclaredField("FUTURE_ID");
        unsafe.putObject(unsafe.staticFieldBase(futureId), unsafe.staticFieldOffset(futureId),
            new ProcessId(UUID.fromString(FUTURE_PROCESS_ID)));

        final StreamsPartitionAssignor assignor = new StreamsPartitionAssignor();
        assignor.configure(configs);
        assignor.setInternalTopicManager(new NoAdminTopicManager(props));

        final Node node = new Node(0, "localhost", 9092);
        final List<PartitionInfo> infos = new ArrayList<>();
        c.get("partitions").fields().forEachRemaining(e -> {
            for (int p = 0; p < e.getValue().asInt(); p++) {
                infos.add(new PartitionInfo(e.getKey(), p, node, new Node[] {node}, new Node[] {node}));
            }
        });
        final Cluster cluster = new Cluster("cluster", List.of(node), infos, Set.of(), Set.of());

        final Map<String, Subscription> subscriptions = new HashMap<>();
        for (final JsonNode m : c.get("members")) {
            final byte[] bytes = hex(m.get("subscription").asText());
            subscriptions.put(m.get("id").asText(), ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(bytes)));
        }
        final GroupSubscription group = new GroupSubscription(subscriptions);
        final long start = System.nanoTime();
        final GroupAssignment result = assignor.assign(cluster, group);
        assignNanos[0] = System.nanoTime() - start;
        final ObjectNode out = JSON.createObjectNode();
        final ObjectNode members = out.putObject("members");
        for (final Map.Entry<String, Assignment> e : new TreeMap<>(result.groupAssignment()).entrySet()) {
            final ByteBuffer buf = ConsumerProtocol.serializeAssignment(e.getValue());
            final byte[] bytes = new byte[buf.remaining()];
            buf.get(bytes);
            members.put(e.getKey(), toHex(bytes));
        }
        return out;
    }

    private static void setField(final Object target, final String name, final Object value) throws ReflectiveOperationException {
        final Field f = target.getClass().getDeclaredField(name);
        f.setAccessible(true);
        f.set(target, value);
    }

    private static byte[] hex(final String s) {
        final byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static String toHex(final byte[] bytes) {
        final StringBuilder sb = new StringBuilder();
        for (final byte b : bytes) {
            sb.append(String.format("%02x", b));
        }
        return sb.toString();
    }
}
