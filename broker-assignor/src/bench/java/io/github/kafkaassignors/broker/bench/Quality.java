package io.github.kafkaassignors.broker.bench;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/** The quality columns of {@link SideBySide}, measured on an assignment of a scenario's group. */
final class Quality {
    private Quality() {
    }

    static int load(MemberAssignment a) {
        return a.partitions().values().stream().mapToInt(Set::size).sum();
    }

    /** Most loaded member minus least loaded. */
    static int spread(GroupAssignment a) {
        int hi = 0;
        int lo = Integer.MAX_VALUE;
        for (MemberAssignment m : a.members().values()) {
            hi = Math.max(hi, load(m));
            lo = Math.min(lo, load(m));
        }
        return hi - lo;
    }

    /** Sum of squared member loads: what balance minimizes (the spread can hide a worse one). */
    static long squares(GroupAssignment a) {
        long sum = 0;
        for (MemberAssignment m : a.members().values()) {
            sum += (long) load(m) * load(m);
        }
        return sum;
    }

    /** The worst over topics of the most minus the fewest of its partitions a subscriber holds. */
    static int topicSpread(GroupAssignment a, Scenario s) {
        Map<Uuid, int[]> range = new HashMap<>(); // topic -> {least, most}
        s.subscriptions.forEach((m, topics) -> {
            for (Uuid t : topics) {
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
    static int moved(Scenario.Group before, GroupAssignment result) {
        int moved = 0;
        for (Map.Entry<String, MemberAssignment> e : before.owned.entrySet()) {
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

    /** Fails unless every partition of a subscribed topic is assigned once, to a subscriber. */
    static void check(Scenario s, GroupAssignment a) {
        Map<Uuid, Set<Integer>> seen = new HashMap<>();
        int count = 0;
        for (Map.Entry<String, MemberAssignment> e : a.members().entrySet()) {
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().partitions().entrySet()) {
                if (!s.subscriptions.get(e.getKey()).contains(tp.getKey())) {
                    throw new IllegalStateException(s.name + ": " + e.getKey() + " got an unsubscribed topic");
                }
                for (int p : tp.getValue()) {
                    if (!seen.computeIfAbsent(tp.getKey(), k -> new HashSet<>()).add(p)) {
                        throw new IllegalStateException(s.name + ": partition assigned twice");
                    }
                    count++;
                }
            }
        }
        int total = 0;
        Set<Uuid> subscribed = new HashSet<>();
        s.subscriptions.values().forEach(subscribed::addAll);
        for (Uuid t : subscribed) {
            total += s.partitions.get(t);
        }
        if (count != total) {
            throw new IllegalStateException(s.name + ": " + count + " of " + total + " partitions assigned");
        }
    }
}
