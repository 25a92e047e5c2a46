package io.kstreamsassignor.e2e;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads the committed output ({@code --output}, read_committed) from the beginning and waits until the latest count
 * per word equals the exact count of records {@code 0..total-1}. With {@code --at-least N} it only
 * waits until the counts add up to at least N (processing has progressed), without the exactness check.
 * Exit status 0 on success, 1 with a diff on timeout.
 */
final class Verify {
    private Verify() {}

    static int run(final Args args) {
        final long total = args.getLong("total", -1);
        final long atLeast = args.getLong("at-least", -1);
        final long timeoutMs = args.getLong("timeout-ms", 120_000);
        final Map<String, Long> expected = total >= 0 ? Workload.expectedCounts(total) : Map.of();
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        final Map<String, Long> latest = new HashMap<>();
        final long deadline = System.currentTimeMillis() + timeoutMs;
        try (KafkaConsumer<String, Long> consumer =
                 new KafkaConsumer<>(props, new StringDeserializer(), new LongDeserializer())) {
            final List<TopicPartition> partitions = consumer.partitionsFor(Workload.output(args)).stream()
                .map((PartitionInfo p) -> new TopicPartition(p.topic(), p.partition()))
                .collect(Collectors.toList());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (System.currentTimeMillis() < deadline) {
                for (final ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(500))) {
                    latest.put(r.key(), r.value());
                }
                final long sum = latest.values().stream().mapToLong(Long::longValue).sum();
                if (atLeast >= 0 && sum >= atLeast) {
                    System.out.println("{\"progress\":" + sum + "}");
                    return 0;
                }
                if (total >= 0 && latest.equals(expected)) {
                    System.out.println("{\"exact\":true,\"words\":" + expected.size() + ",\"total\":" + sum + "}");
                    return 0;
                }
            }
        }
        final long sum = latest.values().stream().mapToLong(Long::longValue).sum();
        final Map<String, String> diff = new TreeMap<>();
        for (final String word : expected.keySet()) {
            if (!expected.get(word).equals(latest.get(word))) {
                diff.put(word, "expected " + expected.get(word) + ", got " + latest.get(word));
            }
        }
        for (final String word : latest.keySet()) {
            if (!expected.containsKey(word) && total >= 0) {
                diff.put(word, "unexpected " + latest.get(word));
            }
        }
        System.out.println("{\"exact\":false,\"total\":" + sum + ",\"wanted\":" + (total >= 0 ? total : atLeast)
            + ",\"diff\":\"" + diff + "\"}");
        return 1;
    }
}
