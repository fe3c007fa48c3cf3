package io.github.kafkaassignors.broker.bench;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import io.github.kafkaassignors.broker.Reference;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/**
 * The quality of the assignments {@link AssignorBench} times, one JSON object per line:
 * total spread (most loaded member minus least loaded), worst per-topic spread (over a topic's
 * subscribers), and after the leave the partitions that changed owner among the members that
 * stayed, beside the fewest that the same balance needs ({@link Reference}: the exact flow). Fails if an assignment is not complete and disjoint.
 *
 * <pre>  java -cp ... io.github.kafkaassignors.broker.bench.QualityReport [scenario ...]</pre>
 */
public final class QualityReport {
    private QualityReport() {
    }

    public static void main(String[] args) {
        List<String> scenarios = args.length > 0 ? List.of(args) : Scenario.ALL;
        for (String name : scenarios) {
            Scenario s = Scenario.of(name);
            for (String assignor : List.of("balanced-sticky", "uniform")) {
                ConsumerGroupPartitionAssignor under = Scenario.assignor(assignor);
                Scenario.Group fresh = s.fresh();
                GroupAssignment first = under.assign(fresh, s.describer());
                Scenario.Group after = s.afterLeave(first);
                GroupAssignment second = under.assign(after, s.describer());
                check(s, first);
                check(s, second);
                // the fewest moves the same balance needs, from the exact flow on the same group
                GroupAssignment exact = Reference.exact(after, s.describer());
                check(s, exact);
                System.out.printf("{\"scenario\": \"%s\", \"assignor\": \"%s\", \"members\": %d,"
                        + " \"partitions\": %d, \"fresh_spread\": %d, \"fresh_topic_spread\": %d,"
                        + " \"fresh_load_squares\": %d, \"leave_load_squares\": %d,"
                        + " \"leave_spread\": %d, \"leave_topic_spread\": %d, \"leave_moved\": %d,"
                        + " \"leave_fewest_moves\": %d}%n",
                        name, assignor, fresh.subs.size(), total(s), spread(first),
                        topicSpread(first, fresh), squares(first), squares(second), spread(second), topicSpread(second, after),
                        moved(after, second), moved(after, exact));
            }
        }
    }

    private static int total(Scenario s) {
        return s.partitions.values().stream().mapToInt(Integer::intValue).sum();
    }

    private static int load(MemberAssignment a) {
        return a.partitions().values().stream().mapToInt(Set::size).sum();
    }

    private static int spread(GroupAssignment a) {
        int hi = 0;
        int lo = Integer.MAX_VALUE;
        for (MemberAssignment m : a.members().values()) {
            hi = Math.max(hi, load(m));
            lo = Math.min(lo, load(m));
        }
        return hi - lo;
    }

    /** Sum of squared member loads: what balance minimizes (the spread can hide a worse one). */
    private static long squares(GroupAssignment a) {
        long sum = 0;
        for (MemberAssignment m : a.members().values()) {
            sum += (long) load(m) * load(m);
        }
        return sum;
    }

    private static int topicSpread(GroupAssignment a, Scenario.Group group) {
        Map<Uuid, int[]> range = new HashMap<>(); // topic -> {least, most}
        group.subs.forEach((m, sub) -> {
            for (Uuid t : sub.subscribedTopicIds()) {
                Set<Integer> ps = a.members().get(m).partitions().get(t);
                int n = ps == null ? 0 : ps.size();
                int[] r = range.computeIfAbsent(t, k -> new int[] {Integer.MAX_VALUE, 0});
                r[0] = Math.min(r[0], n);
                r[1] = Math.max(r[1], n);
            }
        });
        return range.values().stream().mapToInt(r -> r[1] - r[0]).max().orElse(0);
    }

    /** Partitions the members owned before that now belong to someone else. */
    private static int moved(Scenario.Group after, GroupAssignment result) {
        int moved = 0;
        for (Map.Entry<String, MemberAssignment> e : after.owned.entrySet()) {
            Map<Uuid, Set<Integer>> now = result.members().get(e.getKey()).partitions();
            for (Map.Entry<Uuid, Set<Integer>> owned : e.getValue().partitions().entrySet()) {
                Set<Integer> kept = now.getOrDefault(owned.getKey(), Set.of());
                for (int p : owned.getValue()) {
                    moved += kept.contains(p) ? 0 : 1;
                }
            }
        }
        return moved;
    }

    /** Every partition of a subscribed topic once, only to subscribers. */
    private static void check(Scenario s, GroupAssignment a) {
        Map<Uuid, Set<Integer>> seen = new HashMap<>();
        int count = 0;
        for (Map.Entry<String, MemberAssignment> e : a.members().entrySet()) {
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().partitions().entrySet()) {
                if (!s.subscriptions.get(e.getKey()).contains(tp.getKey())) {
                    throw new IllegalStateException(e.getKey() + " got an unsubscribed topic");
                }
                for (int p : tp.getValue()) {
                    if (!seen.computeIfAbsent(tp.getKey(), k -> new HashSet<>()).add(p)) {
                        throw new IllegalStateException("partition assigned twice");
                    }
                    count++;
                }
            }
        }
        if (count != total(s)) {
            throw new IllegalStateException(count + " of " + total(s) + " partitions assigned");
        }
    }
}
