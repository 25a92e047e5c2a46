package org.apache.kafka.streams.processor.internals.assignment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Rack-aware active task optimisation through Kafka's own RackAwareTaskAssignor, for
 * compat/java/rack-parity.sh.
 *
 * <p>Usage: {@code RackParityRunner INSTANCES.jsonl OUT.jsonl}. Each input line holds an
 * engine input ({@code input}: clients with racks, stateful tasks, {@code taskPartitions} with
 * the racks of each input partition's replicas, dotted configs) and the current active placement
 * ({@code current}: task → process id). Each output line holds Kafka's optimal total cost
 * ({@code cost}, as optimizeActiveTasks returns it) and its split into traffic and non-overlap
 * cost, recomputed from the placement Kafka chose. Instances with a non-empty {@code standby}
 * placement (task → process id) run optimizeStandbyTasks instead (changelog racks described by a
 * stub topic manager); {@code cost} is then its final standby cost.
 */
public final class RackParityRunner {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RackParityRunner() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: RackParityRunner INSTANCES.jsonl OUT.jsonl");
            System.exit(2);
        }
        int count = 0;
        try (BufferedReader in = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8);
             BufferedWriter out = Files.newBufferedWriter(Path.of(args[1]), StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                out.write(JSON.writeValueAsString(run(JSON.readTree(line))));
                out.newLine();
                count++;
            }
        }
        System.err.println("rack parity: Kafka optimised " + count + " instances");
    }

    /**
     * Rewrites the instance in {@link RackStepRunner}'s format (the placement as
     * {@code placement.active} / {@code placement.standby}, {@code num.standby.replicas} 1 exactly
     * when standbys are placed) and runs Kafka's step there.
     */
    private static ObjectNode run(JsonNode instance) {
        JsonNode standbys = instance.path("standby");
        boolean standbyMode = standbys.size() > 0;
        ObjectNode step = JSON.createObjectNode();
        ObjectNode input = instance.get("input").deepCopy();
        ((ObjectNode) input.get("configs")).put("num.standby.replicas", standbyMode ? 1 : 0);
        step.set("input", input);
        ObjectNode placement = step.putObject("placement");
        placement.set("active", instance.get("current"));
        ObjectNode copies = placement.putObject("standby");
        standbys.fields().forEachRemaining(e -> copies.putArray(e.getKey()).add(e.getValue()));

        RackStepRunner.Result kafka = new RackStepRunner.Instance(step).run();
        ObjectNode result = JSON.createObjectNode();
        if (standbyMode) {
            result.put("cost", kafka.standbyCost);
            return result;
        }
        result.put("cost", kafka.activeCost);
        result.put("traffic", kafka.activeTrafficCost);
        result.put("nonOverlap", kafka.activeNonOverlapCost);
        return result;
    }
}
