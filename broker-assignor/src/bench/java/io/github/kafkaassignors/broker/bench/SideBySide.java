package io.github.kafkaassignors.broker.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import io.github.kafkaassignors.broker.Reference;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

/**
 * balanced-sticky beside Kafka's {@code uniform} in one JVM, one JSON object per row (a
 * {@link Scenario} fresh, and after each of {@link Scenario#EVENTS}, the group owning what the
 * same assignor gave it when fresh): the two assignors called in turn on the same group
 * (interleaved, the order alternating each round), the median time of each, the quality of
 * each result ({@link Quality}), the fewest moves the same balance needs after the event
 * ({@link Reference#exact}: the flow from nothing, not the timed path), which path ran, and
 * the time of {@link ReadFloor} on balanced-sticky's group (reading every owned set's size:
 * what no path that checks the current assignment can go below), timed in the same rounds.
 *
 * <pre>  java -cp ... io.github.kafkaassignors.broker.bench.SideBySide BUDGET_MS [scenario ...]</pre>
 * BUDGET_MS: measured time per row (after a warm-up of a third of it); each row gets at least
 * 7 rounds and at most 1,000.
 */
public final class SideBySide {
    private static final String[] ASSIGNORS = {"balanced-sticky", "uniform"};

    private SideBySide() {
    }

    public static void main(String[] args) {
        long budgetNs = Long.parseLong(args[0]) * 1_000_000L;
        List<String> scenarios = args.length > 1 ? List.of(args).subList(1, args.length) : Scenario.ALL;
        ConsumerGroupPartitionAssignor[] under = new ConsumerGroupPartitionAssignor[ASSIGNORS.length + 1];
        for (int a = 0; a < ASSIGNORS.length; a++) {
            under[a] = Scenario.assignor(ASSIGNORS[a]);
        }
        under[ASSIGNORS.length] = new ReadFloor();
        for (String name : scenarios) {
            Scenario s = Scenario.of(name);
            SubscribedTopicDescriber topics = s.describer();
            Scenario.Group fresh = s.fresh();
            GroupAssignment[] first = new GroupAssignment[ASSIGNORS.length];
            for (int a = 0; a < ASSIGNORS.length; a++) {
                first[a] = under[a].assign(fresh, topics);
            }
            row(name, "fresh", s, new GroupSpec[] {fresh, fresh, fresh}, under, budgetNs);
            for (String event : Scenario.EVENTS) {
                Scenario after = s.after(event);
                GroupSpec[] groups = new GroupSpec[ASSIGNORS.length + 1];
                for (int a = 0; a < ASSIGNORS.length; a++) {
                    groups[a] = after.owning(first[a]);
                }
                groups[ASSIGNORS.length] = groups[0]; // the floor reads balanced-sticky's group
                row(name, event, after, groups, under, budgetNs);
            }
        }
    }

    private static void row(String name, String event, Scenario s, GroupSpec[] groups,
            ConsumerGroupPartitionAssignor[] under, long budgetNs) {
        SubscribedTopicDescriber topics = s.describer();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("scenario", name);
        out.put("event", event);
        out.put("members", s.subscriptions.size());
        out.put("partitions", s.partitions.values().stream().mapToInt(Integer::intValue).sum());
        out.put("path", Reference.path(groups[0], topics));
        long[][][] times = time(groups, under, topics, budgetNs);
        for (int a = 0; a < ASSIGNORS.length; a++) {
            Scenario.Group group = (Scenario.Group) groups[a];
            GroupAssignment result = under[a].assign(group, topics);
            Quality.check(s, result);
            Map<String, Object> q = new LinkedHashMap<>();
            q.put("ms", median(times[0][a]) / 1e6);
            q.put("cpu_ms", median(times[1][a]) / 1e6);
            q.put("rounds", times[0][a].length);
            q.put("spread", Quality.spread(result));
            q.put("topic_spread", Quality.topicSpread(result, s));
            q.put("load_squares", Quality.squares(result));
            int moved = 0;
            int fewest = 0;
            if (!event.equals("fresh")) {
                moved = Quality.moved(group, result);
                GroupAssignment exact = Reference.exact(group, topics);
                Quality.check(s, exact);
                fewest = Quality.moved(group, exact);
            }
            q.put("moved", moved);
            q.put("fewest_moves", fewest);
            out.put(ASSIGNORS[a], q);
        }
        out.put("read_floor_ms", median(times[0][ASSIGNORS.length]) / 1e6);
        System.out.println(json(out));
        System.out.flush();
    }

    /**
     * Per assignor, the wall time and this thread's CPU time of each measured call (ns), the
     * calls interleaved: {wall, cpu}[assignor][round]. The CPU time leaves out the time the
     * thread waited for a core (on a busy machine) and the garbage collector's own threads.
     */
    private static long[][][] time(GroupSpec[] groups, ConsumerGroupPartitionAssignor[] under,
            SubscribedTopicDescriber topics, long budgetNs) {
        System.gc();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        int count = under.length;
        List<long[]> rounds = new ArrayList<>();
        long warmUntil = System.nanoTime() + budgetNs / 3;
        for (int r = 0; r < 3 || System.nanoTime() < warmUntil; r++) {
            for (int a = 0; a < count; a++) {
                sink ^= under[a].assign(groups[a], topics).members().size();
            }
        }
        long start = System.nanoTime();
        for (int r = 0; r < 1000 && (r < 7 || System.nanoTime() - start < budgetNs); r++) {
            long[] round = new long[2 * count];
            for (int i = 0; i < count; i++) {
                int a = (r & 1) == 0 ? i : count - 1 - i;
                long c0 = threads.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                sink ^= under[a].assign(groups[a], topics).members().size();
                round[a] = System.nanoTime() - t0;
                round[count + a] = threads.getCurrentThreadCpuTime() - c0;
            }
            rounds.add(round);
        }
        long[][][] times = new long[2][count][rounds.size()];
        for (int r = 0; r < rounds.size(); r++) {
            for (int a = 0; a < count; a++) {
                times[0][a][r] = rounds.get(r)[a];
                times[1][a][r] = rounds.get(r)[count + a];
            }
        }
        return times;
    }

    /** Keeps the results alive (a call whose result is unused could be optimized away). */
    private static int sink;

    private static double median(long[] values) {
        long[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    }

    private static String json(Object value) {
        if (value instanceof Map<?, ?> map) {
            StringBuilder b = new StringBuilder("{");
            for (Map.Entry<?, ?> e : map.entrySet()) {
                b.append(b.length() > 1 ? ", " : "").append(json(e.getKey())).append(": ")
                        .append(json(e.getValue()));
            }
            return b.append('}').toString();
        }
        if (value instanceof String text) {
            return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        }
        return String.valueOf(value);
    }
}
