// One JVM hosting any number of Java consumer-group members (Kafka's own KafkaConsumer), one
// thread each, for benchmarks/rebalance_timings.py. Compiled and run by the benchmark:
//
//     javac -cp kafka-clients.jar -d OUT RebalanceMember.java
//     java -cp OUT:kafka-clients.jar:... RebalanceMember '<config JSON-ish: see below>'
//
// Arguments: bootstrap group topic strategy(class name) revokeDelayMs sessionTimeoutMs
// heartbeatIntervalMs. Commands on stdin: "add NAME" starts one member; "remove NAME" closes
// that member (commit, leave); "stop" (or EOF) closes every member and exits.
//
// Writes one JSON line per event on stdout, in the format of kafka_assignors.embedded.events:
// subscribed, assigned/revoked/lost (rebalance listener, with a snapshot: generation,
// member_id, state, protocol, assignment), record (topic, partition, offset), closing, closed,
// error. "mono" is System.nanoTime()/1e9: CLOCK_MONOTONIC on Linux, the clock of Python's
// time.monotonic(), so the Python side compares them directly.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class RebalanceMember {
    private static final PrintStream OUT =
        new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
                        StandardCharsets.UTF_8);
    private static final long PID = ProcessHandle.current().pid();
    private static final AtomicBoolean STOP = new AtomicBoolean(false);

    private static String quote(String s) {
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
        double mono = System.nanoTime() / 1e9;
        String line = "{\"event\":" + quote(event) + ",\"member\":" + quote(member)
            + ",\"pid\":" + PID + ",\"mono\":" + mono
            + ",\"wall\":" + (System.currentTimeMillis() / 1e3)
            + (fields.isEmpty() ? "" : "," + fields) + "}";
        synchronized (OUT) {
            OUT.println(line);
            OUT.flush();
        }
    }

    static String pairs(Collection<TopicPartition> tps) {
        TreeSet<String> sorted = new TreeSet<>();
        List<String> items = new ArrayList<>();
        for (TopicPartition tp : tps) {
            sorted.add(tp.topic() + "\u0000" + String.format("%09d", tp.partition()));
        }
        for (String s : sorted) {
            String[] parts = s.split("\u0000");
            items.add("[" + quote(parts[0]) + "," + Integer.parseInt(parts[1]) + "]");
        }
        return "[" + String.join(",", items) + "]";
    }

    /** a strategy "consumer:NAME" runs the member on the consumer group protocol (KIP-848) */
    static final String CONSUMER_PROTOCOL = "consumer:";

    static final class Member implements Runnable, ConsumerRebalanceListener {
        final String name;
        final String topic;
        final String strategy;
        final long revokeDelayMs;
        final KafkaConsumer<byte[], byte[]> consumer;
        final AtomicBoolean removed = new AtomicBoolean(false);

        Member(String name, String[] args) {
            this.name = name;
            this.topic = args[2];
            this.strategy = args[3];
            this.revokeDelayMs = Long.parseLong(args[4]);
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, args[1]);
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
            if (strategy.startsWith(CONSUMER_PROTOCOL)) {
                // KIP-848: the broker assigns (with this assignor) and sets the session and
                // the heartbeat interval (the group's configs)
                p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
                p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG,
                      strategy.substring(CONSUMER_PROTOCOL.length()));
            } else {
                p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
                p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, strategy);
                p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, args[5]);
                p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, args[6]);
            }
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                  ByteArrayDeserializer.class.getName());
            this.consumer = new KafkaConsumer<>(p);
        }

        String snapshot(String state) {
            var md = consumer.groupMetadata();
            return "\"generation\":" + md.generationId() + ",\"member_id\":"
                + quote(md.memberId()) + ",\"state\":" + quote(state) + ",\"protocol\":"
                + quote(strategy.substring(strategy.lastIndexOf('.') + 1))
                + ",\"assignment\":" + pairs(consumer.assignment());
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            emit(name, "revoked", "\"partitions\":" + pairs(partitions) + ","
                 + snapshot("REBALANCING"));
            if (revokeDelayMs > 0 && !partitions.isEmpty()) {
                try {
                    Thread.sleep(revokeDelayMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                emit(name, "released", "\"partitions\":" + pairs(partitions));
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            // called at the end of every round, with the partitions added (maybe none): the
            // member has its generation's assignment (it may still rejoin for a next round)
            emit(name, "assigned", "\"partitions\":" + pairs(partitions) + ","
                 + snapshot("STABLE"));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            emit(name, "lost", "\"partitions\":" + pairs(partitions) + ","
                 + snapshot("UNJOINED"));
        }

        @Override
        public void run() {
            try {
                consumer.subscribe(List.of(topic), this);
                emit(name, "subscribed", "\"topics\":[" + quote(topic) + "],\"strategies\":["
                     + quote(strategy) + "]");
                String last = "";
                while (!STOP.get() && !removed.get()) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(1000));
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        emit(name, "record", "\"topic\":" + quote(r.topic()) + ",\"partition\":"
                             + r.partition() + ",\"offset\":" + r.offset());
                    }
                    if (strategy.startsWith(CONSUMER_PROTOCOL)) {
                        // a KIP-848 member's epoch can move with no callback (nothing to
                        // reconcile): report its epoch and assignment whenever they change
                        String now = snapshot("STABLE");
                        if (!now.equals(last)) {
                            emit(name, "state", now);
                            last = now;
                        }
                    }
                }
            } catch (WakeupException e) {
                // stop requested
            } catch (Exception e) {
                emit(name, "error", "\"message\":" + quote(e.toString()));
            } finally {
                emit(name, "closing", "");
                try {
                    consumer.close(Duration.ofSeconds(10));
                } catch (Exception e) {
                    emit(name, "error", "\"message\":" + quote("close: " + e));
                }
                emit(name, "closed", "");
            }
        }
    }

    public static void main(String[] args) throws Exception {
        List<Member> members = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("stop")) {
                break;
            }
            if (line.startsWith("add ")) {
                String name = line.substring(4).trim();
                emit(name, "started", "");
                Member m = new Member(name, args);
                Thread t = new Thread(m, "member-" + name);
                members.add(m);
                threads.add(t);
                t.start();
            }
            if (line.startsWith("remove ")) {
                String name = line.substring(7).trim();
                for (int i = 0; i < members.size(); i++) {
                    Member m = members.get(i);
                    if (m.name.equals(name) && !m.removed.getAndSet(true)) {
                        m.consumer.wakeup();
                        threads.get(i).join(30_000);
                    }
                }
            }
        }
        STOP.set(true);
        for (Member m : members) {
            m.consumer.wakeup();
        }
        for (Thread t : threads) {
            t.join(30_000);
        }
        System.exit(0);
    }
}
