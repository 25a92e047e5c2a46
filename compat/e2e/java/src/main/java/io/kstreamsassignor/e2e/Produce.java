package io.kstreamsassignor.e2e;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Produces records {@code from..from+count-1} of the {@link Workload} to its input topic ({@code --input}) at about
 * {@code rate} records per second (0: as fast as possible), idempotently with acks=all. With
 * {@code --partitions N} it first creates the input and output topics.
 */
final class Produce {
    private Produce() {}

    static void run(final Args args) throws Exception {
        final String bootstrap = args.get("bootstrap");
        final int partitions = (int) args.getLong("partitions", 0);
        if (partitions > 0) {
            final Properties admin = new Properties();
            admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin client = Admin.create(admin)) {
                for (final String topic : List.of(Workload.input(args), Workload.output(args))) {
                    try {
                        client.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
                    } catch (final ExecutionException e) {
                        if (!(e.getCause() instanceof TopicExistsException)) {
                            throw e;
                        }
                    }
                }
            }
        }
        final String input = Workload.input(args);
        final long from = args.getLong("from", 0);
        final long count = args.getLong("count", 0);
        final long rate = args.getLong("rate", 0);
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        final long start = System.nanoTime();
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (long i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(input, Workload.key(i), Workload.word(i)));
                if (rate > 0) {
                    final long due = start + (i - from + 1) * 1_000_000_000L / rate;
                    final long wait = due - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
                    }
                }
            }
            producer.flush();
        }
        System.out.println("{\"produced\":" + count + ",\"from\":" + from + ",\"ms\":"
            + (System.nanoTime() - start) / 1_000_000L + "}");
    }
}
