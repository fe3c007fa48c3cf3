package io.github.kafkaassignors.broker;

import java.util.Arrays;

/**
 * The second pass of {@link WarmShares}, after {@link WarmStart}: cheap improving moves before
 * the search, the shortest of the cycles it would otherwise find one by one. Within a topic, a
 * partition from a holder to a subscriber with a load two or more below (the sum of squared
 * loads drops), or one below when the shares differ by two or more (loads swap, the topic
 * evens out); between two topics, a member giving up one of t for one of u and another the
 * reverse (loads stay, both topics even out). Each move improves the objectives, so the search
 * certifies whatever this leaves. Changes the {@link Shares} in place.
 *
 * <p>Passes look at every topic again and again, and most find nothing to move (after a
 * rebalance of a stable group, nothing at all): one scan of a topic ({@link #scan}) tells
 * whether either kind of move within it exists, and holds until a move changes one of its
 * subscribers' loads or counts, so a pass only scans the topics a move touched.
 */
final class Levelling {
    private final Shares shares;
    // the Shares' fields under their own names: the same arrays, so every pass sees each
    // other's changes
    private final int topics;
    private final int[][] subs;
    private final int[][] x;
    private final int[] load;
    private final int[][] topicMembers;
    private final int[][] topicSlots;
    /** Per topic, what its last {@link #scan} found; valid while {@link #clean}. */
    private final boolean[] clean;
    private final boolean[] stuckStrict;
    private final boolean[] stuckLoose;
    /** The fewest and the most of the topic a subscriber holds (both 0 with fewer than two). */
    private final int[] fewest;
    private final int[] most;

    Levelling(Shares shares) {
        this.shares = shares;
        this.topics = shares.topics;
        this.subs = shares.subs;
        this.x = shares.x;
        this.load = shares.load;
        this.topicMembers = shares.topicMembers;
        this.topicSlots = shares.topicSlots;
        clean = new boolean[topics];
        stuckStrict = new boolean[topics];
        stuckLoose = new boolean[topics];
        fewest = new int[topics];
        most = new int[topics];
    }

    /** Applies the moves until none is left (or the loads and shares meet their bounds). */
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
            // once the lists are made, scanning them is as cheap as looking for a swap first
            int[] pairs = maySwap() && (shares.pairsMade() || shares.pairsFit() && anySwap())
                    ? shares.pairs() : null;
            if (pairs != null) {
                moved |= swapPairs(pairs, fewest.clone(), most.clone());
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
        if (!clean[t]) {
            scan(t);
        }
        if (strict ? stuckStrict[t] : stuckLoose[t]) {
            return false;
        }
        boolean moved = false;
        while (true) {
            // lo: the first with the least (load, share); hi: the first holder with the most
            int lo = -1;
            int hi = -1;
            long loKey = Long.MAX_VALUE;
            long hiKey = -1;
            for (int i = 0; i < ms.length; i++) {
                int m = ms[i];
                int v = x[m][ks[i]];
                long key = (long) load[m] << 32 | v;
                if (key < loKey) {
                    lo = i;
                    loKey = key;
                }
                if (v > 0 && key > hiKey) {
                    hi = i;
                    hiKey = key;
                }
            }
            if (hi < 0 || (hiKey >>> 32) - (loKey >>> 32) < 2
                    || strict && (int) hiKey <= (int) loKey) {
                break;
            }
            move(ms[hi], ks[hi], ms[lo], ks[lo]);
            moved = true;
        }
        if (strict) {
            return moved;
        }
        return evenOut(t) || moved;
    }

    /**
     * One look at topic t, as {@link #levelTopic} and {@link #evenOut} would start: whether
     * the first would move something (strict and not), whether the second would, and the
     * topic's fewest and most. The least loaded subscriber's load q is kept as met, with the
     * fewest any subscriber at q holds and the most (two or more) one at q holds or one at
     * q + 1 does (a lower load met makes q the new level, q + 1 the old one).
     */
    private void scan(int t) {
        int[] ms = topicMembers[t];
        int[] ks = topicSlots[t];
        long loKey = Long.MAX_VALUE; // (load, share) of the least, as levelTopic picks
        long hiKey = -1; // of the holder with the most
        int q = Integer.MAX_VALUE;
        int takerFewest = Integer.MAX_VALUE; // at q
        int atQ = -1; // the most (two or more) at q, -1: none
        int giverMost = -1; // the most (two or more) at q + 1
        int least = Integer.MAX_VALUE;
        int largest = 0;
        for (int i = 0; i < ms.length; i++) {
            int m = ms[i];
            int v = x[m][ks[i]];
            int l = load[m];
            long key = (long) l << 32 | v;
            loKey = Math.min(loKey, key);
            if (v > 0) {
                hiKey = Math.max(hiKey, key);
            }
            if (l < q) {
                giverMost = l == q - 1 ? atQ : -1;
                q = l;
                takerFewest = v;
                atQ = v >= 2 ? v : -1;
            } else if (l == q) {
                takerFewest = Math.min(takerFewest, v);
                if (v >= 2) {
                    atQ = Math.max(atQ, v);
                }
            } else if (l == q + 1 && v >= 2) {
                giverMost = Math.max(giverMost, v);
            }
            least = Math.min(least, v);
            largest = Math.max(largest, v);
        }
        boolean noLoadMove = hiKey < 0 || (hiKey >>> 32) - (loKey >>> 32) < 2;
        stuckStrict[t] = noLoadMove || (int) hiKey <= (int) loKey;
        stuckLoose[t] = noLoadMove && (giverMost < 0 || giverMost - takerFewest < 2);
        fewest[t] = ms.length < 2 ? 0 : least;
        most[t] = ms.length < 2 ? 0 : largest;
        clean[t] = true;
    }

    /** One partition of a topic from one member to another: their topics are to be scanned again. */
    private void move(int from, int fromSlot, int to, int toSlot) {
        shares.move(from, fromSlot, to, toSlot);
        for (int w : subs[from]) {
            clean[w] = false;
        }
        for (int w : subs[to]) {
            clean[w] = false;
        }
    }

    /**
     * Every holder of topic t is within one of its least loaded subscriber (load q): one at
     * q + 1 hands a partition to one at q while their shares differ by two or more, the one
     * holding the most to the one holding the fewest (ties: the first listed). A move keeps q
     * (the giver drops to q) and swaps the two members' sides, so the givers and the takers
     * are two heaps; a topic with nothing to move is scanned twice and left.
     */
    private boolean evenOut(int t) {
        int[] ms = topicMembers[t];
        int[] ks = topicSlots[t];
        int q = Integer.MAX_VALUE;
        for (int m : ms) {
            q = Math.min(q, load[m]);
        }
        int most = -1;
        int fewest = Integer.MAX_VALUE;
        int givers = 0;
        int takers = 0;
        for (int i = 0; i < ms.length; i++) {
            int m = ms[i];
            int v = x[m][ks[i]];
            if (load[m] == q + 1 && v >= 2) {
                most = Math.max(most, v);
                givers++;
            } else if (load[m] == q) {
                fewest = Math.min(fewest, v);
                takers++;
            }
        }
        if (givers == 0 || takers == 0 || most - fewest < 2) {
            return false;
        }
        // min-heaps of (key << 32 | position): givers by most first, takers by fewest first
        long[] give = new long[ms.length];
        long[] take = new long[ms.length];
        givers = 0;
        takers = 0;
        for (int i = 0; i < ms.length; i++) {
            int m = ms[i];
            int v = x[m][ks[i]];
            if (load[m] == q + 1 && v >= 2) {
                give[givers++] = (long) -v << 32 | i;
            } else if (load[m] == q) {
                take[takers++] = (long) v << 32 | i;
            }
        }
        for (int i = givers / 2 - 1; i >= 0; i--) {
            WarmStart.siftDownPacked(give, givers, i);
        }
        for (int i = takers / 2 - 1; i >= 0; i--) {
            WarmStart.siftDownPacked(take, takers, i);
        }
        boolean moved = false;
        while (givers > 0 && takers > 0) {
            int from = (int) give[0];
            int to = (int) take[0];
            int vFrom = x[ms[from]][ks[from]];
            int vTo = x[ms[to]][ks[to]];
            if (vFrom - vTo < 2) {
                break;
            }
            move(ms[from], ks[from], ms[to], ks[to]);
            moved = true;
            // the giver is at q now (a taker), the taker at q + 1 (a giver if it holds two)
            give[0] = give[--givers];
            WarmStart.siftDownPacked(give, givers, 0);
            take[0] = (long) (vFrom - 1) << 32 | from;
            WarmStart.siftDownPacked(take, takers, 0);
            if (vTo + 1 >= 2) {
                give[givers] = (long) -(vTo + 1) << 32 | to;
                siftUpPacked(give, givers++);
            }
        }
        return moved;
    }

    private static void siftUpPacked(long[] heap, int i) {
        long v = heap[i];
        while (i > 0) {
            int parent = (i - 1) / 2;
            if (heap[parent] <= v) {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = v;
    }


    /**
     * Whether {@link #swapPairs} may find a swap: one between topics t and u needs members
     * whose differences x_t - x_u are three or more apart, so spreads (most minus fewest) of
     * t and u that add up to three or more.
     */
    private boolean maySwap() {
        int first = 0;
        int second = 0;
        for (int t = 0; t < topics; t++) {
            if (!clean[t]) {
                scan(t);
            }
            int spread = most[t] - fewest[t];
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
     * Whether {@link #swapPairs} finds a swap as the counts stand (without it, none: a pair
     * without a swap changes nothing): one look at every member's pairs of topics, the most
     * x_t - x_u of a holder of t against the least of a holder of u, without making the lists.
     */
    private boolean anySwap() {
        int tt = topics * topics;
        int[] mostD = new int[tt];
        int[] leastD = new int[tt];
        Arrays.fill(mostD, Integer.MIN_VALUE);
        Arrays.fill(leastD, Integer.MAX_VALUE);
        for (int m = 0; m < subs.length; m++) {
            int[] s = subs[m];
            int[] xs = x[m];
            for (int j = 0; j < s.length; j++) {
                for (int k = j + 1; k < s.length; k++) {
                    int p = s[j] * topics + s[k];
                    int d = xs[j] - xs[k];
                    if (xs[j] > 0 && d > mostD[p]) {
                        mostD[p] = d;
                    }
                    if (xs[k] > 0 && d < leastD[p]) {
                        leastD[p] = d;
                    }
                    if (mostD[p] != Integer.MIN_VALUE && leastD[p] != Integer.MAX_VALUE
                            && (long) mostD[p] - leastD[p] >= 3) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * Between two topics t and u: the member with the most of t against u gives up one of t
     * for one of u, the one with the most of u against t the reverse, while that lowers the
     * sum of squared shares (their differences x_t - x_u are three or more apart). Pairs whose
     * spreads add up to less than three are skipped (a swap widens the given ranges to the
     * counts it leaves, so they stay bounds).
     */
    private boolean swapPairs(int[] pairs, int[] fewest, int[] most) {
        int tt = topics * topics;
        boolean moved = false;
        for (int p = 0; p < tt; p++) {
            int lo = tt + 1 + 3 * pairs[p];
            int hi = tt + 1 + 3 * pairs[p + 1];
            if (hi - lo < 6) {
                continue;
            }
            int t = p / topics;
            int u = p % topics;
            if (most[t] - fewest[t] + most[u] - fewest[u] < 3) {
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
                int[] xb = x[pairs[b]];
                int at = --xa[pairs[a + 1]];
                int au = ++xa[pairs[a + 2]];
                int bu = --xb[pairs[b + 2]];
                int bt = ++xb[pairs[b + 1]];
                fewest[t] = Math.min(fewest[t], at);
                most[t] = Math.max(most[t], bt);
                fewest[u] = Math.min(fewest[u], bu);
                most[u] = Math.max(most[u], au);
                clean[t] = false;
                clean[u] = false;
                moved = true;
            }
        }
        return moved;
    }
}
