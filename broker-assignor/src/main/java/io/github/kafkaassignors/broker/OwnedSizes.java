package io.github.kafkaassignors.broker;

import java.util.Arrays;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/**
 * The members' current assignments read by size (the general path's shortcut): a solve needs
 * only how many partitions of each topic a member owns; {@link Dealer} reads the partitions
 * of the few members whose counts change. Sound only when the claims are disjoint and in
 * range, checked per topic by counting: the partitions the broker's index
 * ({@link GroupSpec#isPartitionAssigned}) calls free must be exactly as many as the sizes
 * leave (two members claiming one partition, or a claim out of range, leave more). Otherwise
 * {@link #read} returns null and the claims are read and resolved in full, as before.
 */
final class OwnedSizes implements BiConsumer<Uuid, Set<Integer>> {
    private final Subscriptions s;
    private final int[][] sizes;
    private final int[] claimed;
    private final long[] onTopic; // claims on each topic, by any member (subscriber or not)
    private final boolean[] outside;
    private int member;

    private OwnedSizes(Subscriptions s, int members, int[] claimed) {
        this.s = s;
        this.sizes = new int[members][s.counts.length];
        this.claimed = claimed;
        this.onTopic = new long[s.counts.length];
        this.outside = new boolean[members];
    }

    /**
     * The problem read by size, or null when the claims may overlap or fall out of range;
     * claimed[m] gets the size of member m's whole current assignment, current[m]; the
     * members are read in the order {@code visit} gives (null: theirs; the result is the same).
     */
    static Problem read(GroupSpec spec, Subscriptions s, MemberAssignment[] current,
            int[] claimed, int[] visit) {
        OwnedSizes r = new OwnedSizes(s, current.length, claimed);
        boolean anyOutside = false;
        for (int i = 0; i < current.length; i++) {
            int m = visit == null ? i : visit[i];
            if (current[m] != null) {
                r.member = m;
                current[m].partitions().forEach(r); // no iterator: a third faster
                anyOutside |= r.outside[m];
            }
        }
        boolean[][] held = new boolean[s.counts.length][];
        for (int t = 0; t < held.length; t++) {
            int n = s.counts[t];
            held[t] = new boolean[n];
            if (r.onTopic[t] == 0) {
                continue;
            }
            if (r.onTopic[t] > n) {
                return null;
            }
            Uuid id = s.topicIds.get(t);
            int free = 0;
            for (int p = 0; p < n; p++) {
                if (spec.isPartitionAssigned(id, p)) {
                    held[t][p] = true;
                } else {
                    free++;
                }
            }
            if (free != n - r.onTopic[t]) {
                return null;
            }
        }
        if (anyOutside) {
            r.release(current, held);
        }
        return Problem.bySize(s.counts, s.subs, r.sizes, held, r.outside,
                (m, t) -> sorted(current[m].partitions().get(s.topicIds.get(t))));
    }

    @Override
    public void accept(Uuid topicId, Set<Integer> set) {
        int n = set.size();
        if (n == 0) {
            return;
        }
        claimed[member] += n;
        int t = s.topicIndex.get(topicId);
        if (t < 0) {
            outside[member] = true;
            return;
        }
        onTopic[t] += n;
        if (s.subscribes(member, t)) {
            sizes[member][t] = n;
        } else {
            outside[member] = true;
        }
    }

    /** Claims on our topics by members not subscribed to them are free, as when resolved. */
    private void release(MemberAssignment[] current, boolean[][] held) {
        for (int m = 0; m < current.length; m++) {
            if (!outside[m]) {
                continue;
            }
            int mine = m;
            current[m].partitions().forEach((id, set) -> {
                int t = s.topicIndex.get(id);
                if (t >= 0 && !s.subscribes(mine, t)) {
                    boolean[] free = held[t];
                    set.forEach((Consumer<Integer>) p -> free[p] = false);
                }
            });
        }
    }

    private static int[] sorted(Set<Integer> set) {
        int[] ps = new int[set.size()];
        int i = 0;
        for (int p : set) {
            ps[i++] = p;
        }
        Arrays.sort(ps);
        return ps;
    }
}
