package io.kstreamsassignor.availability;

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads {@code A-output} (read_committed, every partition from the start) and writes one line per
 * record to {@code --out}: {@code received_ms event_ms partition sequence}. The end-to-end latency
 * of the event is received − event time. Prints {@code {"t":…,"read":n}} every second and stops
 * once {@code --stop-file} exists.
 */
final class Reader {
    private Reader() {}

    static void run(final Map<String, String> args) throws Exception {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 50);
        final Path stop = Path.of(args.get("stop-file"));
        long read = 0;
        long reported = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
             BufferedWriter out = new BufferedWriter(new FileWriter(args.get("out")))) {
            final List<TopicPartition> partitions = consumer.partitionsFor(Main.output(args)).stream()
                .map(p -> new TopicPartition(p.topic(), p.partition())).collect(Collectors.toList());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (!Files.exists(stop)) {
                final ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                final long now = System.currentTimeMillis();
                for (final ConsumerRecord<String, String> r : records) {
                    out.write(now + " " + r.timestamp() + " " + r.partition() + " " + r.value() + "\n");
                    read++;
                }
                out.flush();
                if (now - reported >= 1000) {
                    System.out.println("{\"t\":" + now + ",\"read\":" + read + "}");
                    System.out.flush();
                    reported = now;
                }
            }
        }
        System.out.println("{\"done\":true,\"read\":" + read + "}");
    }
}
