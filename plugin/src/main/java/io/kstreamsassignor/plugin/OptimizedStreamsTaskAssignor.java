package io.kstreamsassignor.plugin;

import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's streams task assignor (KIP-1071) that runs the kstreams-assignor engine
 * ({@code optimized}) through JNI. List this class in the broker's {@code group.streams.assignors}
 * (with the jar on the broker's classpath) and select it per group with
 * {@code streams.assignor.name=optimized}.
 *
 * <p>Broker configs read (the coordinator hands its configs to {@link #configure}):
 * <ul>
 *   <li>{@value #NUM_WARMUP_REPLICAS_CONFIG} (default 2, at least 0) and
 *       {@value #ACCEPTABLE_RECOVERY_LAG_CONFIG} (default 10000), the coordinator's own. The first
 *       bounds every copy of a stateful task the assignor hands out beyond the group's
 *       {@code num.standby.replicas} (warm-ups, kept copies, spares: all standbys in the
 *       {@link GroupAssignment}); 0 hands out none. The broker gives its own value (from its
 *       properties), not a group's {@code streams.num.warmup.replicas};</li>
 *   <li>{@value #TIMEOUT_CONFIG} (default 1000): how long one call may take; past it the call
 *       fails and the group keeps its last assignment;</li>
 *   <li>{@value OptimizedTaskAssignor#NATIVE_LIBRARY_CONFIG}: the native library's path, by
 *       default the copy in this jar.</li>
 * </ul>
 *
 * <p>Thread-safe. Whatever goes wrong (the library does not load, the engine refuses the group,
 * the deadline passes, the response does not read) becomes a {@link TaskAssignorException} and
 * one log line; nothing else leaves {@link #assign}.
 */
public class OptimizedStreamsTaskAssignor implements TaskAssignor, Configurable {
    /** The name groups select with {@code streams.assignor.name}. */
    public static final String NAME = "optimized";
    /** The coordinator's warm-up replicas per group: here, the most extra copies per group. */
    public static final String NUM_WARMUP_REPLICAS_CONFIG = "group.streams.num.warmup.replicas";
    /** The coordinator's acceptable recovery lag. */
    public static final String ACCEPTABLE_RECOVERY_LAG_CONFIG = "group.streams.acceptable.recovery.lag";
    /** The most milliseconds one assignment may take. */
    public static final String TIMEOUT_CONFIG = "kstreams.assignor.streams.timeout.ms";

    private static final Logger LOG = LoggerFactory.getLogger(OptimizedStreamsTaskAssignor.class);
    private static final AtomicInteger THREADS = new AtomicInteger();
    /** The threads that run the native calls, so that a late one never holds a coordinator thread. */
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(r -> {
        final Thread t = new Thread(r, "kstreams-assignor-streams-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private final Clock clock;
    private final Function<byte[], byte[]> engine;
    private volatile StreamsCodec.Warmups warmups = new StreamsCodec.Warmups(2, 10_000L);
    private volatile long timeoutMs = 1_000L;
    private volatile String libraryPath;

    /** The assignor as the broker creates it. */
    public OptimizedStreamsTaskAssignor() {
        this(Clock.systemUTC(), null);
    }

    /**
     * An assignor with its own clock and engine (request bytes to response bytes; null for the
     * native library), for tests and benches.
     */
    public OptimizedStreamsTaskAssignor(final Clock clock, final Function<byte[], byte[]> engine) {
        this.clock = clock;
        this.engine = engine;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void configure(final Map<String, ?> configs) {
        if (configs == null) {
            return;
        }
        final long asked = number(configs, NUM_WARMUP_REPLICAS_CONFIG, 2);
        final int replicas = asked >= 0 && asked <= Integer.MAX_VALUE ? (int) asked : 2;
        if (replicas != asked) {
            LOG.warn("{}={} is out of range (0 to {}); using 2", NUM_WARMUP_REPLICAS_CONFIG, asked, Integer.MAX_VALUE);
        }
        final long lag = number(configs, ACCEPTABLE_RECOVERY_LAG_CONFIG, 10_000L);
        warmups = new StreamsCodec.Warmups(replicas, lag);
        timeoutMs = number(configs, TIMEOUT_CONFIG, 1_000L);
        final Object path = configs.get(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG);
        libraryPath = path == null ? null : path.toString();
    }

    private static long number(final Map<String, ?> configs, final String key, final long fallback) {
        final Object v = configs.get(key);
        if (v == null) {
            return fallback;
        }
        try {
            return v instanceof Number ? ((Number) v).longValue() : Long.parseLong(v.toString().trim());
        } catch (final NumberFormatException e) {
            LOG.warn("{}={} is not a number; using {}", key, v, fallback);
            return fallback;
        }
    }

    @Override
    public GroupAssignment assign(final GroupSpec groupSpec, final TopologyDescriber topologyDescriber) throws TaskAssignorException {
        final long started = System.nanoTime();
        final StreamsCodec.Response response;
        try {
            final byte[] request = StreamsCodec.writeRequest(clock.millis(), groupSpec, topologyDescriber, warmups);
            final byte[] bytes = call(request);
            response = StreamsCodec.readResponse(bytes);
        } catch (final TaskAssignorException e) {
            LOG.error("OptimizedStreamsTaskAssignor: {}; the group keeps its last assignment", e.getMessage());
            throw e;
        } catch (final Throwable t) {
            final String message = "the optimized streams assignor failed: " + NativeEngine.describe(t);
            LOG.error("OptimizedStreamsTaskAssignor: {}; the group keeps its last assignment", message, t);
            throw new TaskAssignorException(message, t);
        }
        final long micros = (System.nanoTime() - started) / 1_000;
        LOG.info("OptimizedStreamsTaskAssignor: {} ({} us, engine {} us)", response.summary, micros, response.engineNanos / 1_000);
        return response.assignment;
    }

    private byte[] call(final byte[] request) throws Exception {
        final String path = libraryPath;
        // The native engine stops by itself at the same deadline, so a call given up here leaves
        // no work running on the pool's thread.
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        final Future<byte[]> future = CALLS.submit(() -> {
            if (engine != null) {
                return engine.apply(request);
            }
            NativeEngine.ensureLoaded(path);
            return NativeEngine.assignStreamsWithin(request, deadline - System.nanoTime());
        });
        try {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (final TimeoutException e) {
            future.cancel(true);
            throw new TaskAssignorException("the assignment took more than " + timeoutMs + " ms (" + TIMEOUT_CONFIG + ")");
        } catch (final ExecutionException e) {
            throw new TaskAssignorException("the optimized streams assignor failed: " + NativeEngine.describe(e.getCause()), e.getCause());
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TaskAssignorException("interrupted while assigning", e);
        }
    }
}
