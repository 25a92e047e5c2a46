package io.kstreamsassignor.plugin;

/**
 * An error reported by the native engine: a request it refused, an assignment it could not
 * compute, or a panic caught at the boundary. The JNI bridge throws it by this class name, with
 * a plain-language message.
 */
public class NativeEngineException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NativeEngineException(final String message) {
        super(message);
    }
}
