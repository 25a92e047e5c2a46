package io.kstreamsassignor.availability;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * One sub-topology: {@code A-input} → {@code update} (puts a value into the RocksDB store
 * {@code state}, logged to {@code A-state-changelog}) → {@code A-output}. Each output record is the
 * input record forwarded: same key, same value (its sequence number), same timestamp (the event
 * time the producer set), so the reader's latency is the end-to-end latency of that event.
 *
 * <p>Writes one JSON line to standard output per hook call, {@code {"t":ms,"i":instance,"ev":…}}:
 * {@code process-start}/{@code process-stop} (the processor's init and close, with
 * {@code context.taskId()}), {@code restore-start}/{@code restore-end}/{@code restore-suspend}
 * (StateRestoreListener, with the records restored), {@code standby-start}/{@code standby-stop}
 * (StandbyUpdateListener, with the records loaded and the reason), {@code state} (the
 * KafkaStreams.StateListener), and {@code closed}. The changelog's partition p is task 0_p.
 */
final class App {
    static final String STORE = "state";

    private App() {}

    static Topology topology(final String input, final String output, final String instance) {
        final Topology topology = new Topology();
        topology.addSource("in", new StringDeserializer(), new StringDeserializer(), input);
        topology.addProcessor("update", () -> new Update(instance), "in");
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STORE),
            Serdes.String(), Serdes.ByteArray()), "update");
        topology.addSink("out", output, new StringSerializer(), new StringSerializer(), "update");
        return topology;
    }

    /** Records the task's processing interval from its own init and close. */
    private static final class Update implements Processor<String, String, String, String> {
        private final String instance;
        private ProcessorContext<String, String> context;
        private KeyValueStore<String, byte[]> store;

        Update(final String instance) {
            this.instance = instance;
        }

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            this.store = context.getStateStore(STORE);
            event(instance, "process-start", context.taskId(), "");
        }

        @Override
        public void process(final Record<String, String> record) {
            store.put(record.key(), record.value().getBytes());
            context.forward(record);
        }

        @Override
        public void close() {
            event(instance, "process-stop", context.taskId(), "");
        }
    }

    static void run(final Map<String, String> args, final List<String> configs) throws Exception {
        final String instance = args.get("instance");
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args.get("app-id"));
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        props.put(StreamsConfig.STATE_DIR_CONFIG, args.get("state-dir"));
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, instance + ".availability.invalid:8080");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        for (final String kv : configs) {
            final int eq = kv.indexOf('=');
            props.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        final KafkaStreams streams = new KafkaStreams(topology(Main.input(args), Main.output(args), instance), props);
        final Map<TopicPartition, AtomicLong> restoring = new ConcurrentHashMap<>();
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(final TopicPartition tp, final String store, final long start, final long end) {
                restoring.put(tp, new AtomicLong());
                event(instance, "restore-start", task(tp), ",\"from\":" + start + ",\"to\":" + end);
            }

            @Override
            public void onBatchRestored(final TopicPartition tp, final String store, final long batchEnd, final long records) {
                restoring.computeIfAbsent(tp, x -> new AtomicLong()).addAndGet(records);
            }

            @Override
            public void onRestoreEnd(final TopicPartition tp, final String store, final long total) {
                restoring.remove(tp);
                event(instance, "restore-end", task(tp), ",\"records\":" + total);
            }

            @Override
            public void onRestoreSuspended(final TopicPartition tp, final String store, final long total) {
                final AtomicLong done = restoring.remove(tp);
                event(instance, "restore-suspend", task(tp), ",\"records\":" + (done == null ? total : done.get()));
            }
        });
        final Map<TopicPartition, AtomicLong> updating = new ConcurrentHashMap<>();
        streams.setStandbyUpdateListener(new StandbyUpdateListener() {
            @Override
            public void onUpdateStart(final TopicPartition tp, final String store, final long start) {
                updating.put(tp, new AtomicLong());
                event(instance, "standby-start", task(tp), ",\"from\":" + start);
            }

            @Override
            public void onBatchLoaded(final TopicPartition tp, final String store, final TaskId id, final long batchEnd,
                                      final long size, final long endOffset) {
                updating.computeIfAbsent(tp, x -> new AtomicLong()).addAndGet(size);
            }

            @Override
            public void onUpdateSuspended(final TopicPartition tp, final String store, final long stored, final long end,
                                          final SuspendReason reason) {
                final AtomicLong loaded = updating.remove(tp);
                event(instance, "standby-stop", task(tp), ",\"records\":" + (loaded == null ? 0 : loaded.get())
                    + ",\"reason\":\"" + reason + "\"");
            }
        });
        final CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            report(instance, "\"ev\":\"state\",\"from\":\"" + before + "\",\"to\":\"" + now + "\"");
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            report(instance, "\"ev\":\"error\",\"error\":" + Main.quote(e.toString()));
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        // A graceful scale-in leaves the group; a bounce closes as Kafka Streams does by default.
        final CloseOptions close = CloseOptions.groupMembershipOperation(
                Boolean.parseBoolean(args.getOrDefault("leave-on-close", "false"))
                    ? CloseOptions.GroupMembershipOperation.LEAVE_GROUP : CloseOptions.GroupMembershipOperation.DEFAULT)
            .withTimeout(Duration.ofSeconds(60));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(close);
            report(instance, "\"ev\":\"closed\"");
        }));
        streams.start();
        done.await();
        System.exit(streams.state() == KafkaStreams.State.ERROR ? 1 : 0);
    }

    private static TaskId task(final TopicPartition changelog) {
        return new TaskId(0, changelog.partition());
    }

    private static void event(final String instance, final String what, final TaskId task, final String fields) {
        report(instance, "\"ev\":\"" + what + "\",\"task\":\"" + task + "\"" + fields);
    }

    private static synchronized void report(final String instance, final String fields) {
        System.out.println("{\"t\":" + System.currentTimeMillis() + ",\"i\":" + Main.quote(instance) + "," + fields + "}");
        System.out.flush();
    }
}
