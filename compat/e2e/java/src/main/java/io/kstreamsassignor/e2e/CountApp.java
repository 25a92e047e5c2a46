package io.kstreamsassignor.e2e;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * Counts words into the logged store {@code counts}: sub-topology 0 re-keys the input by word
 * (stateless, through {@code <app>-by-word-repartition}), sub-topology 1 counts (stateful, changelog
 * {@code <app>-counts-changelog}) and writes to the output topic. It reads {@code --input} and
 * writes {@code --output} ({@link Workload#INPUT} and {@link Workload#OUTPUT} by default).
 *
 * <p>Prints one JSON line whenever its state, its tasks or its restored count change:
 * {@code {"t":…,"instance":…,"state":…,"active":[…],"standby":[…],"restored":…}}, where
 * {@code restored} is how many changelog records this instance's active tasks have restored so
 * far, and runs until SIGTERM.
 */
final class CountApp {
    private CountApp() {}

    static Topology topology() {
        return topology(Workload.INPUT, Workload.OUTPUT);
    }

    static Topology topology(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .groupBy((key, word) -> word, Grouped.with("by-word", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    static void run(final Args args) throws Exception {
        run(args, topology(Workload.input(args), Workload.output(args)), new Properties());
    }

    /**
     * Runs {@code topology} as described above; {@code defaults} are set before the {@code --config}
     * values (the applications of {@link Apps} set String serdes as defaults).
     */
    static void run(final Args args, final Topology topology, final Properties defaults) throws Exception {
        final String instance = args.get("instance");
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args.get("app-id"));
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        props.put(StreamsConfig.STATE_DIR_CONFIG, args.get("state-dir"));
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args.get("threads", "2"));
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, args.get("endpoint", "localhost:0"));
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 10_000);
        props.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 1_000);
        props.put(StreamsConfig.producerPrefix("transaction.timeout.ms"), 10_000);
        props.putAll(defaults);
        for (final String kv : args.configs) {
            final int eq = kv.indexOf('=');
            props.put(kv.substring(0, eq), kv.substring(eq + 1));
        }

        final String describeOut = args.get("describe-out", "");
        if (!describeOut.isEmpty()) {
            Files.writeString(Path.of(describeOut), topology.describe().toString(), StandardCharsets.UTF_8);
        }

        final KafkaStreams streams = new KafkaStreams(topology, props);
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicLong restored = new AtomicLong();
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(final TopicPartition partition, final String store, final long start, final long end) {}

            @Override
            public void onBatchRestored(final TopicPartition partition, final String store, final long batchEnd, final long records) {
                restored.addAndGet(records);
            }

            @Override
            public void onRestoreEnd(final TopicPartition partition, final String store, final long total) {}
        });
        streams.setUncaughtExceptionHandler(e -> {
            report(instance, "\"error\":" + quote(e.toString()));
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            report(instance, "\"state\":\"CLOSED\"");
        }));
        streams.start();

        String last = "";
        while (!done.await(200, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            final Set<String> active = new TreeSet<>();
            final Set<String> standby = new TreeSet<>();
            try {
                for (final ThreadMetadata thread : streams.metadataForLocalThreads()) {
                    thread.activeTasks().forEach(t -> active.add(t.taskId().toString()));
                    thread.standbyTasks().forEach(t -> standby.add(t.taskId().toString()));
                }
            } catch (final RuntimeException e) {
                continue;
            }
            final String line = "\"state\":\"" + streams.state() + "\",\"active\":" + list(active)
                + ",\"standby\":" + list(standby) + ",\"restored\":" + restored.get();
            if (!line.equals(last)) {
                report(instance, line);
                last = line;
            }
        }
        report(instance, "\"state\":\"" + streams.state() + "\"");
        System.exit(streams.state() == KafkaStreams.State.ERROR ? 1 : 0);
    }

    private static String list(final Set<String> tasks) {
        return tasks.stream().map(CountApp::quote).collect(Collectors.joining(",", "[", "]"));
    }

    private static String quote(final String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static synchronized void report(final String instance, final String fields) {
        System.out.println("{\"t\":" + System.currentTimeMillis() + ",\"instance\":" + quote(instance) + "," + fields + "}");
        System.out.flush();
    }

}
