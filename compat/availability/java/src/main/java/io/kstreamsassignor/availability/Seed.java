package io.kstreamsassignor.availability;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Creates the run's topics ({@code --partitions} each; the changelog compacted, as Kafka Streams
 * makes it) and writes {@code --records-per-task} distinct keys of {@code --value-bytes} bytes into
 * every changelog partition, in the store's own serialization (String keys, byte[] values): the
 * state the application restores, without processing it first.
 */
final class Seed {
    private Seed() {}

    static void run(final Map<String, String> args) throws Exception {
        final int partitions = Integer.parseInt(args.get("partitions"));
        final long perTask = Long.parseLong(args.get("records-per-task"));
        final int valueBytes = Integer.parseInt(args.getOrDefault("value-bytes", "100"));
        final String changelog = Main.changelog(args);
        try (Admin admin = Main.admin(args)) {
            admin.createTopics(List.of(
                new NewTopic(Main.input(args), partitions, (short) 1),
                new NewTopic(Main.output(args), partitions, (short) 1),
                new NewTopic(changelog, partitions, (short) 1)
                    .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))))
                .all().get();
        }
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 20);
        props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 64L * 1024 * 1024);
        final long start = System.nanoTime();
        final byte[] value = new byte[valueBytes];
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (long i = 0; i < perTask; i++) {
                for (int p = 0; p < partitions; p++) {
                    final byte[] key = ("s" + p + "-" + i).getBytes();
                    for (int b = 0; b < valueBytes; b++) {
                        value[b] = (byte) ('a' + (i * 31 + b) % 26);
                    }
                    producer.send(new ProducerRecord<>(changelog, p, key, value.clone()));
                }
            }
            producer.flush();
        }
        System.out.println("{\"seeded\":" + perTask * partitions + ",\"perTask\":" + perTask + ",\"ms\":"
            + (System.nanoTime() - start) / 1_000_000L + "}");
    }
}
