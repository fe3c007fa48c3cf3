package io.github.kafkaassignors.broker;

import java.util.Arrays;

/**
 * The start of {@link WarmShares}, the path most rebalances end on: each member keeps what
 * it owns and the rest is dealt greedily ({@link #start}: each unit to the subscriber whose
 * load, then share of the topic, grows least, or, when members own partitions, whose load,
 * counting what its topics still to come will bring, plus three quarters of its share is
 * least; members with fewer topics still to come first); {@link Levelling} then applies
 * cheap improving moves. When that meets the lower
 * bounds ({@link Shares#meetsLowerBounds}) it is optimal without a search; otherwise
 * {@link CycleCancelling} takes it from there. Changes the {@link Shares} in place.
 */
final class WarmStart {
    private final Shares shares;
    // the Shares' fields under their own names: the same arrays, so every pass sees each
    // other's changes
    private final Problem problem;
    private final int members;
    private final int topics;
    private final int[][] subs;
    private final int[][] x;
    private final int[] load;
    private final int[][] topicMembers;
    private final int[][] topicSlots;
    /**
     * Per member, {@link #SCALE} times the units its topics still to deal will bring at their
     * subscribers' average: a member about to get much from a later topic waits now, so the
     * loads come out even without many moves after. In sixteenths, so the order does not
     * depend on rounding of floating point.
     */
    private final long[] future;
    static final int SCALE = 16;
    /** What one unit of a share weighs against {@link #SCALE} of load: a member with a little
     *  more load but less of the topic may go first, so the topics come out even too (fewer
     *  swaps for {@link Levelling} and cycles for {@link CycleCancelling}). */
    static final int SHARE_WEIGHT = 12;
    /**
     * Whether members own partitions (a rebalance, not a new group). A new group keeps the
     * plain (load, share) order: the cycles break ties between optima from where it starts,
     * and what a new group gets is what its later rebalances move from, so a different start
     * would change which optimum it gets (and the moves after) for little time.
     */
    private boolean owning;

    WarmStart(Shares shares) {
        this.shares = shares;
        this.problem = shares.problem;
        this.members = shares.members;
        this.topics = shares.topics;
        this.subs = shares.subs;
        this.x = shares.x;
        this.load = shares.load;
        this.topicMembers = shares.topicMembers;
        this.topicSlots = shares.topicSlots;
        this.future = new long[members];
    }

    void start() {
        int[] left = shares.unowned.clone(); // the Shares start at what members own
        for (int t = 0; t < topics; t++) {
            owning |= topicMembers[t].length > 0 && left[t] < problem.counts[t];
        }
        int[] remaining = new int[members]; // topics still to deal a member may get units of
        Integer[] order = new Integer[topics];
        for (int t = 0; t < topics; t++) {
            order[t] = t;
            if (left[t] > 0) {
                long each = (long) left[t] * SCALE / Math.max(1, topicMembers[t].length);
                for (int m : topicMembers[t]) {
                    remaining[m]++;
                    future[m] += each;
                }
            }
        }
        // the topics with the most partitions to deal per subscriber first: their subscribers
        // carry the heaviest loads, the others fill in around them
        Arrays.sort(order, (a, b) -> {
            long l = (long) left[a] * Math.max(1, topicMembers[b].length);
            long r = (long) left[b] * Math.max(1, topicMembers[a].length);
            if (l != r) {
                return Long.compare(r, l);
            }
            return topicMembers[a].length != topicMembers[b].length
                    ? Integer.compare(topicMembers[a].length, topicMembers[b].length)
                    : Integer.compare(a, b);
        });
        int[] heap = new int[members];
        long[] keys = new long[members];
        for (int t : order) {
            if (left[t] <= 0 || topicMembers[t].length == 0) {
                continue;
            }
            if (dealPacked(t, left[t], remaining, keys)) {
                dealt(t, left[t], remaining);
                continue;
            }
            int size = topicMembers[t].length;
            for (int i = 0; i < size; i++) {
                heap[i] = i; // positions in topicMembers[t]
            }
            for (int i = size / 2 - 1; i >= 0; i--) {
                siftDown(heap, size, i, t, remaining);
            }
            for (int u = left[t]; u > 0; u--) {
                int i = heap[0];
                int m = topicMembers[t][i];
                x[m][topicSlots[t][i]]++;
                load[m]++;
                siftDown(heap, size, 0, t, remaining);
            }
            dealt(t, left[t], remaining);
        }
    }

    /** Topic t is no longer to come for its subscribers. */
    private void dealt(int t, int units, int[] remaining) {
        long each = (long) units * SCALE / topicMembers[t].length;
        for (int m : topicMembers[t]) {
            remaining[m]--;
            future[m] -= each;
        }
    }

    /** What {@link #before} compares first, lower first (packed: a new group's share below 2^12). */
    private long priority(int m, int share) {
        return owning ? (long) load[m] * SCALE + future[m] + (long) share * SHARE_WEIGHT
                : (long) load[m] << 12 | share;
    }

    /**
     * Deals {@code units} of topic t as {@link #before} orders its subscribers, with the order
     * packed into one long per subscriber ({@link #priority}, topics to come, position: the
     * position in the topic's list follows canonical order); false if the numbers do not fit.
     */
    private boolean dealPacked(int t, int units, int[] remaining, long[] keys) {
        int size = topicMembers[t].length;
        if (size >= 1 << 20) {
            return false;
        }
        final long step = owning ? SCALE + SHARE_WEIGHT : 1 << 12 | 1;
        for (int i = 0; i < size; i++) {
            int m = topicMembers[t][i];
            int v = x[m][topicSlots[t][i]];
            long p = priority(m, v);
            if (p + units * step >= 1L << 27 || remaining[m] >= 1 << 16
                    || !owning && v + units >= 1 << 12) {
                return false;
            }
            keys[i] = p << 36 | (long) remaining[m] << 20 | i;
        }
        for (int i = size / 2 - 1; i >= 0; i--) {
            siftDownPacked(keys, size, i);
        }
        final long unit = step << 36;
        for (int u = 0; u < units; u++) {
            int i = (int) (keys[0] & 0xfffff);
            int m = topicMembers[t][i];
            x[m][topicSlots[t][i]]++;
            load[m]++;
            keys[0] += unit;
            siftDownPacked(keys, size, 0);
        }
        return true;
    }

    static void siftDownPacked(long[] heap, int size, int i) {
        long v = heap[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) {
                break;
            }
            if (c + 1 < size && heap[c + 1] < heap[c]) {
                c++;
            }
            if (heap[c] >= v) {
                break;
            }
            heap[i] = heap[c];
            i = c;
        }
        heap[i] = v;
    }

    /** Whether position i of topic t's subscribers should get the next unit before j. */
    private boolean before(int t, int i, int j, int[] remaining) {
        int a = topicMembers[t][i];
        int b = topicMembers[t][j];
        int xa = x[a][topicSlots[t][i]];
        int xb = x[b][topicSlots[t][j]];
        if (!owning && load[a] != load[b]) {
            return load[a] < load[b];
        }
        long pa = owning ? priority(a, xa) : xa;
        long pb = owning ? priority(b, xb) : xb;
        if (pa != pb) {
            return pa < pb;
        }
        if (remaining[a] != remaining[b]) {
            return remaining[a] < remaining[b];
        }
        return a < b;
    }

    private void siftDown(int[] heap, int size, int i, int t, int[] remaining) {
        int v = heap[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) {
                break;
            }
            if (c + 1 < size && before(t, heap[c + 1], heap[c], remaining)) {
                c++;
            }
            if (!before(t, heap[c], v, remaining)) {
                break;
            }
            heap[i] = heap[c];
            i = c;
        }
        heap[i] = v;
    }
}
