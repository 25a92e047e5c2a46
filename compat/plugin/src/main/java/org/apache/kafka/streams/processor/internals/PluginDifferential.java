package org.apache.kafka.streams.processor.internals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kstreamsassignor.plugin.NativeEngine;
import io.kstreamsassignor.plugin.OptimizedTaskAssignor;
import io.kstreamsassignor.plugin.RequestWriter;
import io.kstreamsassignor.plugin.ResponseReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.AssignmentError;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor.ClientMetadata;
import org.apache.kafka.streams.processor.internals.assignment.DefaultApplicationState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskInfo;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskTopicPartition;

/**
 * Differential test of the KIP-924 plugin: random ApplicationStates built with Kafka Streams' own
 * classes go through {@link OptimizedTaskAssignor} (with a dump folder), and each dump through
 * {@code kstreams-assignor assign --assignor optimized --compact --input}; the two assignments
 * must agree client for client, task for task, and on the probing rebalance.
 *
 * <pre>
 *   run --cases N --seed S --cli PATH --out DIR [--show K] [--library PATH]
 *   boundary --cli PATH [--clients 1000] [--tasks 10000] [--runs 9] [--library PATH]
 * </pre>
 */
public final class PluginDifferential {
    private static final long BASE_NOW_MS = 1_800_000_000_000L;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] STRATEGIES = {"none", "min_traffic", "balance_subtopology"};

    private PluginDifferential() {
    }

    public static void main(final String[] args) throws Exception {
        if (args.length == 0) {
            usage();
        }
        final Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage();
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        switch (args[0]) {
            case "run":
                System.exit(run(opts));
                break;
            case "boundary":
                System.exit(boundary(opts));
                break;
            default:
                usage();
        }
    }

    private static void usage() {
        System.err.println("usage: run --cases N --seed S --cli PATH --out DIR [--show K] [--library PATH]\n"
            + "       boundary [--clients N] [--tasks N] [--runs N] [--library PATH]");
        System.exit(2);
    }

    // ---------------------------------------------------------------------------------------
    // The generated cases.

    /** One subtopology: {@code partitions} tasks, stateful or not. */
    record Sub(int id, int partitions, boolean stateful, boolean logged) {
    }

    /** One client as the generator sees it, before Kafka's classes are built from it. */
    static final class ClientSpec {
        final ProcessId processId;
        final int threads;
        final Optional<String> rack;
        final Map<String, String> tags;
        final String endpoint;
        /** Tasks whose source partitions the client owns (previous actives). */
        final Set<TaskId> owned = new TreeSet<>();
        /** The offset sums it reports (-2 for a running active, -3 unknown). */
        final Map<TaskId, Long> offsetSums = new TreeMap<>();

        ClientSpec(final ProcessId processId, final int threads, final Optional<String> rack,
                   final Map<String, String> tags, final String endpoint) {
            this.processId = processId;
            this.threads = threads;
            this.rack = rack;
            this.tags = tags;
            this.endpoint = endpoint;
        }

        ClientSpec freshCopy() {
            return new ClientSpec(processId, threads, rack, tags, endpoint);
        }
    }

    /** One generated rebalance. */
    static final class Case {
        final int index;
        final String kind;
        final String applicationId;
        final long nowMs;
        final AssignmentConfigs configs;
        final List<Sub> subs;
        final Map<TaskId, Long> endOffsetSums;
        final List<ClientSpec> clients;
        /** Racks per partition (absent: not annotated). */
        final Map<TopicPartition, Set<String>> partitionRacks;
        /** Why docs/plugin.md says the engine must not use its memory here, or null. */
        String mustStartFresh;

        Case(final int index, final String kind, final String applicationId, final long nowMs, final AssignmentConfigs configs,
             final List<Sub> subs, final Map<TaskId, Long> endOffsetSums, final List<ClientSpec> clients,
             final Map<TopicPartition, Set<String>> partitionRacks) {
            this.index = index;
            this.kind = kind;
            this.applicationId = applicationId;
            this.nowMs = nowMs;
            this.configs = configs;
            this.subs = subs;
            this.endOffsetSums = endOffsetSums;
            this.clients = clients;
            this.partitionRacks = partitionRacks;
        }

        int taskCount() {
            return subs.stream().mapToInt(Sub::partitions).sum();
        }
    }

    static TopicPartition sourcePartition(final TaskId task) {
        return new TopicPartition("source-" + task.subtopology(), task.partition());
    }

    static TopicPartition changelogPartition(final TaskId task) {
        return new TopicPartition("app-store-" + task.subtopology() + "-changelog", task.partition());
    }

    static List<TaskId> tasks(final List<Sub> subs) {
        final List<TaskId> out = new ArrayList<>();
        for (final Sub sub : subs) {
            for (int p = 0; p < sub.partitions(); p++) {
                out.add(new TaskId(sub.id(), p));
            }
        }
        return out;
    }

    static boolean stateful(final List<Sub> subs, final TaskId task) {
        return subs.get(task.subtopology()).stateful();
    }

    /** Stateful with a changelog: the tasks with end offsets, lags and standbys. */
    static boolean logged(final List<Sub> subs, final TaskId task) {
        return subs.get(task.subtopology()).logged();
    }

    /** A case with a new application.id and a random previous state (or none). */
    static Case freshCase(final Random rnd, final int index, final long seed) {
        final int subCount = 1 + rnd.nextInt(4);
        final int mix = rnd.nextInt(10); // 0: all stateless, 1-3: all stateful, else mixed
        final List<Sub> subs = new ArrayList<>();
        for (int s = 0; s < subCount; s++) {
            final boolean stateful = mix == 0 ? false : mix <= 3 || rnd.nextBoolean();
            // Now and then a store with logging disabled: stateful, but no changelog and no lags.
            subs.add(new Sub(s, 1 + rnd.nextInt(12), stateful, stateful && rnd.nextInt(7) != 0));
        }
        final String strategy = rnd.nextInt(2) == 0 ? "none" : STRATEGIES[1 + rnd.nextInt(2)];
        final boolean rackAware = !strategy.equals("none");
        final int rackCount = 1 + rnd.nextInt(3);
        final boolean clientRacks = rackAware || rnd.nextInt(3) == 0;
        final boolean withTags = rnd.nextInt(5) < 2;
        final List<String> tagKeys = !withTags ? Collections.emptyList()
            : rnd.nextBoolean() ? List.of("zone") : List.of("zone", "cluster");
        final long[] lags = {0, 10, 100, 1_000, 10_000};
        final long acceptableLag = lags[rnd.nextInt(lags.length)];
        final long[] intervals = {60_000, 120_000, 600_000};
        final OptionalInt trafficCost = rackAware && rnd.nextInt(3) == 0 ? OptionalInt.of(1 + rnd.nextInt(20)) : OptionalInt.empty();
        final OptionalInt nonOverlapCost = rackAware && rnd.nextInt(3) == 0 ? OptionalInt.of(rnd.nextInt(20)) : OptionalInt.empty();
        final AssignmentConfigs configs = new AssignmentConfigs(acceptableLag, 1 + rnd.nextInt(4), rnd.nextInt(3),
            intervals[rnd.nextInt(intervals.length)], tagKeys, trafficCost, nonOverlapCost, strategy);

        final Map<TopicPartition, Set<String>> partitionRacks = new HashMap<>();
        if (rackAware || rnd.nextInt(4) == 0) {
            final boolean someMissing = rnd.nextInt(10) == 0;
            for (final TaskId task : tasks(subs)) {
                final List<TopicPartition> tps = new ArrayList<>();
                tps.add(sourcePartition(task));
                if (logged(subs, task)) {
                    tps.add(changelogPartition(task));
                }
                for (final TopicPartition tp : tps) {
                    if (someMissing && rnd.nextInt(5) == 0) {
                        continue;
                    }
                    final Set<String> racks = new TreeSet<>();
                    final int n = 1 + rnd.nextInt(rackCount);
                    while (racks.size() < n) {
                        racks.add("rack-" + rnd.nextInt(rackCount));
                    }
                    partitionRacks.put(tp, racks);
                }
            }
        }

        final int clientCount = 1 + rnd.nextInt(12);
        final List<ClientSpec> clients = new ArrayList<>();
        final boolean oneWithoutRack = clientRacks && rnd.nextInt(10) == 0;
        for (int c = 0; c < clientCount; c++) {
            final ProcessId pid = new ProcessId(new UUID(rnd.nextLong(), rnd.nextLong()));
            final Optional<String> rack = clientRacks && !(oneWithoutRack && c == 0)
                ? Optional.of("rack-" + rnd.nextInt(rackCount)) : Optional.empty();
            final Map<String, String> tags = new TreeMap<>();
            if (withTags) {
                tags.put("zone", "zone-" + rnd.nextInt(3));
                if (rnd.nextInt(8) != 0) {
                    tags.put("cluster", "cluster-" + rnd.nextInt(2));
                }
            }
            final String endpoint = rnd.nextBoolean() ? "host-" + c + ":9092" : null;
            clients.add(new ClientSpec(pid, 1 + rnd.nextInt(4), rack, tags, endpoint));
        }

        final Map<TaskId, Long> endOffsetSums = new TreeMap<>();
        for (final TaskId task : tasks(subs)) {
            if (logged(subs, task)) {
                endOffsetSums.put(task, (long) rnd.nextInt(200_000));
            }
        }

        final String kind;
        if (rnd.nextInt(5) == 0) {
            kind = "fresh, empty previous state";
        } else {
            kind = "fresh, random previous state";
            for (final TaskId task : tasks(subs)) {
                final boolean isStateful = stateful(subs, task);
                final long end = endOffsetSums.getOrDefault(task, 0L);
                ClientSpec owner = null;
                if (rnd.nextInt(10) < 8) {
                    owner = clients.get(rnd.nextInt(clientCount));
                    if (isStateful && rnd.nextInt(10) == 0) {
                        // Reported as a running active without owning its partitions.
                        owner.offsetSums.put(task, -2L);
                    } else {
                        owner.owned.add(task);
                        if (isStateful) {
                            owner.offsetSums.put(task, rnd.nextInt(5) < 4 ? -2L : Math.max(0, end - rnd.nextInt(3_000)));
                        }
                    }
                }
                if (!logged(subs, task)) {
                    continue; // standbys only for tasks with a changelog
                }
                for (final ClientSpec client : clients) {
                    if (client == owner || rnd.nextInt(4) != 0) {
                        continue;
                    }
                    final int roll = rnd.nextInt(20);
                    final long sum;
                    if (roll < 3) {
                        sum = -3L; // offset unknown
                    } else if (roll == 3) {
                        sum = end + 1 + rnd.nextInt(100); // ahead of the end: corrupted state
                    } else if (roll < 10) {
                        sum = Math.max(0, end - rnd.nextInt((int) Math.min(acceptableLag + 1, 50_000)));
                    } else {
                        sum = Math.max(0, end - rnd.nextInt(100_000)); // a lagging standby
                    }
                    client.offsetSums.put(task, sum);
                }
            }
        }
        return new Case(index, kind, "diff-" + seed + "-" + index, BASE_NOW_MS + index * 1_000L, configs, subs,
            endOffsetSums, clients, partitionRacks);
    }

    /** The next rebalance of {@code prev}'s application: its result as the previous state, a bit later. */
    static Case nextCase(final Random rnd, final int index, final Case prev, final TaskAssignment result) {
        final Map<ProcessId, KafkaStreamsAssignment> byClient = new HashMap<>();
        for (final KafkaStreamsAssignment a : result.assignment()) {
            byClient.put(a.processId(), a);
        }
        final Map<TaskId, Long> endOffsetSums = new TreeMap<>();
        prev.endOffsetSums.forEach((task, end) -> endOffsetSums.put(task, end + rnd.nextInt(5_000)));
        final List<ClientSpec> clients = new ArrayList<>();
        for (final ClientSpec old : prev.clients) {
            final ClientSpec client = old.freshCopy();
            final KafkaStreamsAssignment assigned = byClient.get(old.processId);
            if (assigned != null) {
                // In task order, so that a seed gives the same cases whatever HashMap orders a release has.
                for (final AssignedTask task : new TreeMap<>(assigned.tasks()).values()) {
                    final boolean isStateful = stateful(prev.subs, task.id());
                    final long end = prev.endOffsetSums.getOrDefault(task.id(), 0L);
                    if (task.type() == AssignedTask.Type.ACTIVE) {
                        client.owned.add(task.id());
                        if (isStateful) {
                            client.offsetSums.put(task.id(), -2L);
                        }
                    } else {
                        // A standby or warm-up that caught up partly since the last rebalance.
                        final long lag = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(20_000);
                        client.offsetSums.put(task.id(), Math.max(0, end - lag));
                    }
                }
            }
            clients.add(client);
        }
        String kind = "next rebalance";
        String mustStartFresh = null;
        long later = prev.nowMs + 1_000 + (long) (rnd.nextDouble() * 2 * prev.configs.probingRebalanceIntervalMs());
        final int change = rnd.nextInt(12);
        if (change == 0 && clients.size() > 1) {
            clients.remove(rnd.nextInt(clients.size()));
            kind = "next rebalance, one client gone";
        } else if (change == 1 && clients.size() < 12) {
            clients.add(new ClientSpec(new ProcessId(new UUID(rnd.nextLong(), rnd.nextLong())), 1 + rnd.nextInt(4),
                prev.clients.get(0).rack, prev.clients.get(0).tags, null));
            kind = "next rebalance, one client new";
        } else if (change == 2 && clients.size() > 1) {
            // Another member led in between and moved the active tasks: each client reports the
            // previous active tasks of its neighbour.
            final List<Set<TaskId>> owned = new ArrayList<>();
            final List<Map<TaskId, Long>> sums = new ArrayList<>();
            for (final ClientSpec client : clients) {
                owned.add(new TreeSet<>(client.owned));
                sums.add(new TreeMap<>(client.offsetSums));
            }
            for (int i = 0; i < clients.size(); i++) {
                final ClientSpec client = clients.get(i);
                final int from = (i + 1) % clients.size();
                client.owned.clear();
                client.owned.addAll(owned.get(from));
                client.offsetSums.clear();
                sums.get(from).forEach((task, sum) -> {
                    if (sum == -2L || !client.owned.contains(task)) {
                        client.offsetSums.put(task, sum);
                    }
                });
            }
            // docs/plugin.md: the observations stay true whoever led in between, so the memory
            // is used all the same; the differential still checks the dump replays.
            kind = "next rebalance, another leader in between";
        } else if (change == 3) {
            later = prev.nowMs + 3 * prev.configs.probingRebalanceIntervalMs() + 1_000 + rnd.nextInt(100_000);
            kind = "next rebalance, past three probing intervals";
            mustStartFresh = "the last rebalance is older than three probing intervals";
        } else if (change == 4) {
            // Every process restarted with a new process id (its state directory kept).
            final List<ClientSpec> renamed = new ArrayList<>();
            for (final ClientSpec old : clients) {
                final ClientSpec client = new ClientSpec(new ProcessId(new UUID(rnd.nextLong(), rnd.nextLong())), old.threads,
                    old.rack, old.tags, old.endpoint);
                client.owned.addAll(old.owned);
                client.offsetSums.putAll(old.offsetSums);
                renamed.add(client);
            }
            clients.clear();
            clients.addAll(renamed);
            kind = "next rebalance, every client new";
            mustStartFresh = "no client of the last rebalance is left";
        }
        final Case next = new Case(index, kind, prev.applicationId, later, prev.configs, prev.subs, endOffsetSums, clients,
            prev.partitionRacks);
        next.mustStartFresh = mustStartFresh;
        return next;
    }

    /** The ApplicationState of {@code c}, built as StreamsPartitionAssignor builds it. */
    static DefaultApplicationState applicationState(final Case c) {
        final Map<TaskId, TaskInfo> tasks = new HashMap<>();
        final Map<TopicPartition, TaskId> taskForPartition = new HashMap<>();
        for (final TaskId task : tasks(c.subs)) {
            final boolean isStateful = stateful(c.subs, task);
            final Set<TaskTopicPartition> partitions = new HashSet<>();
            final TopicPartition source = sourcePartition(task);
            partitions.add(partition(source, true, false, c.partitionRacks));
            taskForPartition.put(source, task);
            if (logged(c.subs, task)) {
                partitions.add(partition(changelogPartition(task), false, true, c.partitionRacks));
            }
            final Set<String> stores = isStateful ? Set.of("store-" + task.subtopology()) : Set.of();
            tasks.put(task, new DefaultTaskInfo(task, isStateful, stores, partitions));
        }

        final Map<ProcessId, ClientMetadata> metadata = new HashMap<>();
        for (final ClientSpec spec : c.clients) {
            final ClientMetadata client = new ClientMetadata(spec.processId, spec.endpoint, spec.tags, spec.rack);
            final List<String> consumers = new ArrayList<>();
            final List<List<TopicPartition>> owned = new ArrayList<>();
            final List<Map<TaskId, Long>> sums = new ArrayList<>();
            for (int t = 0; t < spec.threads; t++) {
                consumers.add(spec.processId.id() + "-StreamThread-" + (t + 1) + "-consumer");
                owned.add(new ArrayList<>());
                sums.add(new TreeMap<>());
            }
            int next = 0;
            for (final TaskId task : spec.owned) {
                owned.get(next++ % spec.threads).add(sourcePartition(task));
            }
            for (final Map.Entry<TaskId, Long> sum : spec.offsetSums.entrySet()) {
                sums.get(next++ % spec.threads).put(sum.getKey(), sum.getValue());
            }
            for (int t = 0; t < spec.threads; t++) {
                client.addConsumer(consumers.get(t), owned.get(t));
                client.addPreviousTasksAndOffsetSums(consumers.get(t), sums.get(t));
            }
            client.state().initializePrevTasks(taskForPartition, false);
            client.state().computeTaskLags(spec.processId, c.endOffsetSums);
            metadata.put(spec.processId, client);
        }
        return new DefaultApplicationState(c.configs, tasks, metadata);
    }

    private static TaskTopicPartition partition(final TopicPartition tp, final boolean source, final boolean changelog,
                                                final Map<TopicPartition, Set<String>> racks) {
        final DefaultTaskTopicPartition partition = new DefaultTaskTopicPartition(tp, source, changelog, () -> { });
        final Set<String> ids = racks.get(tp);
        if (ids != null) {
            partition.annotateWithRackIds(ids);
        }
        return partition;
    }

    // ---------------------------------------------------------------------------------------
    // The differential run.

    static int run(final Map<String, String> opts) throws Exception {
        final int cases = Integer.parseInt(opts.getOrDefault("cases", "200"));
        final long seed = Long.parseLong(opts.getOrDefault("seed", "1"));
        final Path cli = Paths.get(required(opts, "cli"));
        final Path out = Paths.get(opts.getOrDefault("out", "target/plugin-differential"));
        final int show = Integer.parseInt(opts.getOrDefault("show", "3"));
        final String library = opts.get("library");
        final Random rnd = new Random(seed);

        int agreeing = 0;
        int differing = 0;
        int fallbacks = 0;
        int invalid = 0;
        int probing = 0;
        int recalled = 0;
        int memoryBreaches = 0;
        final List<String> memoryReports = new ArrayList<>();
        final Map<String, Integer> kinds = new TreeMap<>();
        final List<String> reports = new ArrayList<>();
        long pluginNanos = 0;
        long cliNanos = 0;

        Case prev = null;
        TaskAssignment prevResult = null;
        for (int i = 0; i < cases; i++) {
            final Case c = prev != null && prevResult != null && rnd.nextInt(3) == 0
                ? nextCase(rnd, i, prev, prevResult)
                : freshCase(rnd, i, seed);
            kinds.merge(c.kind, 1, Integer::sum);
            final DefaultApplicationState state = applicationState(c);
            final Path dumpDir = out.resolve("case-" + i);
            final Map<String, Object> configs = new HashMap<>();
            configs.put("application.id", c.applicationId);
            configs.put(OptimizedTaskAssignor.DUMP_DIR_CONFIG, dumpDir.toString());
            if (library != null) {
                configs.put(OptimizedTaskAssignor.NATIVE_LIBRARY_CONFIG, library);
            }
            final OptimizedTaskAssignor assignor = new OptimizedTaskAssignor(Clock.fixed(Instant.ofEpochMilli(c.nowMs), ZoneOffset.UTC));
            assignor.configure(configs);
            final long started = System.nanoTime();
            final TaskAssignment result = assignor.assign(state);
            pluginNanos += System.nanoTime() - started;
            final OptimizedTaskAssignor.Outcome outcome = assignor.lastOutcome();
            final String header = "case " + i + " (" + c.kind + ", " + c.clients.size() + " clients, " + c.taskCount()
                + " tasks, standbys " + c.configs.numStandbyReplicas() + ", strategy " + c.configs.rackAwareAssignmentStrategy()
                + ", application.id " + c.applicationId + ", nowMs " + c.nowMs + ")";
            if (outcome.fellBack()) {
                fallbacks++;
                reports.add(header + ": the plugin fell back to the StickyTaskAssignor: " + outcome.fallbackReason());
                prev = null;
                prevResult = null;
                continue;
            }
            final AssignmentError error = TaskAssignmentUtils.validateTaskAssignment(state, result);
            if (error != AssignmentError.NONE) {
                invalid++;
                reports.add(header + ": Kafka's validation reports " + error);
            }
            if (outcome.dumpFile() == null) {
                differing++;
                reports.add(header + ": the plugin wrote no dump");
                continue;
            }
            if (outcome.response().summary().contains("restore rates from the rebalance")) {
                recalled++;
                if (c.mustStartFresh != null) {
                    memoryBreaches++;
                    memoryReports.add(header + ": the engine used its memory although " + c.mustStartFresh
                        + " (docs/plugin.md, Memory between rebalances); summary: " + outcome.response().summary());
                }
            }
            final long cliStarted = System.nanoTime();
            final JsonNode expected = runCli(cli, outcome.dumpFile());
            cliNanos += System.nanoTime() - cliStarted;
            final List<String> diffs = compare(result, expected, c.nowMs);
            if (expected.path("probingRebalance").path("needed").asBoolean(false)) {
                probing++;
            }
            if (diffs.isEmpty() && error == AssignmentError.NONE) {
                agreeing++;
            } else if (!diffs.isEmpty()) {
                differing++;
                reports.add(header + ", dump " + outcome.dumpFile() + ":\n    " + String.join("\n    ", diffs));
            }
            prev = c;
            prevResult = result;
        }

        for (int i = 0; i < Math.min(show, reports.size()); i++) {
            System.out.println(reports.get(i));
        }
        for (int i = 0; i < Math.min(show, memoryReports.size()); i++) {
            System.out.println(memoryReports.get(i));
        }
        System.out.println("kinds: " + kinds);
        System.out.printf("plugin %.0f ms, cli %.0f ms in total; %d cases asked for a probing rebalance, "
            + "%d used the memory of the previous rebalance%n", pluginNanos / 1e6, cliNanos / 1e6, probing, recalled);
        System.out.printf("%d cases: %d agree, %d differ, %d invalid, %d fell back, %d broke the memory rule%n",
            cases, agreeing, differing, invalid, fallbacks, memoryBreaches);
        return differing + invalid + fallbacks + memoryBreaches == 0 ? 0 : 1;
    }

    private static String required(final Map<String, String> opts, final String key) {
        final String value = opts.get(key);
        if (value == null) {
            System.err.println("--" + key + " is required");
            System.exit(2);
        }
        return value;
    }

    static JsonNode runCli(final Path cli, final Path dump) throws IOException, InterruptedException {
        final Path stderr = dump.resolveSibling(dump.getFileName() + ".cli-stderr.txt");
        final Process process = new ProcessBuilder(cli.toString(), "assign", "--assignor", "optimized", "--compact",
            "--input", dump.toString())
            .redirectError(stderr.toFile())
            .start();
        process.getOutputStream().close();
        final byte[] stdout = process.getInputStream().readAllBytes();
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException(cli + " failed on " + dump + ": "
                + new String(Files.readAllBytes(stderr), StandardCharsets.UTF_8));
        }
        return JSON.readTree(new String(stdout, StandardCharsets.UTF_8));
    }

    /** The differences between the plugin's assignment and the CLI's, one line each. */
    static List<String> compare(final TaskAssignment result, final JsonNode cli, final long nowMs) {
        final List<String> diffs = new ArrayList<>();
        final Map<String, KafkaStreamsAssignment> plugin = new TreeMap<>();
        for (final KafkaStreamsAssignment a : result.assignment()) {
            plugin.put(a.processId().id().toString(), a);
        }
        final JsonNode clients = cli.path("clients");
        final Set<String> cliIds = new TreeSet<>();
        clients.fieldNames().forEachRemaining(cliIds::add);
        if (!cliIds.equals(plugin.keySet())) {
            diffs.add("clients: plugin " + plugin.keySet() + ", cli " + cliIds);
        }
        final boolean needed = cli.path("probingRebalance").path("needed").asBoolean(false);
        final long afterMs = cli.path("probingRebalance").path("afterMs").asLong();
        int followups = 0;
        for (final Map.Entry<String, KafkaStreamsAssignment> entry : plugin.entrySet()) {
            final String id = entry.getKey();
            final KafkaStreamsAssignment a = entry.getValue();
            final JsonNode c = clients.path(id);
            final Set<String> active = new TreeSet<>();
            final Set<String> standby = new TreeSet<>();
            for (final AssignedTask task : a.tasks().values()) {
                (task.type() == AssignedTask.Type.ACTIVE ? active : standby).add(task.id().toString());
            }
            final Set<String> cliActive = strings(c.path("active"));
            final Set<String> cliStandby = strings(c.path("standby"));
            cliStandby.addAll(strings(c.path("warmup")));
            cliStandby.addAll(strings(c.path("spare")));
            if (!active.equals(cliActive)) {
                diffs.add(id + " active: plugin " + active + ", cli " + cliActive);
            }
            if (!standby.equals(cliStandby)) {
                diffs.add(id + " standby: plugin " + standby + ", cli " + cliStandby + " (standby, warm-up and spare)");
            }
            if (a.followupRebalanceDeadline().isPresent()) {
                followups++;
                final long deadline = a.followupRebalanceDeadline().get().toEpochMilli();
                if (needed && deadline != nowMs + afterMs) {
                    diffs.add(id + " follow-up at " + deadline + ", not nowMs + afterMs = " + (nowMs + afterMs));
                }
            }
        }
        if (needed != (followups > 0)) {
            diffs.add("probing rebalance: cli needed=" + needed + ", plugin follow-up deadlines on " + followups + " clients");
        } else if (followups > 1) {
            diffs.add("follow-up deadlines on " + followups + " clients, not one");
        }
        return diffs;
    }

    private static Set<String> strings(final JsonNode array) {
        final Set<String> out = new TreeSet<>();
        for (final JsonNode node : array) {
            out.add(node.asText());
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // The boundary cost.

    static int boundary(final Map<String, String> opts) {
        final int clientCount = Integer.parseInt(opts.getOrDefault("clients", "1000"));
        final int taskCount = Integer.parseInt(opts.getOrDefault("tasks", "10000"));
        final int runs = Integer.parseInt(opts.getOrDefault("runs", "9"));
        final int warmups = Integer.parseInt(opts.getOrDefault("warmups", "1"));
        final Random rnd = new Random(Long.parseLong(opts.getOrDefault("seed", "1")));

        // 10 subtopologies, half of them stateful; every task running on a client, every stateful
        // task with one caught-up or nearly caught-up standby elsewhere.
        final int subCount = 10;
        final List<Sub> subs = new ArrayList<>();
        for (int s = 0; s < subCount; s++) {
            subs.add(new Sub(s, taskCount / subCount, s % 2 == 0, s % 2 == 0));
        }
        final AssignmentConfigs configs = new AssignmentConfigs(10_000L, 2, 1, 600_000L, Collections.emptyList(),
            OptionalInt.empty(), OptionalInt.empty(), "none");
        final List<ClientSpec> clients = new ArrayList<>();
        for (int c = 0; c < clientCount; c++) {
            clients.add(new ClientSpec(new ProcessId(new UUID(rnd.nextLong(), rnd.nextLong())), 4, Optional.empty(),
                Map.of(), "host-" + c + ":9092"));
        }
        final Map<TaskId, Long> endOffsetSums = new TreeMap<>();
        int next = 0;
        for (final TaskId task : tasks(subs)) {
            final ClientSpec owner = clients.get(next++ % clientCount);
            owner.owned.add(task);
            if (stateful(subs, task)) {
                final long end = 1_000_000L + rnd.nextInt(1_000_000);
                endOffsetSums.put(task, end);
                owner.offsetSums.put(task, -2L);
                clients.get((next + clientCount / 2) % clientCount).offsetSums.put(task, end - rnd.nextInt(20_000));
            }
        }
        final Case c = new Case(0, "boundary", "boundary", BASE_NOW_MS, configs, subs, endOffsetSums, clients, Map.of());
        final DefaultApplicationState state = applicationState(c);
        state.kafkaStreamsStates(true); // Kafka's own cost of building the states, for any assignor

        final String source = NativeEngine.ensureLoaded(opts.get("library"));
        System.out.println("native engine " + NativeEngine.version() + " from " + source);
        final Map<String, String> requestConfigs = RequestWriter.configs(configs, Map.of(), Arrays.asList(NativeEngine.configKeys()));
        final List<Long> reads = new ArrayList<>();
        final List<Long> crossings = new ArrayList<>();
        final List<Long> engines = new ArrayList<>();
        final List<Long> totals = new ArrayList<>();
        for (int run = 0; run < warmups + runs; run++) {
            final long started = System.nanoTime();
            final RequestWriter.Snapshot snapshot = RequestWriter.snapshot(state);
            final long snapped = System.nanoTime();
            // One application rebalancing a minute apart, as a group does: from the second run on
            // the engine recalls the previous one (restore rates), as it would in production.
            final byte[] request = snapshot.encode("boundary", BASE_NOW_MS + 60_000L * run, 0, requestConfigs);
            final long written = System.nanoTime();
            final byte[] responseBytes = NativeEngine.assign(request);
            final long called = System.nanoTime();
            final ResponseReader.Response response = ResponseReader.read(responseBytes);
            final long read = System.nanoTime();
            final long engine = response.engineNanos();
            final String label = run < warmups ? "warm-up" : "run " + (run - warmups + 1);
            System.out.printf("%s: read the state %.1f ms, encode %.1f ms, native call %.1f ms (engine %.1f ms), "
                    + "response to TaskAssignment %.1f ms; request %d bytes, response %d bytes%n",
                label, (snapped - started) / 1e6, (written - snapped) / 1e6, (called - written) / 1e6, engine / 1e6,
                (read - called) / 1e6, request.length, responseBytes.length);
            if (run == 0) {
                final AssignmentError error = TaskAssignmentUtils.validateTaskAssignment(state, response.assignment());
                if (error != AssignmentError.NONE) {
                    System.out.println("Kafka's validation reports " + error);
                    return 1;
                }
            }
            if (run == warmups + runs - 1) {
                System.out.println("the last run's summary: " + response.summary());
            }
            if (run >= warmups) {
                totals.add(read - started);
                engines.add(engine);
                reads.add(snapped - started);
                crossings.add((read - snapped) - engine);
            }
        }
        final double readMs = median(reads) / 1e6;
        final double crossingMs = median(crossings) / 1e6;
        final double engineMs = median(engines) / 1e6;
        System.out.printf("%d clients x %d tasks (4 threads each, 1 standby), median of %d: total %.1f ms%n",
            clientCount, taskCount, runs, median(totals) / 1e6);
        System.out.printf("reading the ApplicationState through KIP-924 (lagFor and the previous tasks) %.1f ms, %.1f %% of the engine's time%n",
            readMs, 100 * readMs / engineMs);
        final double totalMs = median(totals) / 1e6;
        System.out.printf("boundary %.1f ms, engine %.1f ms, %.1f %% (%.1f %% of the whole assign call, %.1f ms)%n",
            crossingMs, engineMs, 100 * crossingMs / engineMs, 100 * crossingMs / totalMs, totalMs);
        return 0;
    }

    private static double median(final List<Long> values) {
        final List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        final int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
    }
}
