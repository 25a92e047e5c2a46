package io.kstreamsassignor.plugin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Clock;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KIP-924 task assignor that runs the kstreams-assignor engine ({@code optimized}) through JNI.
 * Set {@code task.assignor.class} to this class's name.
 *
 * <p>Configs read from the Streams config, besides Kafka's own assignment configs:
 * <ul>
 *   <li>{@value #NATIVE_LIBRARY_CONFIG}: the path of the native library; by default the copy
 *       packaged in this jar for this platform;</li>
 *   <li>{@value #DUMP_DIR_CONFIG}: a folder that receives each rebalance's input as
 *       {@code <application.id>-<nowMs>.json}, readable by {@code kstreams-assignor assign --input};</li>
 *   <li>every other key the engine accepts ({@link NativeEngine#configKeys()}).</li>
 * </ul>
 *
 * <p>Whatever goes wrong on the way (the library cannot be loaded, the engine refuses the state,
 * the response does not read, or the assignment is not valid for the state), the rebalance is not
 * failed: one ERROR is logged and Kafka's {@link StickyTaskAssignor} assigns this rebalance.
 */
public class OptimizedTaskAssignor implements TaskAssignor {
    /** The path of the native library to load instead of the packaged one. */
    public static final String NATIVE_LIBRARY_CONFIG = "kstreams.assignor.native.library";
    /** A folder for the support dump of every rebalance. */
    public static final String DUMP_DIR_CONFIG = "kstreams.assignor.dump.dir";
    /** Kafka Streams' {@code application.id}. */
    public static final String APPLICATION_ID_CONFIG = "application.id";

    private static final Logger LOG = LoggerFactory.getLogger(OptimizedTaskAssignor.class);

    private final Clock clock;
    private Map<String, ?> configs = Collections.emptyMap();
    private volatile Outcome lastOutcome;

    /** The assignor as Kafka Streams creates it. */
    public OptimizedTaskAssignor() {
        this(Clock.systemUTC());
    }

    /** An assignor that reads the time from {@code clock} (follow-up deadlines and restore rates use it). */
    public OptimizedTaskAssignor(final Clock clock) {
        this.clock = clock;
    }

    @Override
    public void configure(final Map<String, ?> configs) {
        this.configs = configs == null ? Collections.emptyMap() : Collections.unmodifiableMap(new HashMap<>(configs));
    }

    @Override
    public TaskAssignment assign(final ApplicationState applicationState) {
        final long nowMs = clock.millis();
        final String applicationId = stringConfig(APPLICATION_ID_CONFIG);
        final String dumpDir = stringConfig(DUMP_DIR_CONFIG);
        final String libraryPath = stringConfig(NATIVE_LIBRARY_CONFIG);
        Stage stage = Stage.LOAD;
        final ResponseReader.Response response;
        try {
            NativeEngine.ensureLoaded(libraryPath);
            stage = Stage.CONFIG_KEYS;
            final List<String> engineKeys = Arrays.asList(NativeEngine.configKeys());
            stage = Stage.WRITE;
            final Map<String, String> requestConfigs =
                RequestWriter.configs(applicationState.assignmentConfigs(), configs, engineKeys);
            final byte[] request = RequestWriter.write(applicationState, applicationId, nowMs,
                dumpDir != null ? RequestWriter.FLAG_DUMP : 0, requestConfigs);
            stage = Stage.CALL;
            final byte[] responseBytes = NativeEngine.assign(request);
            stage = Stage.READ;
            response = ResponseReader.read(responseBytes);
            stage = Stage.VALIDATE;
            final AssignmentError error = TaskAssignmentUtils.validateTaskAssignment(applicationState, response.assignment());
            if (error != AssignmentError.NONE) {
                throw new IllegalStateException("Kafka Streams' validation reports " + error);
            }
        } catch (final Throwable t) {
            final String reason = stage.describe(t);
            LOG.error("{}; this rebalance uses Kafka's StickyTaskAssignor", reason);
            LOG.debug("Details of the native engine failure", t);
            final StickyTaskAssignor fallback = new StickyTaskAssignor();
            fallback.configure(configs);
            final TaskAssignment assignment = fallback.assign(applicationState);
            lastOutcome = new Outcome(nowMs, null, reason, null);
            return assignment;
        }

        LOG.info("Assigned the tasks of {} with the native engine in {} ms: {}", applicationId,
            String.format("%.1f", response.engineNanos() / 1e6), response.summary());
        Path dumpFile = null;
        if (dumpDir != null) {
            dumpFile = writeDump(dumpDir, applicationId, nowMs, response.dump());
        }
        lastOutcome = new Outcome(nowMs, response, null, dumpFile);
        return response.assignment();
    }

    @Override
    public void onAssignmentComputed(final GroupAssignment assignment,
                                     final GroupSubscription subscription,
                                     final AssignmentError error) {
        if (error != null && error != AssignmentError.NONE) {
            LOG.error("Kafka Streams rejected the task assignment of this rebalance: {}", error);
        }
    }

    /** What the last {@link #assign} of this instance did; null before the first. */
    public Outcome lastOutcome() {
        return lastOutcome;
    }

    private String stringConfig(final String key) {
        final Object value = configs.get(key);
        if (value == null) {
            return null;
        }
        final String text = value.toString();
        return text.isEmpty() ? null : text;
    }

    private static Path writeDump(final String dumpDir, final String applicationId, final long nowMs, final String dump) {
        final Path file = Paths.get(dumpDir, (applicationId == null ? "unknown-application" : applicationId) + "-" + nowMs + ".json");
        if (dump == null) {
            LOG.warn("The native engine returned no input dump; nothing was written to {}", file);
            return null;
        }
        try {
            Files.createDirectories(file.getParent());
            Files.write(file, dump.getBytes(StandardCharsets.UTF_8));
            return file;
        } catch (final IOException | RuntimeException e) {
            LOG.warn("Could not write the rebalance's input dump to {}: {}", file, NativeEngine.describe(e));
            return null;
        }
    }

    /** Where in {@link #assign} a failure happened, for its log message. */
    private enum Stage {
        LOAD, CONFIG_KEYS, WRITE, CALL, READ, VALIDATE;

        String describe(final Throwable t) {
            final String cause = NativeEngine.describe(t);
            switch (this) {
                case LOAD:
                    // The load exception's message already names the source and the cause.
                    return t instanceof NativeEngine.NativeEngineLoadException ? t.getMessage()
                        : "the native engine could not be loaded: " + cause;
                case CONFIG_KEYS:
                    return "the native engine could not list the config keys it accepts: " + cause;
                case WRITE:
                    return "the rebalance's state could not be written for the native engine: " + cause;
                case CALL:
                    return t instanceof NativeEngineException
                        ? "the native engine could not assign this rebalance: " + t.getMessage()
                        : "the call into the native engine failed: " + cause;
                case READ:
                    return "the native engine's response could not be read: " + cause;
                case VALIDATE:
                default:
                    return "the native engine's assignment is not valid for this rebalance: " + cause;
            }
        }
    }

    /** The result of one {@link #assign}: the engine's response, or why the fallback ran. */
    public static final class Outcome {
        private final long nowMs;
        private final ResponseReader.Response response;
        private final String fallbackReason;
        private final Path dumpFile;

        Outcome(final long nowMs, final ResponseReader.Response response, final String fallbackReason, final Path dumpFile) {
            this.nowMs = nowMs;
            this.response = response;
            this.fallbackReason = fallbackReason;
            this.dumpFile = dumpFile;
        }

        /** The time the rebalance ran at (epoch ms). */
        public long nowMs() {
            return nowMs;
        }

        /** Whether Kafka's StickyTaskAssignor assigned this rebalance. */
        public boolean fellBack() {
            return fallbackReason != null;
        }

        /** Why the fallback ran, as logged; null when the engine assigned. */
        public String fallbackReason() {
            return fallbackReason;
        }

        /** The engine's response; null after a fallback. */
        public ResponseReader.Response response() {
            return response;
        }

        /** The dump file written, or null. */
        public Path dumpFile() {
            return dumpFile;
        }
    }
}
