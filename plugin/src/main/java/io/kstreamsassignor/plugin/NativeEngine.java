package io.kstreamsassignor.plugin;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Rust engine behind JNI. The library is loaded at first use, from the path given by
 * {@code kstreams.assignor.native.library} or else from the copy packaged in this jar under
 * {@code /native/<platform>/}. A failed load is remembered with its cause, per library source,
 * so that later rebalances report it again without retrying.
 */
public final class NativeEngine {
    /** The library's base name, as {@link System#mapLibraryName} spells it per platform. */
    public static final String LIBRARY_NAME = "kstreams_assignor_jni";

    private static final Logger LOG = LoggerFactory.getLogger(NativeEngine.class);
    private static final Object LOCK = new Object();
    private static String loadedFrom;
    private static final Map<String, NativeEngineLoadException> FAILURES = new HashMap<>();
    private static final Set<String> IGNORED = new HashSet<>();

    private NativeEngine() {
    }

    /**
     * Runs one assignment: request bytes in, response bytes out (see docs/plugin.md).
     *
     * @throws NativeEngineException when the engine refuses the request or fails
     */
    public static native byte[] assign(byte[] request);

    /**
     * Runs one assignment of the broker's streams assignor (the streams layout of docs/plugin.md).
     *
     * @throws NativeEngineException when the engine refuses the request or fails
     */
    public static native byte[] assignStreams(byte[] request);

    /**
     * {@link #assignStreams(byte[])} within {@code budgetNanos} from now: past it the engine stops
     * at its next checkpoint, nothing of the call keeps running, and a {@link NativeEngineException}
     * says so ({@code budgetNanos <= 0}: already due).
     */
    public static native byte[] assignStreamsWithin(byte[] request, long budgetNanos);

    /** The engine's version, for the log. */
    public static native String version();

    /** Every config key the engine accepts. */
    public static native String[] configKeys();

    /**
     * Loads the library once per JVM: from {@code libraryPath} when it is not null, else from
     * the resource packaged for this platform. Returns where it was loaded from.
     *
     * @throws NativeEngineLoadException when it cannot be loaded now or could not be before
     */
    public static String ensureLoaded(final String libraryPath) {
        synchronized (LOCK) {
            final String source = libraryPath != null ? libraryPath : "the jar resource " + resourcePath();
            if (loadedFrom != null) {
                if (!source.equals(loadedFrom) && IGNORED.add(source)) {
                    LOG.warn("The native engine is already loaded from {}; {} is not loaded (one library per JVM)",
                        loadedFrom, source);
                }
                return loadedFrom;
            }
            final NativeEngineLoadException earlier = FAILURES.get(source);
            if (earlier != null) {
                throw earlier;
            }
            try {
                if (libraryPath != null) {
                    System.load(Paths.get(libraryPath).toAbsolutePath().toString());
                } else {
                    System.load(extractResource().toString());
                }
                loadedFrom = source;
            } catch (final Throwable t) {
                final NativeEngineLoadException failure = new NativeEngineLoadException(source, t);
                FAILURES.put(source, failure);
                throw failure;
            }
            String version;
            try {
                version = version();
            } catch (final Throwable t) {
                version = "(version unknown: " + describe(t) + ")";
            }
            LOG.info("Loaded the kstreams-assignor native engine {} from {}", version, loadedFrom);
            return loadedFrom;
        }
    }

    /** Where the library was loaded from, or null when it is not loaded. */
    public static String loadedFrom() {
        synchronized (LOCK) {
            return loadedFrom;
        }
    }

    /** The resource that holds the library for this platform, such as {@code /native/linux-x86_64/libkstreams_assignor_jni.so}. */
    public static String resourcePath() {
        return "/native/" + platform() + "/" + System.mapLibraryName(LIBRARY_NAME);
    }

    /** This platform as the jar's resource folders name it: {@code linux-x86_64}, {@code linux-aarch64}, ... */
    public static String platform() {
        final String os = System.getProperty("os.name", "unknown").toLowerCase(Locale.ROOT);
        final String arch = System.getProperty("os.arch", "unknown").toLowerCase(Locale.ROOT);
        final String osName;
        if (os.startsWith("linux")) {
            osName = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            osName = "macos";
        } else if (os.startsWith("windows")) {
            osName = "windows";
        } else {
            osName = os.replaceAll("[^a-z0-9]+", "");
        }
        final String archName;
        switch (arch) {
            case "amd64":
            case "x86_64":
                archName = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                archName = "aarch64";
                break;
            default:
                archName = arch.replaceAll("[^a-z0-9_]+", "");
        }
        return osName + "-" + archName;
    }

    private static Path extractResource() throws IOException {
        final String resource = resourcePath();
        try (InputStream in = NativeEngine.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("this jar has no native library for " + platform()
                    + " (no resource " + resource + "); build one and set kstreams.assignor.native.library to its path");
            }
            final Path file = Files.createTempFile(LIBRARY_NAME + "-", "-" + System.mapLibraryName(LIBRARY_NAME));
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        }
    }

    /** The library could not be loaded; the message names where from and why. */
    public static final class NativeEngineLoadException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String source;

        NativeEngineLoadException(final String source, final Throwable cause) {
            super("the native engine could not be loaded from " + source + ": " + describe(cause), cause);
            this.source = source;
        }

        /** Where the load was tried from. */
        public String source() {
            return source;
        }
    }

    static String describe(final Throwable t) {
        final String message = t.getMessage();
        final String name = t.getClass().getSimpleName();
        return message == null || message.isEmpty() ? name : name + ": " + message;
    }
}
