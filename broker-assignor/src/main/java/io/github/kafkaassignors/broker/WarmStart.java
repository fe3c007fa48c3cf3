package io.github.kafkaassignors.broker;

import java.util.Arrays;

/**
 * The start of {@link WarmShares}, the path most rebalances end on: each member keeps what
 * it owns and the rest is dealt greedily ({@link #start}: each unit to the subscriber whose
 * load, then share of the topic, grows least; members with fewer topics still to come
 * first), then levelled with cheap improving moves ({@link #level}). When that meets the
 * lower bounds ({@link Shares#meetsLowerBounds}) it is optimal without a search; otherwise
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
    private final int[][] own;
    private final int[][] x;
    private final int[] load;
    private final int[][] topicMembers;
    private final int[][] topicSlots;

    WarmStart(Shares shares) {
        this.shares = shares;
        this.problem = shares.problem;
        this.members = shares.members;
        this.topics = shares.topics;
        this.subs = shares.subs;
        this.own = shares.own;
        this.x = shares.x;
        this.load = shares.load;
        this.topicMembers = shares.topicMembers;
        this.topicSlots = shares.topicSlots;
    }

    void start() {
        int[] left = problem.counts.clone();
        int[] remaining = new int[members]; // topics still to deal a member may get units of
        for (int m = 0; m < members; m++) {
            for (int k = 0; k < subs[m].length; k++) {
                x[m][k] = own[m][k];
                load[m] += own[m][k];
                left[subs[m][k]] -= own[m][k];
            }
        }
        Integer[] order = new Integer[topics];
        for (int t = 0; t < topics; t++) {
            order[t] = t;
            if (left[t] > 0) {
                for (int m : topicMembers[t]) {
                    remaining[m]++;
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
                for (int m : topicMembers[t]) {
                    remaining[m]--;
                }
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
            for (int m : topicMembers[t]) {
                remaining[m]--;
            }
        }
    }

    /**
     * Deals {@code units} of topic t as {@link #before} orders its subscribers, with the order
     * packed into one long per subscriber (load, share, topics to come, position: the position
     * in the topic's list follows canonical order); false if the numbers do not fit.
     */
    private boolean dealPacked(int t, int units, int[] remaining, long[] keys) {
        int size = topicMembers[t].length;
        if (size >= 1 << 20) {
            return false;
        }
        for (int i = 0; i < size; i++) {
            int m = topicMembers[t][i];
            long l = load[m] + (long) units;
            long v = x[m][topicSlots[t][i]] + (long) units;
            if (l >= 1 << 19 || v >= 1 << 12 || remaining[m] >= 1 << 12) {
                return false;
            }
            keys[i] = (long) load[m] << 44 | (long) x[m][topicSlots[t][i]] << 32
                    | (long) remaining[m] << 20 | i;
        }
        for (int i = size / 2 - 1; i >= 0; i--) {
            siftDownPacked(keys, size, i);
        }
        final long unit = 1L << 44 | 1L << 32;
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

    private static void siftDownPacked(long[] heap, int size, int i) {
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

    /**
     * Cheap improving moves before the search, the shortest of the cycles it would otherwise
     * find one by one: within a topic, a partition from a holder to a subscriber with a load
     * two or more below (the sum of squared loads drops), or one below when the shares differ
     * by two or more (loads swap, the topic evens out); and between two topics, a member
     * giving up one of t for one of u and another the reverse (loads stay, both topics even
     * out). Each move improves the objectives, so the search certifies whatever this leaves.
     */
    void level() {
        // first only the moves that also even out the topic, so the rest need not undo them
        // a pass that moved and left the loads and shares at their bounds is the last: no
        // move of either kind is left then (each needs a difference of two), so the check
        // saves the pass that would find nothing
        for (int pass = 0; pass < 64; pass++) {
            boolean moved = false;
            for (int t = 0; t < topics; t++) {
                moved |= levelTopic(t, true);
            }
            if (!moved) {
                break;
            }
            if (shares.meetsBalanceBounds()) {
                return;
            }
        }
        for (int pass = 0; pass < 64; pass++) {
            boolean moved = false;
            for (int t = 0; t < topics; t++) {
                moved |= levelTopic(t, false);
            }
            int[] pairs = maySwap() ? shares.pairs() : null;
            if (pairs != null) {
                moved |= swapPairs(pairs);
            }
            if (!moved || shares.meetsBalanceBounds()) {
                return;
            }
        }
    }

    /** @param strict only moves to a subscriber holding fewer of the topic (loads first) */
    private boolean levelTopic(int t, boolean strict) {
        int[] ms = topicMembers[t];
        int[] ks = topicSlots[t];
        if (ms.length < 2) {
            return false;
        }
        boolean moved = false;
        while (true) {
            int lo = -1;
            int hi = -1;
            for (int i = 0; i < ms.length; i++) {
                int m = ms[i];
                int v = x[m][ks[i]];
                if (lo < 0 || load[m] < load[ms[lo]]
                        || load[m] == load[ms[lo]] && v < x[ms[lo]][ks[lo]]) {
                    lo = i;
                }
                if (v > 0 && (hi < 0 || load[m] > load[ms[hi]]
                        || load[m] == load[ms[hi]] && v > x[ms[hi]][ks[hi]])) {
                    hi = i;
                }
            }
            if (hi < 0 || load[ms[hi]] - load[ms[lo]] < 2
                    || strict && x[ms[hi]][ks[hi]] <= x[ms[lo]][ks[lo]]) {
                break;
            }
            shares.move(ms[hi], ks[hi], ms[lo], ks[lo]);
            moved = true;
        }
        if (strict) {
            return moved;
        }
        // every holder is now within one of the least loaded subscriber (load q): one at
        // q + 1 hands a partition to one at q when their shares differ by two or more
        while (true) {
            int q = Integer.MAX_VALUE;
            for (int m : ms) {
                q = Math.min(q, load[m]);
            }
            int from = -1;
            int to = -1;
            for (int i = 0; i < ms.length; i++) {
                int m = ms[i];
                int v = x[m][ks[i]];
                if (load[m] == q + 1 && v >= 2 && (from < 0 || v > x[ms[from]][ks[from]])) {
                    from = i;
                } else if (load[m] == q && (to < 0 || v < x[ms[to]][ks[to]])) {
                    to = i;
                }
            }
            if (from < 0 || to < 0 || x[ms[from]][ks[from]] - x[ms[to]][ks[to]] < 2) {
                return moved;
            }
            shares.move(ms[from], ks[from], ms[to], ks[to]);
            moved = true;
        }
    }


    /**
     * Whether {@link #swapPairs} may find a swap: one needs members whose differences
     * x_t - x_u are three or more apart, so within topics t and u whose spreads (most minus
     * fewest over all their subscribers) add up to three or more.
     */
    private boolean maySwap() {
        int first = 0;
        int second = 0;
        for (int t = 0; t < topics; t++) {
            int[] ms = topicMembers[t];
            int[] ks = topicSlots[t];
            int lo = Integer.MAX_VALUE;
            int hi = 0;
            for (int i = 0; i < ms.length; i++) {
                int v = x[ms[i]][ks[i]];
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
            int spread = ms.length < 2 ? 0 : hi - lo;
            if (spread > first) {
                second = first;
                first = spread;
            } else if (spread > second) {
                second = spread;
            }
        }
        return first + second >= 3;
    }

    /**
     * Between two topics t and u: the member with the most of t against u gives up one of t
     * for one of u, the one with the most of u against t the reverse, while that lowers the
     * sum of squared shares (their differences x_t - x_u are three or more apart).
     */
    private boolean swapPairs(int[] pairs) {
        int tt = topics * topics;
        boolean moved = false;
        for (int p = 0; p < tt; p++) {
            int lo = tt + 1 + 3 * pairs[p];
            int hi = tt + 1 + 3 * pairs[p + 1];
            if (hi - lo < 6) {
                continue;
            }
            while (true) {
                int a = -1; // gives up t: most x_t - x_u, holds some t
                int b = -1; // gives up u: least x_t - x_u, holds some u
                int da = 0;
                int db = 0;
                for (int e = lo; e < hi; e += 3) {
                    int[] xm = x[pairs[e]];
                    int xt = xm[pairs[e + 1]];
                    int xu = xm[pairs[e + 2]];
                    int d = xt - xu;
                    if (xt > 0 && (a < 0 || d > da)) {
                        a = e;
                        da = d;
                    }
                    if (xu > 0 && (b < 0 || d < db)) {
                        b = e;
                        db = d;
                    }
                }
                if (a < 0 || b < 0 || da - db < 3) {
                    break;
                }
                int[] xa = x[pairs[a]];
                xa[pairs[a + 1]]--;
                xa[pairs[a + 2]]++;
                int[] xb = x[pairs[b]];
                xb[pairs[b + 2]]--;
                xb[pairs[b + 1]]++;
                moved = true;
            }
        }
        return moved;
    }

    /** Whether position i of topic t's subscribers should get the next unit before j. */
    private boolean before(int t, int i, int j, int[] remaining) {
        int a = topicMembers[t][i];
        int b = topicMembers[t][j];
        if (load[a] != load[b]) {
            return load[a] < load[b];
        }
        int xa = x[a][topicSlots[t][i]];
        int xb = x[b][topicSlots[t][j]];
        if (xa != xb) {
            return xa < xb;
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
