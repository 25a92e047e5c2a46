package io.kstreamsassignor.e2e;

import java.util.Map;
import java.util.TreeMap;

/** The deterministic input: record {@code i} has key {@code k<i mod 101>} and a word as its value. */
final class Workload {
    static final String INPUT = "e2e-input";
    static final String OUTPUT = "e2e-counts";
    static final int WORDS = 60;

    private Workload() {}

    /** The input topic: {@code --input}, {@link #INPUT} by default. */
    static String input(final Args args) {
        return args.get("input", INPUT);
    }

    /** The output topic: {@code --output}, {@link #OUTPUT} by default. */
    static String output(final Args args) {
        return args.get("output", OUTPUT);
    }

    static String key(final long i) {
        return "k" + (i % 101);
    }

    static String word(final long i) {
        return "w" + Math.floorMod(i * 7919L, WORDS);
    }

    /** The exact count per word after records {@code 0..total-1}. */
    static Map<String, Long> expectedCounts(final long total) {
        final Map<String, Long> counts = new TreeMap<>();
        for (long i = 0; i < total; i++) {
            counts.merge(word(i), 1L, Long::sum);
        }
        return counts;
    }
}
