// Kafka's Java consumer as the members of one side of a usage-matrix cell: one JVM per side,
// one thread per member, each used the way its cell's usage uses a consumer. Started and
// driven by integration_tests/usage_matrix/java_consumer.py, which compiles this file against
// the kafka-clients jar the image build resolved.
//
// Commands on stdin, one a line, tokens without spaces:
//   add NAME HOLD USAGE KIND WHAT BATCH_S key=value...
//       a member: HOLD 1 = report "ready" and build nothing until "go"; KIND topics (WHAT
//       "a,b"), pattern (WHAT the regex) or partitions (WHAT "topic:p,..."); BATCH_S the
//       slow-session cell's processing time per batch; key=value the consumer's properties
//   do NAME go|stop|subscribe TOPICS|unsubscribe SECONDS|slow SECONDS
//   (end of input: every member stops as on "stop", then the JVM exits)
//
// Writes one JSON line per event on stdout with the member's name ("member") and
// "mono" = System.nanoTime()/1e9 (CLOCK_MONOTONIC on Linux: Python's time.monotonic()), the
// events kafka_python_member.py writes (started, subscribed, assignment, records, exception,
// lost, closing, closed, ...; see the usage_matrix package docstring), then "_exit" {rc}.
// An exception that reaches the application is reported under kafka-python's name for the
// same error (CommitFailedException -> CommitFailedError), so the judge counts like with like.
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Scanner;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class JavaUsageMember {
    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    /** written by the harness at the end to wake a blocked consumer; not a record */
    private static final byte[] SENTINEL = "stop".getBytes(StandardCharsets.US_ASCII);

    static double mono() {
        return System.nanoTime() / 1e9;
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static void emit(String member, String event, String fields) {
        String line = "{\"event\":" + quote(event) + ",\"member\":" + quote(member)
            + ",\"mono\":" + mono() + (fields.isEmpty() ? "" : "," + fields) + "}";
        synchronized (OUT) {
            OUT.println(line);
            OUT.flush();
        }
    }

    static String pairs(Collection<TopicPartition> tps) {
        TreeSet<String> sorted = new TreeSet<>();
        for (TopicPartition tp : tps) {
            sorted.add(tp.topic() + "\u0000" + String.format("%09d", tp.partition()));
        }
        List<String> items = new ArrayList<>();
        for (String s : sorted) {
            String[] parts = s.split("\u0000");
            items.add("[" + quote(parts[0]) + "," + Integer.parseInt(parts[1]) + "]");
        }
        return "[" + String.join(",", items) + "]";
    }

    /** kafka-python names Kafka's errors as Java does, with "Error" for "Exception" */
    static String errorName(Throwable e) {
        String name = e.getClass().getSimpleName();
        return name.endsWith("Exception")
            ? name.substring(0, name.length() - "Exception".length()) + "Error" : name;
    }

    static String error(Throwable e, String where, boolean fatal) {
        return "\"where\":" + quote(where) + ",\"type\":" + quote(errorName(e)) + ",\"message\":"
            + quote(e.getClass().getName() + ": " + e.getMessage()) + ",\"fatal\":" + fatal;
    }

    static void sleep(double seconds) {
        try {
            Thread.sleep((long) (seconds * 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static final class Member implements Runnable, ConsumerRebalanceListener {
        final String name;
        final boolean hold;
        final String usage;
        final String kind;
        final String what;
        final double batchS;
        final Properties props = new Properties();
        final BlockingQueue<String[]> commands = new LinkedBlockingQueue<>();
        KafkaConsumer<byte[], byte[]> consumer;
        boolean stopping;
        String held = "";
        final Map<TopicPartition, Long> processed = new HashMap<>(); // next offset to commit
        final List<String> pending = new ArrayList<>();
        final Set<String> failedOnce = new HashSet<>();
        double slowNext;
        double longestCall;
        double nextPause = mono() + 4.0;

        Member(String[] t) {
            name = t[1];
            hold = t[2].equals("1");
            usage = t[3];
            kind = t[4];
            what = t[5];
            batchS = Double.parseDouble(t[6]);
            for (int i = 7; i < t.length; i++) {
                int eq = t[i].indexOf('=');
                props.put(t[i].substring(0, eq), t[i].substring(eq + 1));
            }
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
            props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                      ByteArrayDeserializer.class.getName());
            props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                      ByteArrayDeserializer.class.getName());
            if (usage.equals("max-records")) { // kafka-python's poll(max_records=10)
                props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "10");
            }
        }

        List<String> topics() {
            return List.of(what.split(","));
        }

        // -- the member's life -----------------------------------------------------------------
        @Override
        public void run() {
            int rc = 0;
            try {
                if (hold && !awaitGo()) {
                    emit(name, "_exit", "\"rc\":0"); // stopped before the change
                    return;
                }
                emit(name, "started", "");
                build();
                loop();
            } catch (Exception e) { // what reaches the application and ends it
                emit(name, "exception", error(e, "loop", true));
                System.err.println("[member " + name + "] failed: " + e);
                e.printStackTrace();
                flush();
                if (consumer != null) {
                    try {
                        consumer.close(); // the application's finally
                    } catch (Exception ignored) {
                        // ending anyway
                    }
                }
                rc = 1;
            }
            if (rc == 0) {
                try {
                    flush();
                    close();
                } catch (Exception e) { // as an uncaught exception ends a Python member
                    System.err.println("[member " + name + "] close failed: " + e);
                    e.printStackTrace();
                    rc = 1;
                }
            }
            emit(name, "_exit", "\"rc\":" + rc);
        }

        boolean awaitGo() throws InterruptedException {
            emit(name, "ready", ""); // everything is loaded in this JVM already
            while (true) {
                String[] c = commands.take();
                if (c[2].equals("go")) {
                    return true;
                }
                if (c[2].equals("stop")) {
                    return false;
                }
            }
        }

        void build() {
            consumer = new KafkaConsumer<>(props);
            if (kind.equals("pattern")) { // the broker-side regex (KIP-848), as ours uses
                consumer.subscribe(new SubscriptionPattern(what));
            } else if (kind.equals("partitions")) {
                List<TopicPartition> tps = new ArrayList<>();
                for (String tp : what.split(",")) {
                    int colon = tp.lastIndexOf(':');
                    tps.add(new TopicPartition(tp.substring(0, colon),
                                               Integer.parseInt(tp.substring(colon + 1))));
                }
                consumer.assign(tps);
            } else if (usage.startsWith("listener-commit")) {
                consumer.subscribe(topics(), this);
            } else {
                consumer.subscribe(topics());
            }
            emit(name, "subscribed", "");
        }

        // -- what the application does with a record -----------------------------------------
        boolean process(ConsumerRecord<byte[], byte[]> r) {
            if (Arrays.equals(r.value(), SENTINEL)) {
                return true;
            }
            TopicPartition tp = new TopicPartition(r.topic(), r.partition());
            if (usage.equals("seek") && r.offset() % 25 == 3
                    && failedOnce.add(r.topic() + "/" + r.partition() + "/" + r.offset())) {
                emit(name, "retry", "\"tp\":[" + quote(r.topic()) + "," + r.partition()
                     + "],\"offset\":" + r.offset());
                consumer.seek(tp, r.offset());
                return false;
            }
            pending.add("[" + quote(r.topic()) + "," + r.partition() + "," + r.offset() + ","
                        + mono() + "]");
            processed.put(tp, r.offset() + 1);
            if (pending.size() >= 50) {
                flush();
            }
            return true;
        }

        void flush() {
            if (!pending.isEmpty()) {
                emit(name, "records", "\"r\":[" + String.join(",", pending) + "]");
                pending.clear();
            }
        }

        void observe() {
            String now = pairs(consumer.assignment());
            if (!now.equals(held)) {
                held = now;
                emit(name, "assignment", "\"held\":" + now);
            }
        }

        /** a consumer call the usage makes; CommitFailedException is what apps catch, go on */
        <T> T call(String where, Supplier<T> fn) {
            double started = mono();
            try {
                return fn.get();
            } catch (CommitFailedException e) {
                emit(name, "exception", error(e, where, false));
                return null;
            } finally {
                longestCall = Math.max(longestCall, mono() - started);
            }
        }

        void commitSync(String where) {
            call(where, () -> {
                consumer.commitSync();
                return null;
            });
        }

        void commitSync(String where, Map<TopicPartition, OffsetAndMetadata> offsets) {
            call(where, () -> {
                consumer.commitSync(offsets);
                return null;
            });
        }

        void asyncDone(Map<TopicPartition, OffsetAndMetadata> offsets, Exception e) {
            if (e != null) {
                emit(name, "async-commit-failed", "\"type\":" + quote(errorName(e)));
                System.err.println("[member " + name + "] commitAsync of "
                                   + pairs(offsets.keySet()) + " failed: " + e);
            }
        }

        // -- the loop ---------------------------------------------------------------------------
        void loop() {
            Duration timeout = Duration.ofMillis(usage.equals("poll0") ? 0 : 1000);
            while (!stopping) {
                ConsumerRecords<byte[], byte[]> batch = call("poll", () -> consumer.poll(timeout));
                if (batch != null) {
                    for (TopicPartition tp : batch.partitions()) {
                        for (ConsumerRecord<byte[], byte[]> r : batch.records(tp)) {
                            if (!process(r)) {
                                break; // sought back: the rest of this partition comes again
                            }
                        }
                    }
                }
                flush();
                if (batch != null && !batch.isEmpty()) {
                    afterBatch();
                } else if (usage.equals("poll0")) {
                    sleep(0.01); // an event loop's other work
                }
                between();
            }
        }

        void afterBatch() {
            if (usage.equals("commit")) {
                commitSync("commit");
            } else if (usage.equals("commit-async")) {
                consumer.commitAsync(this::asyncDone);
            } else if (usage.equals("slow-session") || usage.equals("slow-max-poll")) {
                double seconds = usage.equals("slow-session") ? batchS : slowNext;
                slowNext = 0;
                if (seconds > 0) {
                    emit(name, "slow", "\"seconds\":" + seconds);
                    sleep(seconds); // processing the batch
                    emit(name, "slow-done", "");
                }
            }
        }

        /** after each poll: observe, and do what the cell asks of the application */
        void between() {
            flush();
            observe();
            if (usage.equals("pause-resume") && mono() >= nextPause) {
                pauseFor(1.5);
            }
            String[] c;
            while ((c = commands.poll()) != null) {
                command(c);
            }
        }

        /** back-pressure: stop fetching everything for a while, keep polling, then resume */
        void pauseFor(double seconds) {
            consumer.pause(consumer.assignment());
            double until = mono() + seconds;
            while (mono() < until && !stopping) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    process(r); // paused: none should come
                }
                flush();
                observe();
            }
            consumer.resume(consumer.paused());
            nextPause = mono() + 4.0;
        }

        void command(String[] c) {
            String what = c[2];
            if (what.equals("stop")) {
                stopping = true;
            } else if (what.equals("subscribe")) {
                consumer.subscribe(List.of(c[3].split(",")));
            } else if (what.equals("slow")) {
                slowNext = Double.parseDouble(c[3]);
            } else if (what.equals("unsubscribe")) {
                consumer.unsubscribe();
                observe();
                sleep(Double.parseDouble(c[3]));
                consumer.subscribe(topics());
                emit(name, "resubscribed", "");
            }
            emit(name, "done", "\"do\":" + quote(what));
        }

        void close() {
            emit(name, "closing", "\"longest_call\":" + longestCall);
            if (usage.equals("commit") || usage.equals("commit-async")) {
                commitSync("commit"); // the sync commit before close
            } else if (usage.startsWith("listener-commit")) {
                commitSync("commit", offsets(consumer.assignment()));
            }
            consumer.close();
            emit(name, "closed", "");
        }

        Map<TopicPartition, OffsetAndMetadata> offsets(Collection<TopicPartition> which) {
            Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
            for (TopicPartition tp : which) {
                Long next = processed.get(tp);
                if (next != null) {
                    out.put(tp, new OffsetAndMetadata(next));
                }
            }
            return out;
        }

        // -- the documented pattern: commit what was processed of the partitions revoked --------
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
            emit(name, "revoked", "\"partitions\":" + pairs(revoked));
            Map<TopicPartition, OffsetAndMetadata> offsets = offsets(revoked);
            if (!offsets.isEmpty() && usage.equals("listener-commit-async")) {
                consumer.commitAsync(offsets, this::asyncDone);
            } else if (!offsets.isEmpty()) {
                commitSync("commit-in-listener", offsets);
            }
            processed.keySet().removeAll(revoked);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
            emit(name, "assigned", "\"partitions\":" + pairs(assigned));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> lost) {
            emit(name, "lost", "\"partitions\":" + pairs(lost)); // the docs: do not commit
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, Member> members = new HashMap<>();
        List<Thread> threads = new ArrayList<>();
        Scanner in = new Scanner(System.in, StandardCharsets.UTF_8);
        while (in.hasNextLine()) {
            String[] t = in.nextLine().trim().split(" ");
            if (t[0].equals("add")) {
                Member m = new Member(t);
                members.put(m.name, m);
                Thread thread = new Thread(m, "member-" + m.name);
                threads.add(thread);
                thread.start();
            } else if (t[0].equals("do") && members.containsKey(t[1])) {
                members.get(t[1]).commands.add(t);
            }
        }
        for (Member m : members.values()) { // the harness went away: every member stops
            m.commands.add(new String[] {"do", m.name, "stop"});
        }
        for (Thread thread : threads) {
            thread.join(60_000);
        }
        System.exit(0);
    }
}
