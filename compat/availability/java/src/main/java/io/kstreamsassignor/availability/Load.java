package io.kstreamsassignor.availability;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Sends record i (key {@code k<i mod keys>}, value i, timestamp the wall clock when it is sent: its
 * event time) to {@code A-input} at a steady {@code --rate} per second, idempotently with acks=all,
 * until {@code --stop-file} exists; prints {@code {"t":…,"sent":n}} every second and, after the
 * final flush, {@code {"done":true,"sent":n}}.
 */
final class Load {
    private Load() {}

    static void run(final Map<String, String> args) throws Exception {
        final long rate = Long.parseLong(args.get("rate"));
        final long keys = Long.parseLong(args.getOrDefault("keys", "60000"));
        final Path stop = Path.of(args.get("stop-file"));
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        final String topic = Main.input(args);
        final long start = System.nanoTime();
        long i = 0;
        long reported = 0;
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            while (!Files.exists(stop)) {
                final long now = System.nanoTime();
                final long due = (now - start) * rate / 1_000_000_000L;
                for (; i < due; i++) {
                    producer.send(new ProducerRecord<>(topic, null, System.currentTimeMillis(), "k" + (i % keys), Long.toString(i)));
                }
                if (now - reported >= 1_000_000_000L) {
                    System.out.println("{\"t\":" + System.currentTimeMillis() + ",\"sent\":" + i + "}");
                    System.out.flush();
                    reported = now;
                }
                Thread.sleep(2);
            }
            producer.flush();
        }
        System.out.println("{\"done\":true,\"sent\":" + i + "}");
    }
}
