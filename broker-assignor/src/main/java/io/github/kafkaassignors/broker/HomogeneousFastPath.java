package io.github.kafkaassignors.broker;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/**
 * Identical subscriptions without racks: a new group is dealt directly here (the assignment
 * the general path gives, each member's share of a topic a run of consecutive partitions); a
 * stable group goes to {@link HomogeneousRebalance} (a member leaves or joins, partitions are
 * added). Either has the guarantees of {@link HomogeneousAssignmentBuilder} (the same shape,
 * every extra kept: the fewest moves) and is deterministic; null whenever an assumption
 * fails, and the general path decides.
 */
final class HomogeneousFastPath {
    private HomogeneousFastPath() {
    }

    /** @param members in canonical order; every member subscribes to every topic of {@code s} */
    static GroupAssignment assign(GroupSpec spec, String[] members, Subscriptions s,
            Path.Sink path) {
        MemberAssignment[] current = new MemberAssignment[members.length];
        boolean anyRack = false;
        for (int m = 0; m < members.length; m++) {
            anyRack |= spec.memberSubscription(members[m]).rackId().isPresent();
            current[m] = spec.memberAssignment(members[m]);
        }
        return assign(spec, members, anyRack, current, s, new HashMap<>(members.length * 2),
                false, path);
    }

    /**
     * @param anyRack whether any member has a rack (then the general path decides)
     * @param current each member's current assignment (null: none), in the same order
     * @param out the result, written into
     * @param prefilled whether {@code out} holds each member's current assignment already
     *     (those that are not empty)
     */
    static GroupAssignment assign(GroupSpec spec, String[] members, boolean anyRack,
            MemberAssignment[] current, Subscriptions s, Map<String, MemberAssignment> out,
            boolean prefilled, Path.Sink path) {
        int count = s.counts.length;
        if (count == 0 || s.subs[0].length != count || anyRack) {
            return null;
        }
        // prefilled and still empty: every current assignment is empty (a new group)
        boolean owned = false;
        boolean known = prefilled && out.isEmpty();
        for (int m = 0; m < members.length && !owned && !known; m++) {
            if (current[m] != null) {
                for (Set<Integer> ps : current[m].partitions().values()) {
                    if (!ps.isEmpty()) {
                        owned = true;
                        break;
                    }
                }
            }
        }
        if (!owned) {
            Path.note(path, Path.IDENTICAL_FRESH);
            return fresh(members, s, current, out);
        }
        GroupAssignment result = new HomogeneousRebalance(spec, members, s, current, out, prefilled)
                .run();
        if (result != null) {
            Path.note(path, Path.IDENTICAL_STABLE);
        }
        return result;
    }

    /**
     * Nobody owns anything: what {@link HomogeneousAssignmentBuilder} and {@link Dealer} give,
     * computed directly. Topic t's n_t mod M extras go to the members of a window (mod M) that
     * starts where the previous topic's ended; its partitions are dealt in canonical order, so
     * a member holds a run of consecutive partitions.
     */
    private static GroupAssignment fresh(String[] members, Subscriptions s,
            MemberAssignment[] current, Map<String, MemberAssignment> out) {
        int size = members.length;
        int topics = s.counts.length;
        int[] base = new int[topics];
        int[] extra = new int[topics];
        int[] from = new int[topics];
        int next = 0;
        int everybody = 0; // topics every member gets some of
        int[] perMember = new int[size];
        for (int t = 0; t < topics; t++) {
            base[t] = s.counts[t] / size;
            extra[t] = s.counts[t] % size;
            from[t] = next;
            next = (int) ((next + (long) extra[t]) % size);
            if (base[t] > 0) {
                everybody++;
            } else {
                for (int i = 0; i < extra[t]; i++) {
                    perMember[(from[t] + i) % size]++;
                }
            }
        }
        // member -> topics with base 0 where it gets an extra (in topic order)
        int[][] extraTopics = new int[size][];
        for (int m = 0; m < size; m++) {
            extraTopics[m] = new int[perMember[m]];
            perMember[m] = 0;
        }
        for (int t = 0; t < topics; t++) {
            if (base[t] == 0) {
                for (int i = 0; i < extra[t]; i++) {
                    int m = (from[t] + i) % size;
                    extraTopics[m][perMember[m]++] = t;
                }
            }
        }
        for (int m = 0; m < size; m++) {
            Map<Uuid, Set<Integer>> partitions = new HashMap<>(
                    (int) ((everybody + extraTopics[m].length) / 0.75f) + 1);
            if (everybody > 0) {
                for (int t = 0; t < topics; t++) {
                    if (base[t] > 0) {
                        partitions.put(s.topicIds.get(t), run(m, base[t], extra[t], from[t], size));
                    }
                }
            }
            for (int t : extraTopics[m]) {
                partitions.put(s.topicIds.get(t), run(m, 0, extra[t], from[t], size));
            }
            out.put(members[m], partitions.isEmpty() && current[m] != null ? current[m]
                    : new Assignment(Collections.unmodifiableMap(partitions)));
        }
        return new GroupAssignment(out);
    }

    /** Member m's partitions of a topic dealt base each plus one to the window [from, from+extra). */
    private static PartitionSet run(int m, int base, int extra, int from, int size) {
        int end = from + extra; // exclusive, may pass size (the window wraps)
        int before = Math.max(0, Math.min(m, end) - from) + Math.max(0, Math.min(m, end - size));
        boolean inWindow = (m >= from && m < end) || m < end - size;
        int[] ps = new int[base + (inWindow ? 1 : 0)];
        int first = m * base + before;
        for (int i = 0; i < ps.length; i++) {
            ps[i] = first + i;
        }
        return new PartitionSet(ps);
    }
}
