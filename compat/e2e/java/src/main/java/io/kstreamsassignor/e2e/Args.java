package io.kstreamsassignor.e2e;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** {@code --name value} arguments; {@code --config k=v} may repeat. */
final class Args {
    private final Map<String, String> values = new HashMap<>();
    final List<String> configs = new ArrayList<>();

    Args(final String[] args, final int from) {
        for (int i = from; i < args.length; i++) {
            final String name = args[i];
            if (!name.startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value at " + name);
            }
            final String value = args[++i];
            if (name.equals("--config")) {
                configs.add(value);
            } else {
                values.put(name.substring(2), value);
            }
        }
    }

    /** Sets {@code --name value}, as if it had been given. */
    void put(final String name, final String value) {
        values.put(name, value);
    }

    String get(final String name) {
        final String v = values.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    String get(final String name, final String fallback) {
        return values.getOrDefault(name, fallback);
    }

    long getLong(final String name, final long fallback) {
        return values.containsKey(name) ? Long.parseLong(values.get(name)) : fallback;
    }
}
