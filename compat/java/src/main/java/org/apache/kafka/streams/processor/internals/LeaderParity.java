package org.apache.kafka.streams.processor.internals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.errors.MissingSourceTopicException;
import org.apache.kafka.streams.errors.TaskAssignmentException;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.TableJoined;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder.TopicsInfo;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.CopartitionedTopicsEnforcer;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.slf4j.LoggerFactory;

/**
 * Runs the leader-side pieces of Kafka Streams' {@code StreamsPartitionAssignor} (kafka-streams
 * 4.4.0, on the class path) that the crate's {@code leader} module reimplements, on generated
 * inputs, and prints real {@code Topology#describe()} output.
 *
 * <pre>
 *   LeaderParity describe OUT_DIR
 *       Builds the example topologies with the real StreamsBuilder and writes, per example,
 *       NAME.describe.txt (describe() output) and NAME.kafka.json (what Kafka's topology builder
 *       knows about it, in the crate's topology JSON format).
 *   LeaderParity tasks IN.jsonl OUT.jsonl
 *       Per line {"id", "topology", "metadata"}: builds the topology with Kafka's topology builder
 *       and runs RepartitionTopics, CopartitionedTopicsEnforcer, PartitionGrouper and
 *       ChangelogTopics as StreamsPartitionAssignor.assign does; writes {"id", "tasks"} or
 *       {"id", "error"}.
 *   LeaderParity threads IN.jsonl OUT.jsonl
 *       Per line {"id", "client"}: fills a ClientState and calls
 *       StreamsPartitionAssignor.assignTasksToThreads three times as computeNewAssignment does;
 *       writes {"id", "threads"} or {"id", "error"}.
 *   LeaderParity members IN.jsonl OUT.jsonl
 *       Per line {"id", "member"}: one client's thread split, task partitions and previous
 *       ownership; calls StreamsPartitionAssignor.addClientAssignments and decodes what it
 *       encoded for each consumer; writes {"id", "members"} or {"id", "error"}.
 * </pre>
 *
 * The class sits in Kafka's internals package to reach the package-private helpers.
 */
public final class LeaderParity {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String APP = "app";

    private LeaderParity() {
    }

    public static void main(final String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("describe")) {
            describe(Path.of(args[1]));
        } else if (args.length == 3 && args[0].equals("tasks")) {
            eachLine(Path.of(args[1]), Path.of(args[2]), LeaderParity::tasks);
        } else if (args.length == 3 && args[0].equals("threads")) {
            eachLine(Path.of(args[1]), Path.of(args[2]), LeaderParity::threads);
        } else if (args.length == 3 && args[0].equals("members")) {
            eachLine(Path.of(args[1]), Path.of(args[2]), LeaderParity::members);
        } else {
            System.err.println("usage: LeaderParity describe OUT_DIR | tasks IN OUT | threads IN OUT | members IN OUT");
            System.exit(2);
        }
    }

    // ------------------------------------------------------------------ describe

    private static Properties props() {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        // In-memory stores: building the topology must not load RocksDB (not on the class path).
        // describe() prints the same text for either kind.
        props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BuiltInDslStoreSuppliers.InMemoryDslStoreSuppliers.class);
        return props;
    }

    private static StreamsBuilder newBuilder() {
        return new StreamsBuilder(new TopologyConfig(new StreamsConfig(props())));
    }

    private static Map<String, Topology> examples() {
        final Map<String, Topology> out = new TreeMap<>();
        final Consumed<String, String> strings = Consumed.with(Serdes.String(), Serdes.String());

        // Count by key: one sub-topology with a logged key-value store, no repartition.
        StreamsBuilder b = newBuilder();
        b.stream("page-views", strings)
            .groupByKey()
            .count(Materialized.as("views-per-page"))
            .toStream()
            .to("view-counts", Produced.with(Serdes.String(), Serdes.Long()));
        out.put("count-by-key", b.build(props()));

        // Word count: groupBy a new key repartitions through "words-repartition".
        b = newBuilder();
        b.stream("text-lines", strings)
            .flatMapValues(line -> List.of(line.split(" ")))
            .groupBy((key, word) -> word, Grouped.as("words"))
            .count(Materialized.as("word-counts"))
            .toStream()
            .to("word-counts-out", Produced.with(Serdes.String(), Serdes.Long()));
        out.put("word-count", b.build(props()));

        // Stream-table join after a key change (repartition copartitioned with the table's
        // topic), plus a global table join.
        b = newBuilder();
        final KTable<String, String> users = b.table("users", strings, Materialized.as("users-store"));
        b.globalTable("countries", strings, Materialized.as("countries-store"));
        b.stream("clicks", strings)
            .selectKey((key, click) -> click)
            .join(users, (click, user) -> click + user)
            .to("enriched-clicks");
        out.put("stream-table-join", b.build(props()));

        // Windowed aggregation with a fixed-count repartition before it.
        b = newBuilder();
        b.stream("events", strings)
            .repartition(Repartitioned.<String, String>numberOfPartitions(3).withName("rekeyed"))
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(5)))
            .count(Materialized.as("event-windows"))
            .toStream()
            .to("windowed-counts");
        out.put("windowed", b.build(props()));

        // A store with logging disabled next to a logged one: the unlogged sub-topology is
        // stateless for the assignor.
        b = newBuilder();
        b.stream("metrics", strings)
            .groupByKey()
            .reduce((a, c) -> c, Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("latest-metric").withLoggingDisabled());
        b.stream("audits", strings)
            .groupBy((k, v) -> v, Grouped.as("by-user"))
            .count(Materialized.as("audits-per-user"));
        out.put("logging-disabled", b.build(props()));

        // Foreign-key join: internal subscription topics that do not end in -repartition.
        b = newBuilder();
        final KTable<String, String> orders = b.table("orders", strings);
        final KTable<String, String> customers = b.table("customers", strings);
        orders.join(customers, order -> order, (o, c) -> o + c).toStream().to("orders-with-customer");
        out.put("fk-join", b.build(props()));

        // Joins renamed with Named.as and friends: no processor name says JOIN; the join
        // processors read the other side's store.
        b = newBuilder();
        final KTable<String, String> regions = b.table("customers", strings);
        b.stream("orders", strings)
            .filter((customer, amount) -> !amount.isEmpty(), Named.as("big-orders"))
            .join(regions, (amount, region) -> region + ":" + amount,
                Joined.<String, String, String>as("enrich").withKeySerde(Serdes.String()).withValueSerde(Serdes.String()))
            .to("enriched-orders");
        out.put("named-stream-table-join", b.build(props()));

        b = newBuilder();
        final KStream<String, String> views = b.stream("views", strings);
        b.stream("clicks", strings)
            .outerJoin(views, (click, view) -> click + view, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(1)),
                StreamJoined.<String, String, String>as("pairs").withName("pair"))
            .to("paired");
        out.put("named-stream-stream-join", b.build(props()));

        b = newBuilder();
        final KTable<String, String> left = b.table("accounts", strings);
        final KTable<String, String> right = b.table("limits", strings);
        left.leftJoin(right, (a, l) -> a + l, Named.as("with-limit")).toStream(Named.as("out")).to("accounts-with-limits");
        out.put("named-table-table-join", b.build(props()));

        b = newBuilder();
        final KTable<String, String> items = b.table("items", strings);
        final KTable<String, String> sellers = b.table("sellers", strings);
        items.join(sellers, item -> item, (i, s) -> i + s, TableJoined.as("seller")).toStream().to("items-with-seller");
        out.put("named-fk-join", b.build(props()));

        // Merged streams are no join: a stateless merge, and a merge counted by one processor
        // (its store read by one processor only); no copartition group.
        b = newBuilder();
        b.stream("eu", strings).merge(b.stream("us", strings)).filter((k, v) -> v != null).to("all-regions");
        b.stream("web", strings).merge(b.stream("app", strings)).groupByKey().count(Materialized.as("visits"))
            .toStream().to("visit-counts", Produced.with(Serdes.String(), Serdes.Long()));
        out.put("merge", b.build(props()));
        return out;
    }

    private static InternalTopologyBuilder internalBuilder(final Topology topology) throws ReflectiveOperationException {
        final Field f = Topology.class.getDeclaredField("internalTopologyBuilder");
        f.setAccessible(true);
        return (InternalTopologyBuilder) f.get(topology);
    }

    private static void describe(final Path dir) throws Exception {
        Files.createDirectories(dir);
        for (final Map.Entry<String, Topology> e : examples().entrySet()) {
            final Topology topology = e.getValue();
            Files.writeString(dir.resolve(e.getKey() + ".describe.txt"), topology.describe().toString());
            final InternalTopologyBuilder itb = internalBuilder(topology);
            itb.setApplicationId(APP);
            // Building assigns changelog topics to logged stores, as a running application does.
            itb.buildTopology();
            final ObjectNode view = kafkaView(itb);
            Files.writeString(dir.resolve(e.getKey() + ".kafka.json"),
                JSON.writerWithDefaultPrettyPrinter().writeValueAsString(view) + "\n");
        }
    }

    /** What the topology builder knows, in the crate's topology JSON format (raw internal names). */
    private static ObjectNode kafkaView(final InternalTopologyBuilder itb) {
        final String prefix = APP + "-";
        final ObjectNode root = JSON.createObjectNode();
        root.put("applicationId", APP);
        final ArrayNode subs = root.putArray("subtopologies");
        final TreeMap<String, Integer> repartition = new TreeMap<>();
        final Set<String> fixed = new HashSet<>();
        for (final Map.Entry<Subtopology, TopicsInfo> e : itb.subtopologyToTopicsInfo().entrySet()) {
            final TopicsInfo info = e.getValue();
            final Set<String> internal = info.repartitionSourceTopics.keySet();
            for (final Map.Entry<String, InternalTopicConfig> r : info.repartitionSourceTopics.entrySet()) {
                repartition.put(r.getKey().substring(prefix.length()), r.getValue().numberOfPartitions().orElse(null));
            }
            final ObjectNode sub = subs.addObject();
            sub.put("id", e.getKey().nodeGroupId);
            final ArrayNode sources = sub.putArray("sourceTopics");
            for (final String t : new TreeSet<>(info.sourceTopics)) {
                sources.add(internal.contains(t) ? t.substring(prefix.length()) : t);
            }
            final ArrayNode sinks = sub.putArray("sinkTopics");
            for (final String t : new TreeSet<>(info.sinkTopics)) {
                sinks.add(t.startsWith(prefix) && t.endsWith("-repartition") || t.startsWith(prefix + "KTABLE-FK-JOIN-")
                    ? t.substring(prefix.length()) : t);
            }
            final ArrayNode stores = sub.putArray("stores");
            for (final String store : storeNames(itb, e.getKey().nodeGroupId)) {
                final ObjectNode s = stores.addObject();
                s.put("name", store);
                final String changelog = ProcessorStateManager.storeChangelogTopic(APP, store, null);
                s.put("loggingEnabled", info.stateChangelogTopics.containsKey(changelog));
            }
        }
        final ArrayNode rep = root.putArray("repartitionTopics");
        for (final Map.Entry<String, Integer> r : repartition.entrySet()) {
            final ObjectNode t = rep.addObject();
            t.put("name", r.getKey());
            if (r.getValue() != null) {
                t.put("partitions", r.getValue());
            }
        }
        final ArrayNode groups = root.putArray("copartitionGroups");
        final TreeMap<String, TreeSet<String>> sortedGroups = new TreeMap<>();
        for (final Set<String> g : itb.copartitionGroups()) {
            final TreeSet<String> names = new TreeSet<>();
            for (final String t : g) {
                names.add(t.startsWith(prefix) ? t.substring(prefix.length()) : t);
            }
            sortedGroups.put(names.first(), names);
        }
        for (final TreeSet<String> g : sortedGroups.values()) {
            final ArrayNode a = groups.addArray();
            g.forEach(a::add);
        }
        return root;
    }

    /** The stores the processors of one sub-topology are connected to, as describe() lists them. */
    private static TreeSet<String> storeNames(final InternalTopologyBuilder itb, final int subtopology) {
        final TreeSet<String> names = new TreeSet<>();
        for (final TopologyDescription.Subtopology sub : itb.describe().subtopologies()) {
            if (sub.id() == subtopology) {
                for (final TopologyDescription.Node node : sub.nodes()) {
                    if (node instanceof TopologyDescription.Processor) {
                        names.addAll(((TopologyDescription.Processor) node).stores());
                    }
                }
            }
        }
        return names;
    }

    // ------------------------------------------------------------------ jsonl driver

    private interface Case {
        ObjectNode run(JsonNode in) throws Exception;
    }

    private static void eachLine(final Path in, final Path out, final Case c) throws IOException {
        int n = 0;
        try (BufferedReader r = Files.newBufferedReader(in, StandardCharsets.UTF_8);
             BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                final JsonNode node = JSON.readTree(line);
                ObjectNode result;
                try {
                    result = c.run(node);
                } catch (final Exception | Error e) {
                    result = JSON.createObjectNode();
                    result.set("error", errorView(e));
                }
                final ObjectNode line2 = JSON.createObjectNode();
                line2.set("id", node.get("id"));
                line2.setAll(result);
                w.write(JSON.writeValueAsString(line2));
                w.newLine();
                n++;
            }
        }
        System.err.println("java: " + n + " cases");
    }

    /** {"kind", "assignorError" (the code assign() would send, or null when the exception escapes), "message"}. */
    private static ObjectNode errorView(final Throwable thrown) {
        Throwable e = thrown;
        while (e instanceof InvocationTargetException && e.getCause() != null) {
            e = e.getCause();
        }
        final ObjectNode err = JSON.createObjectNode();
        err.put("kind", e.getClass().getSimpleName());
        if (e instanceof MissingSourceTopicException) {
            err.put("assignorError", 1);
        } else if (e instanceof TaskAssignmentException) {
            err.put("assignorError", 3);
        } else {
            err.putNull("assignorError");
        }
        err.put("message", String.valueOf(e.getMessage()));
        return err;
    }

    // ------------------------------------------------------------------ tasks

    /** Never asked to create anything: every topic is taken as existing. */
    private static final class NoAdminTopicManager extends InternalTopicManager {
        NoAdminTopicManager() {
            super(Time.SYSTEM, null, new StreamsConfig(props()));
        }

        @Override
        public Set<String> makeReady(final Map<String, InternalTopicConfig> topics) {
            return new HashSet<>();
        }
    }

    private static final ProcessorSupplier<Object, Object, Object, Object> NO_OP = () -> new Processor<>() {
        @Override
        public void process(final Record<Object, Object> record) {
        }
    };

    private static String nodePrefix(final int index) {
        return String.format("S%05d", index);
    }

    /** Builds Kafka's topology from the crate's topology JSON with the Processor API. */
    private static InternalTopologyBuilder build(final JsonNode model, final List<Integer> ids) throws ReflectiveOperationException {
        final Topology topology = new Topology();
        final InternalTopologyBuilder itb = internalBuilder(topology);
        final Set<String> internal = new HashSet<>();
        for (final JsonNode r : model.path("repartitionTopics")) {
            internal.add(r.get("name").asText());
        }
        final Map<String, String> sourceNodeOfTopic = new HashMap<>();
        int index = 0;
        for (final JsonNode sub : model.get("subtopologies")) {
            final String prefix = nodePrefix(index++);
            ids.add(sub.get("id").asInt());
            final List<String> parents = new ArrayList<>();
            int k = 0;
            for (final JsonNode t : sub.get("sourceTopics")) {
                // One source node per topic, so that any topic can join a copartition group.
                final String name = prefix + "-source-" + k++;
                topology.addSource(name, t.asText());
                sourceNodeOfTopic.put(t.asText(), name);
                parents.add(name);
            }
            final String proc = prefix + "-process";
            topology.addProcessor(proc, NO_OP, parents.toArray(new String[0]));
            k = 0;
            for (final JsonNode t : sub.path("sinkTopics")) {
                topology.addSink(prefix + "-sink-" + k++, t.asText(), proc);
            }
            for (final JsonNode s : sub.path("stores")) {
                StoreBuilder<KeyValueStore<String, String>> store =
                    Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(s.get("name").asText()), Serdes.String(), Serdes.String());
                if (!s.path("loggingEnabled").asBoolean(true)) {
                    store = store.withLoggingDisabled();
                }
                topology.addStateStore(store, proc);
                if (s.hasNonNull("changelogTopic")) {
                    itb.connectSourceStoreAndTopic(s.get("name").asText(), s.get("changelogTopic").asText());
                }
            }
        }
        for (final JsonNode r : model.path("repartitionTopics")) {
            final Integer partitions = r.hasNonNull("partitions") ? r.get("partitions").asInt() : null;
            itb.addInternalTopic(r.get("name").asText(), new InternalTopicProperties(partitions));
        }
        for (final JsonNode g : model.path("copartitionGroups")) {
            final List<String> nodes = new ArrayList<>();
            for (final JsonNode t : g) {
                nodes.add(sourceNodeOfTopic.get(t.asText()));
            }
            itb.copartitionSources(nodes);
        }
        itb.setApplicationId(model.get("applicationId").asText());
        itb.buildTopology();
        return itb;
    }

    private static Properties propsFor(final JsonNode model) {
        final Properties p = props();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, model.get("applicationId").asText());
        return p;
    }

    private static Cluster cluster(final JsonNode metadata) {
        final List<PartitionInfo> partitions = new ArrayList<>();
        final Node[] none = new Node[0];
        metadata.path("partitions").properties().forEach(e -> {
            for (int p = 0; p < e.getValue().asInt(); p++) {
                partitions.add(new PartitionInfo(e.getKey(), p, null, none, none));
            }
        });
        return new Cluster("cluster", List.of(), partitions, Set.of(), Set.of());
    }

    /** Steps one and two of StreamsPartitionAssignor.assign, as far as tasks and topics go. */
    private static ObjectNode tasks(final JsonNode in) throws Exception {
        final JsonNode model = in.get("topology");
        final List<Integer> ids = new ArrayList<>();
        final InternalTopologyBuilder itb = build(model, ids);
        final TopologyMetadata topologyMetadata = new TopologyMetadata(itb, new StreamsConfig(propsFor(model)));
        final Cluster metadata = cluster(in.get("metadata"));
        final NoAdminTopicManager topicManager = new NoAdminTopicManager();

        final RepartitionTopics repartitionTopics =
            new RepartitionTopics(topologyMetadata, topicManager, new CopartitionedTopicsEnforcer(""), metadata, "");
        repartitionTopics.setup();
        if (!repartitionTopics.missingSourceTopicExceptions().isEmpty()) {
            throw new MissingSourceTopicException("Missing source topics. " + new TreeSet<>(repartitionTopics.missingSourceTopics()));
        }
        final Map<TopicPartition, PartitionInfo> repartitionPartitions = repartitionTopics.topicPartitionsInfo();
        final Cluster fullMetadata = metadata.withPartitions(repartitionPartitions);

        final Map<Subtopology, TopicsInfo> topicGroups =
            topologyMetadata.subtopologyTopicsInfoMapExcluding(repartitionTopics.topologiesWithMissingInputTopics());
        final Map<Subtopology, Set<String>> sourceTopicsByGroup = new HashMap<>();
        for (final Map.Entry<Subtopology, TopicsInfo> e : topicGroups.entrySet()) {
            sourceTopicsByGroup.put(e.getKey(), e.getValue().sourceTopics);
        }
        final Map<TaskId, Set<TopicPartition>> partitionsForTask =
            new PartitionGrouper().partitionGroups(sourceTopicsByGroup, fullMetadata);
        final Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
        for (final TaskId id : partitionsForTask.keySet()) {
            tasksForTopicGroup.computeIfAbsent(new Subtopology(id.subtopology(), id.topologyName()), k -> new HashSet<>()).add(id);
        }
        final ChangelogTopics changelogTopics = new ChangelogTopics(topicManager, topicGroups, tasksForTopicGroup, "");
        changelogTopics.setup();

        // The ids Kafka numbered the sub-topologies with, mapped back to the model's.
        final Map<Integer, Integer> modelId = new HashMap<>();
        for (final Subtopology s : topicGroups.keySet()) {
            modelId.put(s.nodeGroupId, ids.get(s.nodeGroupId));
        }

        final ObjectNode tasks = JSON.createObjectNode();
        final TreeMap<String, Integer> repartitionCounts = new TreeMap<>();
        for (final TopicPartition tp : repartitionPartitions.keySet()) {
            repartitionCounts.merge(tp.topic(), 1, Integer::sum);
        }
        final ObjectNode rc = tasks.putObject("repartitionTopicPartitions");
        repartitionCounts.forEach(rc::put);

        final TreeMap<String, Integer> changelogCounts = new TreeMap<>();
        for (final TopicsInfo info : topicGroups.values()) {
            for (final InternalTopicConfig c : info.nonSourceChangelogTopics()) {
                c.numberOfPartitions().ifPresent(n -> changelogCounts.put(c.name(), n));
            }
        }
        final ObjectNode cc = tasks.putObject("changelogTopicPartitions");
        changelogCounts.forEach(cc::put);

        final ObjectNode pft = tasks.putObject("partitionsForTask");
        for (final Map.Entry<String, Set<TopicPartition>> e : byModelTask(partitionsForTask, modelId).entrySet()) {
            pft.set(e.getKey(), partitionArray(e.getValue()));
        }
        final ObjectNode cft = tasks.putObject("changelogPartitionsForTask");
        for (final Map.Entry<String, Set<TopicPartition>> e : byModelTask(changelogTopics.changelogPartionsForTask(), modelId).entrySet()) {
            cft.set(e.getKey(), partitionArray(e.getValue()));
        }
        final ObjectNode out = JSON.createObjectNode();
        out.set("tasks", tasks);
        return out;
    }

    /** Task ids renamed to the model's sub-topology ids (if a mapping is given), in the crate's task order. */
    private static TreeMap<String, Set<TopicPartition>> byModelTask(final Map<TaskId, Set<TopicPartition>> in,
                                                                    final Map<Integer, Integer> modelId) {
        final TreeMap<TaskId, Set<TopicPartition>> sorted = new TreeMap<>();
        for (final Map.Entry<TaskId, Set<TopicPartition>> e : in.entrySet()) {
            final int id = modelId == null ? e.getKey().subtopology() : modelId.get(e.getKey().subtopology());
            sorted.put(new TaskId(id, e.getKey().partition()), e.getValue());
        }
        final TreeMap<String, Set<TopicPartition>> out = new TreeMap<>((a, b) -> TaskId.parse(a).compareTo(TaskId.parse(b)));
        sorted.forEach((k, v) -> out.put(k.toString(), v));
        return out;
    }

    private static ArrayNode partitionArray(final Collection<TopicPartition> partitions) {
        final ArrayNode a = JSON.createArrayNode();
        final TreeSet<TopicPartition> sorted = new TreeSet<>(ClientState.TOPIC_PARTITION_COMPARATOR);
        sorted.addAll(partitions);
        for (final TopicPartition tp : sorted) {
            a.add(tp.toString());
        }
        return a;
    }

    // ------------------------------------------------------------------ threads

    private static TaskId task(final JsonNode n) {
        return TaskId.parse(n.asText());
    }

    /**
     * The client, filled as the leader fills it: each consumer's reported offset sums (their key
     * sets are its previous stateful tasks), lags for the stateful tasks, then the assigned
     * active and standby tasks in ascending order.
     */
    private static ObjectNode threads(final JsonNode in) throws Exception {
        final JsonNode client = in.get("client");
        final ClientState state = new ClientState();
        final SortedSet<String> consumers = new TreeSet<>();
        for (final JsonNode c : client.get("consumers")) {
            consumers.add(c.asText());
        }
        final JsonNode previous = client.path("previousTasks");
        for (final String consumer : consumers) {
            final Map<TaskId, Long> sums = new HashMap<>();
            for (final JsonNode t : previous.path(consumer)) {
                sums.put(task(t), 0L);
            }
            state.addPreviousTasksAndOffsetSums(consumer, sums);
        }
        final Map<TaskId, Long> lags = new HashMap<>();
        client.path("lags").properties().forEach(e -> lags.put(TaskId.parse(e.getKey()), e.getValue().asLong()));
        setLags(state, lags);
        final TreeSet<TaskId> active = new TreeSet<>();
        for (final JsonNode t : client.path("active")) {
            active.add(task(t));
        }
        final TreeSet<TaskId> standby = new TreeSet<>();
        for (final JsonNode t : client.path("standby")) {
            standby.add(task(t));
        }
        for (final TaskId t : active) {
            state.assignActive(t);
        }
        for (final TaskId t : standby) {
            state.assignStandby(t);
        }

        final Map<String, Integer> threadLoad = new HashMap<>();
        final Map<String, List<TaskId>> statefulActive =
            StreamsPartitionAssignor.assignTasksToThreads(state.statefulActiveTasks(), true, consumers, state, threadLoad);
        final Map<String, List<TaskId>> standbys =
            StreamsPartitionAssignor.assignTasksToThreads(state.standbyTasks(), true, consumers, state, threadLoad);
        final Map<String, List<TaskId>> statelessActive =
            StreamsPartitionAssignor.assignTasksToThreads(state.statelessActiveTasks(), false, consumers, state, threadLoad);

        final ObjectNode threads = JSON.createObjectNode();
        for (final String consumer : consumers) {
            final ObjectNode c = threads.putObject(consumer);
            final ArrayNode a = c.putArray("active");
            statefulActive.get(consumer).forEach(t -> a.add(t.toString()));
            statelessActive.get(consumer).forEach(t -> a.add(t.toString()));
            final ArrayNode s = c.putArray("standby");
            standbys.get(consumer).forEach(t -> s.add(t.toString()));
        }
        final ObjectNode out = JSON.createObjectNode();
        out.set("threads", threads);
        return out;
    }

    /** Sets the client's lag totals directly (the private map ClientState.computeTaskLags fills). */
    @SuppressWarnings("unchecked")
    private static void setLags(final ClientState state, final Map<TaskId, Long> lags) throws ReflectiveOperationException {
        final Field f = ClientState.class.getDeclaredField("taskLagTotals");
        f.setAccessible(true);
        ((Map<TaskId, Long>) f.get(state)).putAll(lags);
    }

    // ------------------------------------------------------------------ members

    private static TopicPartition partition(final JsonNode n) {
        final String text = n.asText();
        final int dash = text.lastIndexOf('-');
        return new TopicPartition(text.substring(0, dash), Integer.parseInt(text.substring(dash + 1)));
    }

    private static List<TopicPartition> partitions(final JsonNode array) {
        final List<TopicPartition> out = new ArrayList<>();
        for (final JsonNode n : array) {
            out.add(partition(n));
        }
        return out;
    }

    private static List<TaskId> taskList(final JsonNode array) {
        final List<TaskId> out = new ArrayList<>();
        for (final JsonNode n : array) {
            out.add(task(n));
        }
        return out;
    }

    /**
     * One client's consumers with the tasks the thread split gave them, through
     * addClientAssignments (protocol version 11), each consumer's result decoded again.
     */
    private static ObjectNode members(final JsonNode in) throws Exception {
        final JsonNode m = in.get("member");
        final StreamsPartitionAssignor.ClientMetadata client =
            new StreamsPartitionAssignor.ClientMetadata(new ProcessId(new UUID(0, 1)), null, Map.of(), Optional.empty());
        final Map<String, List<TaskId>> active = new HashMap<>();
        final Map<String, List<TaskId>> standby = new HashMap<>();
        final JsonNode threads = m.get("threads");
        for (final Map.Entry<String, JsonNode> e : threads.properties()) {
            client.addConsumer(e.getKey(), partitions(m.path("ownedPartitions").path(e.getKey())));
            active.put(e.getKey(), taskList(e.getValue().get("active")));
            standby.put(e.getKey(), taskList(e.getValue().get("standby")));
        }
        final ClientState state = client.state();
        active.values().forEach(tasks -> tasks.forEach(state::assignActive));
        standby.values().forEach(tasks -> tasks.forEach(state::assignStandby));
        final Set<TaskId> previousStandby = new HashSet<>(taskList(m.path("previousStandbyTasks")));
        final Method addPreviousStandby = ClientState.class.getDeclaredMethod("addPreviousStandbyTasks", Set.class);
        addPreviousStandby.setAccessible(true);
        addPreviousStandby.invoke(state, previousStandby);
        if (m.hasNonNull("followupDeadline")) {
            state.setFollowupRebalanceDeadline(Instant.ofEpochMilli(m.get("followupDeadline").asLong()));
        }
        final Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
        for (final Map.Entry<String, JsonNode> e : m.get("partitionsForTask").properties()) {
            partitionsForTask.put(TaskId.parse(e.getKey()), new HashSet<>(partitions(e.getValue())));
        }
        final Set<TaskId> statefulTasks = new HashSet<>(taskList(m.get("statefulTasks")));
        final Set<TopicPartition> allOwned = new HashSet<>(partitions(m.get("allOwnedPartitions")));

        final StreamsPartitionAssignor assignor = new StreamsPartitionAssignor();
        final Field log = StreamsPartitionAssignor.class.getDeclaredField("log");
        log.setAccessible(true);
        log.set(assignor, LoggerFactory.getLogger(StreamsPartitionAssignor.class));
        final Method add = StreamsPartitionAssignor.class.getDeclaredMethod("addClientAssignments", Set.class, Map.class,
            StreamsPartitionAssignor.ClientMetadata.class, Map.class, Map.class, Map.class, Set.class, Map.class, Map.class,
            int.class, int.class);
        add.setAccessible(true);
        final Map<String, Assignment> assignment = new HashMap<>();
        add.invoke(assignor, statefulTasks, assignment, client, partitionsForTask, new HashMap<>(), new HashMap<>(), allOwned,
            active, standby, 11, 11);

        final ObjectNode members = JSON.createObjectNode();
        for (final String consumer : new TreeSet<>(assignment.keySet())) {
            final Assignment a = assignment.get(consumer);
            final AssignmentInfo info = AssignmentInfo.decode(a.userData());
            final ObjectNode c = members.putObject(consumer);
            final ArrayNode ps = c.putArray("activePartitions");
            a.partitions().forEach(tp -> ps.add(tp.toString()));
            final ArrayNode ts = c.putArray("activeTasks");
            info.activeTasks().forEach(t -> ts.add(t.toString()));
            final ObjectNode sb = c.putObject("standbyTasks");
            for (final Map.Entry<String, Set<TopicPartition>> e : byModelTask(info.standbyTasks(), null).entrySet()) {
                sb.set(e.getKey(), partitionArray(e.getValue()));
            }
            c.put("nextRebalance", info.nextRebalanceMs());
        }
        final ObjectNode out = JSON.createObjectNode();
        out.set("members", members);
        return out;
    }
}
