package io.kstreamsassignor.compat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The "logical view" of fixtures/wire/FORMAT.md: what the Java objects show through their
 * accessors, as JSON. Also the normalisation used for comparisons and the JSON output format.
 */
public final class View {
    public static final String SUBSCRIPTION = "subscription";
    public static final String ASSIGNMENT = "assignment";
    public static final String SUBSCRIPTION_ENVELOPE = "subscription-envelope";
    public static final String ASSIGNMENT_ENVELOPE = "assignment-envelope";
    public static final List<String> MESSAGES =
            List.of(SUBSCRIPTION, ASSIGNMENT, SUBSCRIPTION_ENVELOPE, ASSIGNMENT_ENVELOPE);

    /** Long host names (up to 70,000 characters in encodeErrors) exceed Jackson's default limits. */
    public static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNameLength(1 << 20)
                    .maxStringLength(1 << 26)
                    .build())
            .build());
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final ObjectWriter PRETTY = prettyWriter();

    /** Plain Unicode code-point order (String.compareTo is UTF-16 code-unit order, which differs). */
    public static final Comparator<String> CODE_POINT_ORDER = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    };

    private View() {
    }

    // ---------------------------------------------------------------- decoding

    /** Decodes {@code bytes} as {@code message} with the Java classes and renders the view. */
    public static ObjectNode decode(String message, byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        switch (message) {
            case SUBSCRIPTION:
                return subscription(SubscriptionInfo.decode(buffer));
            case ASSIGNMENT:
                return assignment(AssignmentInfo.decode(buffer));
            case SUBSCRIPTION_ENVELOPE: {
                int prefix = bytes.length >= 2 ? buffer.getShort(0) : 0;
                return subscriptionEnvelope(prefix, ConsumerProtocol.deserializeSubscription(buffer));
            }
            case ASSIGNMENT_ENVELOPE: {
                int prefix = bytes.length >= 2 ? buffer.getShort(0) : 0;
                return assignmentEnvelope(prefix, ConsumerProtocol.deserializeAssignment(buffer));
            }
            default:
                throw new IllegalArgumentException("unknown message kind: " + message);
        }
    }

    /** The way an exception is recorded in {@code javaError}: class, message, and the cause if any. */
    public static String errorText(Throwable t) {
        String text = t.getClass().getName() + ": " + t.getMessage();
        Throwable cause = t.getCause();
        if (cause != null && cause != t) {
            text += " [cause " + cause.getClass().getName() + ": " + cause.getMessage() + "]";
        }
        return clean(text);
    }

    /** The exception class of a {@code javaError} text. */
    public static String errorClass(String javaError) {
        int end = javaError.length();
        for (String stop : new String[] {": ", " [", " "}) {
            int at = javaError.indexOf(stop);
            if (at >= 0 && at < end) {
                end = at;
            }
        }
        return javaError.substring(0, end);
    }

    // ---------------------------------------------------------------- rendering

    public static ObjectNode subscription(SubscriptionInfo info) {
        return subscription(
                info.version(),
                info.latestSupportedVersion(),
                info.processId().id().toString(),
                info.userEndPoint(),
                info.prevTasks(),
                info.standbyTasks(),
                info.taskOffsetSums(),
                uniqueField(info),
                info.errorCode(),
                info.clientTags());
    }

    /** The view from its parts; also used to describe inputs the Java encoder refused. */
    public static ObjectNode subscription(int version, int latestSupportedVersion, String processId,
            String userEndPoint, Collection<TaskId> prevTasks, Collection<TaskId> standbyTasks,
            Map<TaskId, Long> taskOffsetSums, int uniqueField, int errorCode, Map<String, String> clientTags) {
        ObjectNode view = NODES.objectNode();
        view.put("version", version);
        view.put("latestSupportedVersion", latestSupportedVersion);
        view.put("processId", processId);
        view.put("userEndPoint", userEndPoint == null ? null : clean(userEndPoint));
        view.set("prevTasks", sortedStrings(prevTasks, TaskId::toString));
        view.set("standbyTasks", sortedStrings(standbyTasks, TaskId::toString));
        ObjectNode sums = view.putObject("taskOffsetSums");
        sortedKeys(taskOffsetSums, TaskId::toString).forEach((task, sum) -> sums.put(task, sum));
        view.put("uniqueField", uniqueField);
        view.put("errorCode", errorCode);
        ObjectNode tags = view.putObject("clientTags");
        sortedKeys(clientTags, Function.identity()).forEach((key, value) -> tags.put(key, clean(value)));
        return view;
    }

    public static ObjectNode assignment(AssignmentInfo info) {
        ObjectNode view = NODES.objectNode();
        view.put("version", info.version());
        view.put("commonlySupportedVersion", info.commonlySupportedVersion());
        ArrayNode active = view.putArray("activeTasks");
        for (TaskId task : info.activeTasks()) {
            active.add(clean(task.toString()));
        }
        view.set("standbyTasks", partitionMap(info.standbyTasks(), TaskId::toString));
        view.set("partitionsByHost", partitionMap(info.partitionsByHost(), View::hostText));
        view.set("standbyPartitionsByHost", partitionMap(info.standbyPartitionByHost(), View::hostText));
        view.put("errorCode", info.errCode());
        view.put("nextRebalanceMs", info.nextRebalanceMs());
        return view;
    }

    public static ObjectNode subscriptionEnvelope(int envelopeVersion, Subscription subscription) {
        ObjectNode view = NODES.objectNode();
        view.put("envelopeVersion", envelopeVersion);
        ArrayNode topics = view.putArray("topics");
        for (String topic : subscription.topics()) {
            topics.add(clean(topic));
        }
        view.put("userData", hex(subscription.userData()));
        ArrayNode owned = view.putArray("ownedPartitions");
        for (TopicPartition partition : subscription.ownedPartitions()) {
            owned.add(clean(partition.toString()));
        }
        view.put("generationId", subscription.generationId().orElse(-1));
        String rack = subscription.rackId().orElse(null);
        view.put("rackId", rack == null || rack.isEmpty() ? null : clean(rack));
        return view;
    }

    public static ObjectNode assignmentEnvelope(int envelopeVersion, Assignment assignment) {
        ObjectNode view = NODES.objectNode();
        view.put("envelopeVersion", envelopeVersion);
        ArrayNode assigned = view.putArray("assignedPartitions");
        for (TopicPartition partition : assignment.partitions()) {
            assigned.add(clean(partition.toString()));
        }
        view.put("userData", hex(assignment.userData()));
        return view;
    }

    public static String hostText(HostInfo host) {
        return host.host() + ":" + host.port();
    }

    /**
     * SubscriptionInfo has no accessor for uniqueField; it lives in the generated data object held
     * in the private field {@code data}.
     */
    static int uniqueField(SubscriptionInfo info) {
        try {
            Field field = SubscriptionInfo.class.getDeclaredField("data");
            field.setAccessible(true);
            Object data = field.get(info);
            return ((Number) data.getClass().getMethod("uniqueField").invoke(data)).intValue();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read SubscriptionInfo uniqueField", e);
        }
    }

    private static <K> ObjectNode partitionMap(Map<K, Set<TopicPartition>> map, Function<K, String> keyText) {
        ObjectNode node = NODES.objectNode();
        sortedKeys(map, keyText).forEach((key, partitions) ->
                node.set(key, sortedStrings(partitions, TopicPartition::toString)));
        return node;
    }

    private static <T> ArrayNode sortedStrings(Collection<T> items, Function<T, String> text) {
        List<String> strings = new ArrayList<>();
        for (T item : items) {
            strings.add(clean(text.apply(item)));
        }
        strings.sort(CODE_POINT_ORDER);
        ArrayNode array = NODES.arrayNode();
        strings.forEach(array::add);
        return array;
    }

    private static <K, V> Map<String, V> sortedKeys(Map<K, V> map, Function<K, String> keyText) {
        Map<String, V> sorted = new TreeMap<>(CODE_POINT_ORDER);
        map.forEach((key, value) -> sorted.put(clean(keyText.apply(key)), value));
        return sorted;
    }

    /** Replaces every unpaired surrogate with U+FFFD, since JSON text cannot carry one. */
    public static String clean(String s) {
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1));
            if (paired) {
                if (out != null) {
                    out.append(c).append(s.charAt(i + 1));
                }
                i++;
            } else if (Character.isSurrogate(c)) {
                if (out == null) {
                    out = new StringBuilder(s.length()).append(s, 0, i);
                }
                out.append('\uFFFD');
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? s : out.toString();
    }

    public static String hex(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        ByteBuffer copy = buffer.duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    public static byte[] bytes(ByteBuffer buffer) {
        ByteBuffer copy = buffer.duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        return bytes;
    }

    // ---------------------------------------------------------------- normalisation

    /**
     * A copy of {@code view} in which the set-like arrays of {@code message} are sorted in code-point
     * order and numbers have one representation, so that {@link JsonNode#equals} is the comparison
     * FORMAT.md describes (objects already compare as maps).
     */
    public static JsonNode normalise(String message, JsonNode view) {
        JsonNode copy = reparse(view);
        if (!(copy instanceof ObjectNode)) {
            return copy;
        }
        ObjectNode object = (ObjectNode) copy;
        if (SUBSCRIPTION.equals(message)) {
            sortArray(object.get("prevTasks"));
            sortArray(object.get("standbyTasks"));
        } else if (ASSIGNMENT.equals(message)) {
            for (String name : List.of("standbyTasks", "partitionsByHost", "standbyPartitionsByHost")) {
                JsonNode map = object.get(name);
                if (map != null && map.isObject()) {
                    map.forEach(View::sortArray);
                }
            }
        }
        return object;
    }

    private static void sortArray(JsonNode node) {
        if (node == null || !node.isArray()) {
            return;
        }
        ArrayNode array = (ArrayNode) node;
        List<JsonNode> items = new ArrayList<>();
        array.forEach(items::add);
        items.sort(Comparator.comparing(View::stringForm, CODE_POINT_ORDER));
        array.removeAll();
        array.addAll(items);
    }

    private static String stringForm(JsonNode node) {
        return node.isTextual() ? node.textValue() : node.toString();
    }

    /** Writes and re-reads a tree, which gives every number the node type the parser chooses. */
    public static JsonNode reparse(JsonNode node) {
        try {
            return MAPPER.readTree(MAPPER.writeValueAsBytes(node));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Describes the first difference between two normalised views, or returns null if equal. */
    public static String firstDifference(String path, JsonNode expected, JsonNode actual) {
        if (expected.equals(actual)) {
            return null;
        }
        if (expected.isObject() && actual.isObject()) {
            Set<String> names = new java.util.TreeSet<>(CODE_POINT_ORDER);
            expected.fieldNames().forEachRemaining(names::add);
            actual.fieldNames().forEachRemaining(names::add);
            for (String name : names) {
                JsonNode e = expected.get(name);
                JsonNode a = actual.get(name);
                String child = path + "." + name;
                if (e == null) {
                    return child + ": not expected, Java has " + shorten(a);
                }
                if (a == null) {
                    return child + ": expected " + shorten(e) + ", Java has nothing";
                }
                String difference = firstDifference(child, e, a);
                if (difference != null) {
                    return difference;
                }
            }
        }
        if (expected.isArray() && actual.isArray()) {
            Iterator<JsonNode> e = expected.elements();
            Iterator<JsonNode> a = actual.elements();
            for (int i = 0; e.hasNext() && a.hasNext(); i++) {
                String difference = firstDifference(path + "[" + i + "]", e.next(), a.next());
                if (difference != null) {
                    return difference;
                }
            }
            return path + ": expected " + expected.size() + " elements, Java has " + actual.size();
        }
        return path + ": expected " + shorten(expected) + ", Java has " + shorten(actual);
    }

    private static String shorten(JsonNode node) {
        String text = node.toString();
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    // ---------------------------------------------------------------- output

    private static ObjectWriter prettyWriter() {
        Separators separators = Separators.createDefaultInstance()
                .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                .withObjectEmptySeparator("")
                .withArrayEmptySeparator("");
        DefaultPrettyPrinter printer = new DefaultPrettyPrinter(separators);
        DefaultIndenter indenter = new DefaultIndenter("  ", "\n");
        printer.indentObjectsWith(indenter);
        printer.indentArraysWith(indenter);
        return MAPPER.writer(printer);
    }

    /** Deterministic pretty-printed UTF-8 JSON with a final newline. */
    public static byte[] prettyBytes(JsonNode node) {
        try {
            return (PRETTY.writeValueAsString(node) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
