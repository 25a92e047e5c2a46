package io.kstreamsassignor.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;

/**
 * The applications of compat/e2e/topologies.sh, each a small topology of one kind (joins with
 * re-keying, windows, sessions, suppress, a foreign-key join, a global table, named processors,
 * independent sub-topologies), with a deterministic input and its exact expected output.
 *
 * <p>Every input topic is {@code <prefix>-<name>}; every application writes String keys and String
 * values to one output topic. Every input record carries an explicit event time from
 * {@code base}, so that windows and sessions do not depend on the wall clock. {@link #expected} is
 * computed from the same records with plain Java collections, not with Kafka Streams; it is the
 * final value per output key (a key whose last value is a tombstone is absent).
 */
final class Apps {
    private Apps() {}

    /** One input record: topic (its short name), partition (-1: by key), key, value, event time. */
    record Rec(String topic, int partition, String key, String value, long ts) {}

    /** One application. */
    interface App {
        String name();

        /** Its input topics (short names) and their partition counts, in creation order. */
        Map<String, Integer> inputs();

        /** Adds the application to {@code b}: {@code topic} maps a short name to the topic's name. */
        void build(StreamsBuilder b, Function<String, String> topic, String output);

        /** The input, in the order it is produced. */
        List<Rec> input(long base);

        /** The exact final output of {@code input}. */
        Map<String, String> expected(List<Rec> input);

        /**
         * The partition counts it fixes ({@code Repartitioned.withNumberOfPartitions}), by repartition
         * topic (raw name), which its {@code Topology#describe()} text does not show.
         */
        default Map<String, Integer> fixedPartitions() {
            return Map.of();
        }
    }

    static final List<App> ALL = List.of(
        new RekeyJoin(), new StreamJoin(), new FkJoin(), new WindowAgg(), new SessionAgg(),
        new Suppress(), new TableGroupBy(), new GlobalJoin(), new NamedOps(), new Multi());

    static App get(final String name) {
        for (final App a : ALL) {
            if (a.name().equals(name)) {
                return a;
            }
        }
        throw new IllegalArgumentException("no application " + name + "; there are " + names());
    }

    static List<String> names() {
        final List<String> n = new ArrayList<>();
        ALL.forEach(a -> n.add(a.name()));
        return n;
    }

    static Topology topology(final App app, final String prefix, final String output) {
        final StreamsBuilder b = new StreamsBuilder();
        app.build(b, t -> prefix + "-" + t, output);
        return b.build();
    }

    private static Consumed<String, String> strings() {
        return Consumed.with(Serdes.String(), Serdes.String());
    }

    private static Produced<String, String> out() {
        return Produced.with(Serdes.String(), Serdes.String());
    }

    private static Materialized<String, Long, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>> longs() {
        return Materialized.with(Serdes.String(), Serdes.Long());
    }

    private static long num(final String s) {
        return Long.parseLong(s);
    }

    private static String head(final String v) {
        return v.substring(0, v.indexOf(':'));
    }

    private static long tail(final String v) {
        return Long.parseLong(v.substring(v.indexOf(':') + 1));
    }

    private static String windowKey(final Windowed<String> w) {
        return w.key() + "@" + w.window().start();
    }

    /** The last value per key of the records of {@code topic}, as a table reads them. */
    private static Map<String, String> table(final List<Rec> input, final String topic) {
        final Map<String, String> t = new HashMap<>();
        for (final Rec r : input) {
            if (r.topic().equals(topic)) {
                t.put(r.key(), r.value());
            }
        }
        return t;
    }

    private static <T> Map<String, T> sorted(final Map<String, T> m) {
        return new TreeMap<>(m);
    }

    private static Map<String, String> text(final Map<String, Long> m) {
        final Map<String, String> t = new TreeMap<>();
        m.forEach((k, v) -> t.put(k, String.valueOf(v)));
        return t;
    }

    /**
     * Orders (order id → {@code customer:amount}) re-keyed by customer, joined with the customers
     * table (customer → region), re-keyed by region and summed: three sub-topologies, the join's
     * co-partitioned with the customers topic.
     */
    static final class RekeyJoin implements App {
        public String name() {
            return "rekey-join";
        }

        public Map<String, Integer> inputs() {
            final Map<String, Integer> m = new LinkedHashMap<>();
            m.put("customers", 4);
            m.put("orders", 4);
            return m;
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            final KTable<String, String> customers = b.table(topic.apply("customers"), strings());
            b.stream(topic.apply("orders"), strings())
                .selectKey((k, v) -> head(v))
                .join(customers, (order, region) -> region + ":" + tail(order))
                .groupBy((customer, v) -> head(v), Grouped.with(Serdes.String(), Serdes.String()))
                .aggregate(() -> 0L, (region, v, sum) -> sum + tail(v), longs())
                .toStream()
                .mapValues(String::valueOf)
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int c = 0; c < 12; c++) {
                in.add(new Rec("customers", -1, "c" + c, "r" + (c * 5 % 3), base + c));
            }
            for (int i = 0; i < 400; i++) {
                in.add(new Rec("orders", -1, "o" + i, "c" + (i * 7 % 12) + ":" + (i % 9 + 1), base + 1_000 + i * 10L));
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, String> customers = table(input, "customers");
            final Map<String, Long> sums = new HashMap<>();
            for (final Rec r : input) {
                if (r.topic().equals("orders") && customers.containsKey(head(r.value()))) {
                    sums.merge(customers.get(head(r.value())), tail(r.value()), Long::sum);
                }
            }
            return text(sums);
        }
    }

    /**
     * A stream–stream join within 10 s: payments (payment id → {@code order:paid}, 2 partitions)
     * re-keyed by order and joined with orders (order id → amount, 4 partitions); the repartition
     * topic takes the orders' 4 partitions.
     */
    static final class StreamJoin implements App {
        public String name() {
            return "stream-join";
        }

        public Map<String, Integer> inputs() {
            final Map<String, Integer> m = new LinkedHashMap<>();
            m.put("orders", 4);
            m.put("payments", 2);
            return m;
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            final KStream<String, String> orders = b.stream(topic.apply("orders"), strings());
            final KStream<String, String> payments = b.stream(topic.apply("payments"), strings())
                .selectKey((k, v) -> head(v));
            orders.join(payments, (amount, payment) -> amount + "/" + tail(payment),
                    JoinWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(10), Duration.ofHours(1)),
                    StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()))
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                in.add(new Rec("orders", -1, "o" + i, String.valueOf(i % 13 + 1), base + i * 100L));
            }
            for (int i = 0; i < 300; i++) {
                if (i % 5 != 0) {
                    // A third of the payments come 20 s after their order: outside the window.
                    final long late = i % 3 == 0 ? 20_000 : 2_000;
                    in.add(new Rec("payments", -1, "p" + i, "o" + i + ":" + (i % 7 + 1), base + i * 100L + late));
                }
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, Rec> orders = new HashMap<>();
            for (final Rec r : input) {
                if (r.topic().equals("orders")) {
                    orders.put(r.key(), r);
                }
            }
            final Map<String, String> m = new TreeMap<>();
            for (final Rec r : input) {
                if (r.topic().equals("payments")) {
                    final Rec o = orders.get(head(r.value()));
                    if (o != null && Math.abs(o.ts() - r.ts()) <= 10_000) {
                        m.put(o.key(), o.value() + "/" + tail(r.value()));
                    }
                }
            }
            return m;
        }
    }

    /**
     * A foreign-key table–table join: orders (order id → {@code customer:amount}) joined with the
     * customers table (3 partitions) on the order's customer; some customers move region and some
     * orders change customer after the first records.
     */
    static final class FkJoin implements App {
        public String name() {
            return "fk-join";
        }

        public Map<String, Integer> inputs() {
            final Map<String, Integer> m = new LinkedHashMap<>();
            m.put("customers", 3);
            m.put("orders", 4);
            return m;
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            final KTable<String, String> customers = b.table(topic.apply("customers"), strings());
            b.table(topic.apply("orders"), strings())
                .join(customers, (String order) -> head(order), (order, region) -> tail(order) + "@" + region)
                .toStream()
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int c = 0; c < 12; c++) {
                in.add(new Rec("customers", -1, "c" + c, "r" + (c % 4), base + c));
            }
            for (int i = 0; i < 200; i++) {
                in.add(new Rec("orders", -1, "o" + i, "c" + (i * 5 % 12) + ":" + (i % 11 + 1), base + 1_000 + i * 10L));
            }
            for (int c = 0; c < 4; c++) {
                in.add(new Rec("customers", -1, "c" + c, "r" + (c + 1) % 4 + "-moved", base + 5_000 + c));
            }
            for (int i = 0; i < 20; i++) {
                in.add(new Rec("orders", -1, "o" + i, "c" + (i * 7 % 12) + ":" + (i % 11 + 2), base + 6_000 + i * 10L));
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, String> customers = table(input, "customers");
            final Map<String, String> m = new TreeMap<>();
            table(input, "orders").forEach((id, order) -> {
                final String region = customers.get(head(order));
                if (region != null) {
                    m.put(id, tail(order) + "@" + region);
                }
            });
            return m;
        }
    }

    /**
     * Clicks (user → page) re-grouped by page and counted in tumbling 10 s windows (grace 1 h, as
     * the repartition topic mixes the order of the users' partitions): {@code page@windowStart → count}.
     */
    static final class WindowAgg implements App {
        public String name() {
            return "window-agg";
        }

        public Map<String, Integer> inputs() {
            return Map.of("clicks", 4);
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            b.stream(topic.apply("clicks"), strings())
                .groupBy((user, page) -> page, Grouped.with("by-page", Serdes.String(), Serdes.String()))
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofHours(1)))
                .count()
                .toStream()
                .map((w, n) -> KeyValue.pair(windowKey(w), String.valueOf(n)))
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                in.add(new Rec("clicks", -1, "u" + i % 7, "p" + i % 5, base + i * 150L));
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, Long> m = new HashMap<>();
            for (final Rec r : input) {
                m.merge(r.value() + "@" + (r.ts() - r.ts() % 10_000), 1L, Long::sum);
            }
            return text(m);
        }
    }

    /**
     * Clicks (click id → user) re-grouped by user and counted in sessions (inactivity gap 5 s, grace
     * 1 h): {@code user@start-end → count}; a session merged into a longer one is a tombstone.
     */
    static final class SessionAgg implements App {
        static final long GAP = 5_000;

        public String name() {
            return "session-agg";
        }

        public Map<String, Integer> inputs() {
            return Map.of("clicks", 4);
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            b.stream(topic.apply("clicks"), strings())
                .groupBy((click, user) -> user, Grouped.with("by-user", Serdes.String(), Serdes.String()))
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(GAP), Duration.ofHours(1)))
                .count()
                .toStream()
                .map((w, n) -> KeyValue.pair(w.key() + "@" + w.window().start() + "-" + w.window().end(),
                    n == null ? null : String.valueOf(n)))
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            // Every user clicks each second in bursts of 10, with 21 s of silence between bursts:
            // 4 sessions of 10 clicks per user.
            for (int k = 0; k < 40; k++) {
                for (int u = 0; u < 6; u++) {
                    in.add(new Rec("clicks", -1, "e" + k + "-" + u, "u" + u, base + u * 7L + k * 1_000L + (k / 10) * 20_000L));
                }
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, List<Long>> times = new TreeMap<>();
            for (final Rec r : input) {
                times.computeIfAbsent(r.value(), k -> new ArrayList<>()).add(r.ts());
            }
            final Map<String, String> m = new TreeMap<>();
            times.forEach((user, ts) -> {
                ts.sort(Long::compare);
                int from = 0;
                for (int i = 1; i <= ts.size(); i++) {
                    if (i == ts.size() || ts.get(i) - ts.get(i - 1) > GAP) {
                        m.put(user + "@" + ts.get(from) + "-" + ts.get(i - 1), String.valueOf(i - from));
                        from = i;
                    }
                }
            });
            return m;
        }
    }

    /**
     * Clicks counted per user in tumbling 10 s windows (grace 1 s), suppressed until each window
     * closes: one final count per window. A last record on every partition, an hour later, closes
     * the windows; its own window never closes and is never written. The final counts are also
     * summed per user through a repartition topic: {@code total:user → clicks}.
     */
    static final class Suppress implements App {
        public String name() {
            return "suppress";
        }

        public Map<String, Integer> inputs() {
            return Map.of("clicks", 4);
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            final KStream<Windowed<String>, Long> closed = b.stream(topic.apply("clicks"), strings())
                .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(1)))
                .count()
                .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
                .toStream();
            closed.map((w, n) -> KeyValue.pair(windowKey(w), String.valueOf(n))).to(output, out());
            closed.map((w, n) -> KeyValue.pair(w.key(), String.valueOf(n)))
                .groupByKey(Grouped.with("per-user", Serdes.String(), Serdes.String()))
                .aggregate(() -> 0L, (user, n, sum) -> sum + num(n), longs())
                .toStream()
                .map((user, sum) -> KeyValue.pair("total:" + user, String.valueOf(sum)))
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                in.add(new Rec("clicks", -1, "u" + i % 5, "p" + i % 4, base + i * 200L));
            }
            for (int p = 0; p < 4; p++) {
                in.add(new Rec("clicks", p, "~end" + p, "-", base + 3_600_000L));
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, Long> m = new HashMap<>();
            for (final Rec r : input) {
                if (!r.key().startsWith("~")) {
                    m.merge(r.key() + "@" + (r.ts() - r.ts() % 10_000), 1L, Long::sum);
                    m.merge("total:" + r.key(), 1L, Long::sum);
                }
            }
            return text(m);
        }
    }

    /**
     * A table re-grouped by a column: stock (sku → {@code warehouse:quantity}, updated, some skus
     * moving warehouse) grouped by warehouse through a repartition topic and summed with adder and
     * subtractor.
     */
    static final class TableGroupBy implements App {
        public String name() {
            return "table-groupby";
        }

        public Map<String, Integer> inputs() {
            return Map.of("stock", 4);
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            b.table(topic.apply("stock"), strings())
                .groupBy((sku, v) -> KeyValue.pair(head(v), String.valueOf(tail(v))),
                    Grouped.with("by-warehouse", Serdes.String(), Serdes.String()))
                .aggregate(() -> 0L, (w, q, sum) -> sum + num(q), (w, q, sum) -> sum - num(q), longs())
                .toStream()
                .mapValues(String::valueOf)
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                in.add(new Rec("stock", -1, "s" + i, "w" + i % 4 + ":" + (i % 10 + 1), base + i));
            }
            for (int i = 0; i < 30; i++) {
                in.add(new Rec("stock", -1, "s" + i, "w" + (i + 1) % 4 + ":" + (i % 6 + 20), base + 1_000 + i));
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, Long> m = new HashMap<>();
            table(input, "stock").values().forEach(v -> m.merge(head(v), tail(v), Long::sum));
            return text(m);
        }
    }

    /**
     * Orders (order id → {@code product:quantity}) joined with the products GlobalKTable
     * (product → price) and summed per product through a repartition topic.
     */
    static final class GlobalJoin implements App {
        public String name() {
            return "global-table";
        }

        public Map<String, Integer> inputs() {
            final Map<String, Integer> m = new LinkedHashMap<>();
            m.put("products", 2);
            m.put("orders", 4);
            return m;
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            final GlobalKTable<String, String> products = b.globalTable(topic.apply("products"), strings());
            b.stream(topic.apply("orders"), strings())
                .join(products, (id, order) -> head(order), (order, price) -> head(order) + ":" + tail(order) * num(price))
                .groupBy((id, v) -> head(v), Grouped.with(Serdes.String(), Serdes.String()))
                .aggregate(() -> 0L, (p, v, sum) -> sum + tail(v), longs())
                .toStream()
                .mapValues(String::valueOf)
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int p = 0; p < 10; p++) {
                in.add(new Rec("products", -1, "p" + p, String.valueOf(p * 3 + 1), base + p));
            }
            for (int i = 0; i < 300; i++) {
                in.add(new Rec("orders", -1, "o" + i, "p" + (i * 3 % 11) + ":" + (i % 4 + 1), base + 1_000 + i * 10L));
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, String> prices = table(input, "products");
            final Map<String, Long> m = new HashMap<>();
            for (final Rec r : input) {
                // p10 is no product: the inner join drops its orders.
                if (r.topic().equals("orders") && prices.containsKey(head(r.value()))) {
                    m.merge(head(r.value()), tail(r.value()) * num(prices.get(head(r.value()))), Long::sum);
                }
            }
            return text(m);
        }
    }

    /**
     * Named processors: orders keyed by customer are filtered ({@code big-orders}), joined with the
     * customers table by a join named {@code enrich} (no JOIN in its name), grouped by region
     * ({@code by-region}), counted ({@code tally}, store {@code region-tally}) and written by
     * {@code sink}.
     */
    static final class NamedOps implements App {
        public String name() {
            return "named";
        }

        public Map<String, Integer> inputs() {
            final Map<String, Integer> m = new LinkedHashMap<>();
            m.put("customers", 4);
            m.put("orders", 4);
            return m;
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            final KTable<String, String> customers = b.table(topic.apply("customers"), strings());
            b.stream(topic.apply("orders"), strings())
                .filter((customer, amount) -> num(amount) >= 3, Named.as("big-orders"))
                .join(customers, (amount, region) -> region + ":" + amount,
                    Joined.with(Serdes.String(), Serdes.String(), Serdes.String()).withName("enrich"))
                .groupBy((customer, v) -> head(v), Grouped.with("by-region", Serdes.String(), Serdes.String()))
                .count(Named.as("tally"), Materialized.as("region-tally"))
                .toStream(Named.as("tally-out"))
                .mapValues(n -> String.valueOf(n), Named.as("as-text"))
                .to(output, out().withName("sink"));
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int c = 0; c < 10; c++) {
                in.add(new Rec("customers", -1, "c" + c, "r" + c % 3, base + c));
            }
            for (int i = 0; i < 400; i++) {
                // c10 and c11 are no customers: the inner join drops their orders.
                in.add(new Rec("orders", -1, "c" + i % 12, String.valueOf(i % 6), base + 1_000 + i * 10L));
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, String> customers = table(input, "customers");
            final Map<String, Long> m = new HashMap<>();
            for (final Rec r : input) {
                if (r.topic().equals("orders") && num(r.value()) >= 3 && customers.containsKey(r.key())) {
                    m.merge(customers.get(r.key()), 1L, Long::sum);
                }
            }
            return text(m);
        }
    }

    /**
     * Independent pipelines, four sub-topologies: {@code a} filtered and mapped (stateless),
     * {@code b} counted per key (3 partitions), {@code c} counted per value through an explicit
     * {@code repartition()} with 2 partitions.
     */
    static final class Multi implements App {
        public String name() {
            return "multi";
        }

        public Map<String, Integer> fixedPartitions() {
            return Map.of("by-value-repartition", 2);
        }

        public Map<String, Integer> inputs() {
            final Map<String, Integer> m = new LinkedHashMap<>();
            m.put("a", 4);
            m.put("b", 3);
            m.put("c", 4);
            return m;
        }

        public void build(final StreamsBuilder b, final Function<String, String> topic, final String output) {
            b.stream(topic.apply("a"), strings())
                .filter((k, v) -> num(v) % 2 == 0)
                .map((k, v) -> KeyValue.pair("a:" + k, "a" + v))
                .to(output, out());
            b.stream(topic.apply("b"), strings())
                .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
                .count()
                .toStream()
                .map((k, n) -> KeyValue.pair("b:" + k, String.valueOf(n)))
                .to(output, out());
            b.stream(topic.apply("c"), strings())
                .selectKey((k, v) -> v)
                .repartition(Repartitioned.<String, String>with(Serdes.String(), Serdes.String())
                    .withName("by-value").withNumberOfPartitions(2))
                .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
                .count()
                .toStream()
                .map((k, n) -> KeyValue.pair("c:" + k, String.valueOf(n)))
                .to(output, out());
        }

        public List<Rec> input(final long base) {
            final List<Rec> in = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                in.add(new Rec("a", -1, "k" + i, String.valueOf(i * 7 % 10), base + i));
                in.add(new Rec("b", -1, "k" + i % 9, "x", base + i));
                in.add(new Rec("c", -1, "k" + i, "v" + i * 3 % 8, base + i));
            }
            return in;
        }

        public Map<String, String> expected(final List<Rec> input) {
            final Map<String, String> m = new TreeMap<>();
            final Map<String, Long> counts = new HashMap<>();
            for (final Rec r : input) {
                switch (r.topic()) {
                    case "a":
                        if (num(r.value()) % 2 == 0) {
                            m.put("a:" + r.key(), "a" + r.value());
                        }
                        break;
                    case "b":
                        counts.merge("b:" + r.key(), 1L, Long::sum);
                        break;
                    default:
                        counts.merge("c:" + r.value(), 1L, Long::sum);
                }
            }
            m.putAll(text(counts));
            return sorted(m);
        }
    }
}
