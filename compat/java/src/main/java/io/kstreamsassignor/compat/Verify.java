package io.kstreamsassignor.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Decodes every file listed in DIR/manifest.json with the Java classes and compares what Java sees
 * with the entry's {@code expected} view, or checks that Java throws the recorded exception class
 * when the entry has {@code javaError}.
 */
public final class Verify {
    private Verify() {
    }

    /** Returns the process exit code: 0 when every file matches, 1 otherwise. */
    static int run(Path dir) throws IOException {
        JsonNode manifest = View.MAPPER.readTree(dir.resolve("manifest.json").toFile());
        JsonNode fixtures = manifest.path("fixtures");
        if (!fixtures.isArray()) {
            System.out.println("MISMATCH manifest.json: no \"fixtures\" array");
            return 1;
        }
        int ok = 0;
        int mismatches = 0;
        for (JsonNode entry : fixtures) {
            String file = entry.path("file").asText();
            String problem = check(dir, entry);
            if (problem == null) {
                ok++;
            } else {
                mismatches++;
                System.out.println("MISMATCH " + file + ": " + problem);
            }
        }
        int total = ok + mismatches;
        System.out.println("verified " + total + " files: " + ok + " ok, " + mismatches + " mismatches");
        return mismatches == 0 && total > 0 ? 0 : 1;
    }

    /** Returns null if the entry holds, otherwise a one-line description of the problem. */
    static String check(Path dir, JsonNode entry) {
        String file = entry.path("file").asText(null);
        String message = entry.path("message").asText(null);
        if (file == null || message == null || !View.MESSAGES.contains(message)) {
            return "entry needs \"file\" and a \"message\" among " + View.MESSAGES;
        }
        boolean hasExpected = entry.has("expected");
        boolean hasError = entry.has("javaError");
        if (hasExpected == hasError) {
            return "entry needs exactly one of \"expected\" and \"javaError\"";
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(dir.resolve(file));
        } catch (NoSuchFileException e) {
            return "file not found";
        } catch (IOException e) {
            return "cannot read file: " + e;
        }

        JsonNode actual = null;
        Throwable thrown = null;
        try {
            actual = View.decode(message, bytes);
        } catch (Throwable t) {
            thrown = t;
        }

        if (hasError) {
            String expectedClass = View.errorClass(entry.get("javaError").asText());
            if (thrown == null) {
                return "expected Java to throw " + expectedClass + ", but it decoded "
                        + shorten(View.normalise(message, actual).toString());
            }
            String actualClass = thrown.getClass().getName();
            if (!actualClass.equals(expectedClass)) {
                return "expected " + expectedClass + ", Java threw " + View.errorText(thrown);
            }
            return null;
        }
        if (thrown != null) {
            return "Java could not decode it: " + View.errorText(thrown);
        }
        JsonNode expected = View.normalise(message, entry.get("expected"));
        JsonNode seen = View.normalise(message, actual);
        return View.firstDifference("expected", expected, seen);
    }

    private static String shorten(String text) {
        return text.length() <= 300 ? text : text.substring(0, 300) + "...";
    }
}
