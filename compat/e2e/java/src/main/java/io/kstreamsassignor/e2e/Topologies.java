package io.kstreamsassignor.e2e;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;

/**
 * The commands of compat/e2e/topologies.sh over the applications of {@link Apps}:
 *
 * <ul>
 *   <li>{@code topo-prepare --bootstrap B --prefix P --base T --apps a,b --groups s,c --dir D}: per
 *       application creates its input topics {@code P-<app>-<input>} and an output topic
 *       {@code P-<app>-<group>-out} per group suffix, produces its input, writes
 *       {@code D/<app>-<group>.txt} (the {@code Topology#describe()} text of the application as
 *       that group runs it) and prints one JSON line per application (sub-topologies, global
 *       stores, records); for an application that fixes repartition partition counts also
 *       {@code D/<app>-<group>.json}, its topology in the crate's topology JSON with those counts.</li>
 *   <li>{@code topo-describe --app A --prefix P --group G --out FILE [--json FILE]}: writes the
 *       {@code Topology#describe()} text of application A as group G runs it (no broker needed);
 *       with {@code --json FILE} also its topology JSON, as topo-prepare writes it.</li>
 *   <li>{@code topo-app --app A --prefix P --group G …} (CountApp's options): runs application A
 *       as application id {@code P-A-G}, writing {@code P-A-G-out}.</li>
 *   <li>{@code topo-verify --bootstrap B --app A --prefix P --group G --base T --timeout-ms N}:
 *       waits until the last value per key of {@code P-A-G-out} (read_committed) is exactly
 *       {@link Apps.App#expected}; exit 0, or 1 with the difference.</li>
 * </ul>
 */
final class Topologies {
    private Topologies() {}

    static String prefix(final Args args, final Apps.App app) {
        return args.get("prefix") + "-" + app.name();
    }

    static String output(final String appPrefix, final String group) {
        return appPrefix + "-" + group + "-out";
    }

    static void prepare(final Args args) throws Exception {
        final long base = args.getLong("base", -1);
        final Path dir = Path.of(args.get("dir"));
        final List<String> groups = List.of(args.get("groups").split(","));
        final Properties admin = new Properties();
        admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        try (Admin client = Admin.create(admin);
             KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (final String name : args.get("apps").split(",")) {
                final Apps.App app = Apps.get(name);
                final String p = prefix(args, app);
                final List<NewTopic> topics = new ArrayList<>();
                app.inputs().forEach((t, n) -> topics.add(new NewTopic(p + "-" + t, n, (short) 1)));
                for (final String g : groups) {
                    topics.add(new NewTopic(output(p, g), 4, (short) 1));
                }
                for (final NewTopic t : topics) {
                    try {
                        client.createTopics(List.of(t)).all().get();
                    } catch (final ExecutionException e) {
                        if (!(e.getCause() instanceof TopicExistsException)) {
                            throw e;
                        }
                    }
                }
                final List<Apps.Rec> input = app.input(base);
                for (final Apps.Rec r : input) {
                    producer.send(new ProducerRecord<>(p + "-" + r.topic(), r.partition() < 0 ? null : r.partition(),
                        r.ts(), r.key(), r.value()));
                }
                producer.flush();
                TopologyDescription d = null;
                for (final String g : groups) {
                    final Topology t = Apps.topology(app, p, output(p, g));
                    d = t.describe();
                    Files.writeString(dir.resolve(app.name() + "-" + g + ".txt"), d.toString(), StandardCharsets.UTF_8);
                    if (!app.fixedPartitions().isEmpty()) {
                        Files.writeString(dir.resolve(app.name() + "-" + g + ".json"),
                            topologyJson(d, p + "-" + g, app.fixedPartitions()), StandardCharsets.UTF_8);
                    }
                }
                System.out.println("{\"app\":\"" + app.name() + "\",\"subtopologies\":" + d.subtopologies().size()
                    + ",\"globalStores\":" + d.globalStores().size() + ",\"records\":" + input.size()
                    + ",\"expectedKeys\":" + app.expected(input).size() + "}");
            }
        }
    }

    /**
     * The crate's topology JSON (docs/topology.md) of a topology without joins, with the fixed
     * partition counts its describe() text does not show: per sub-topology its source and sink
     * topics and stores; repartition topics are those one sub-topology writes and another reads.
     */
    static String topologyJson(final TopologyDescription d, final String applicationId, final Map<String, Integer> fixed) {
        final Map<Integer, List<String>> sources = new TreeMap<>();
        final Map<Integer, List<String>> sinks = new TreeMap<>();
        final Map<Integer, List<String>> stores = new TreeMap<>();
        for (final TopologyDescription.Subtopology sub : d.subtopologies()) {
            final java.util.TreeSet<String> in = new java.util.TreeSet<>();
            final java.util.TreeSet<String> out = new java.util.TreeSet<>();
            final java.util.TreeSet<String> st = new java.util.TreeSet<>();
            for (final TopologyDescription.Node n : sub.nodes()) {
                if (n instanceof TopologyDescription.Source) {
                    in.addAll(((TopologyDescription.Source) n).topicSet());
                } else if (n instanceof TopologyDescription.Sink && ((TopologyDescription.Sink) n).topic() != null) {
                    out.add(((TopologyDescription.Sink) n).topic());
                } else if (n instanceof TopologyDescription.Processor) {
                    st.addAll(((TopologyDescription.Processor) n).stores());
                }
            }
            if (in.size() > 1) {
                throw new IllegalStateException("sub-topology " + sub.id() + " reads " + in + ": a join needs its co-partition group");
            }
            sources.put(sub.id(), new ArrayList<>(in));
            sinks.put(sub.id(), new ArrayList<>(out));
            stores.put(sub.id(), new ArrayList<>(st));
        }
        final java.util.TreeSet<String> read = new java.util.TreeSet<>();
        sources.values().forEach(read::addAll);
        final java.util.TreeSet<String> repartition = new java.util.TreeSet<>();
        sinks.values().forEach(l -> l.stream().filter(t -> read.contains(t) && t.endsWith("-repartition")).forEach(repartition::add));
        final Function<List<String>, String> list = l -> l.stream().map(t -> "\"" + t + "\"").collect(Collectors.joining(", ", "[", "]"));
        final StringBuilder b = new StringBuilder("{\n  \"applicationId\": \"" + applicationId + "\",\n  \"subtopologies\": [\n");
        b.append(sources.keySet().stream().map(id -> "    {\"id\": " + id + ", \"sourceTopics\": " + list.apply(sources.get(id))
            + ", \"sinkTopics\": " + list.apply(sinks.get(id)) + ", \"stores\": "
            + stores.get(id).stream().map(s -> "{\"name\": \"" + s + "\"}").collect(Collectors.joining(", ", "[", "]")) + "}")
            .collect(Collectors.joining(",\n")));
        b.append("\n  ],\n  \"repartitionTopics\": [");
        b.append(repartition.stream().map(t -> "{\"name\": \"" + t + "\"" + (fixed.containsKey(t) ? ", \"partitions\": " + fixed.get(t) : "") + "}")
            .collect(Collectors.joining(", ")));
        return b.append("]\n}\n").toString();
    }

    static void describe(final Args args) throws Exception {
        final Apps.App app = Apps.get(args.get("app"));
        final String p = prefix(args, app);
        final TopologyDescription d = Apps.topology(app, p, output(p, args.get("group"))).describe();
        Files.writeString(Path.of(args.get("out")), d.toString(), StandardCharsets.UTF_8);
        if (!args.get("json", "").isEmpty()) {
            Files.writeString(Path.of(args.get("json")), topologyJson(d, p + "-" + args.get("group"), app.fixedPartitions()),
                StandardCharsets.UTF_8);
        }
    }

    static void app(final Args args) throws Exception {
        final Apps.App app = Apps.get(args.get("app"));
        final String p = prefix(args, app);
        args.put("app-id", p + "-" + args.get("group"));
        final Properties defaults = new Properties();
        defaults.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        defaults.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        CountApp.run(args, Apps.topology(app, p, output(p, args.get("group"))), defaults);
    }

    static int verify(final Args args) {
        final Apps.App app = Apps.get(args.get("app"));
        final String p = prefix(args, app);
        final String topic = output(p, args.get("group"));
        final Map<String, String> expected = new TreeMap<>(app.expected(app.input(args.getLong("base", -1))));
        final long deadline = System.currentTimeMillis() + args.getLong("timeout-ms", 60_000);
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        final Map<String, String> latest = new HashMap<>();
        long records = 0;
        try (KafkaConsumer<String, String> consumer =
                 new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            final List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(i -> new TopicPartition(i.topic(), i.partition())).collect(Collectors.toList());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (System.currentTimeMillis() < deadline) {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(300))) {
                    records++;
                    if (r.value() == null) {
                        latest.remove(r.key());
                    } else {
                        latest.put(r.key(), r.value());
                    }
                }
                if (latest.equals(expected)) {
                    System.out.println("{\"exact\":true,\"keys\":" + expected.size() + ",\"records\":" + records + "}");
                    return 0;
                }
            }
        }
        final Map<String, String> diff = new TreeMap<>();
        expected.forEach((k, v) -> {
            if (!v.equals(latest.get(k))) {
                diff.put(k, "expected " + v + ", got " + latest.get(k));
            }
        });
        latest.forEach((k, v) -> {
            if (!expected.containsKey(k)) {
                diff.put(k, "unexpected " + v);
            }
        });
        final String shown = diff.entrySet().stream().limit(20).map(e -> e.getKey() + ": " + e.getValue())
            .collect(Collectors.joining("; "));
        System.out.println("{\"exact\":false,\"keys\":" + expected.size() + ",\"records\":" + records
            + ",\"wrongKeys\":" + diff.size() + ",\"diff\":\"" + shown.replace("\"", "'") + "\"}");
        return 1;
    }
}
