package io.github.kafkaassignors.broker;

import java.util.Arrays;

/**
 * The counts {@link ShareFlow} computes (partitions of each topic per member: the same three
 * objectives, the same optimum), reached from a warm start instead of from nothing. Each member
 * first keeps what it owns and the rest is dealt greedily (each unit to the subscriber whose
 * load, then share of the topic, grows least; members with fewer topics still to come first).
 * That start is then made optimal by cancelling negative cycles, which is exact: a flow is a
 * min-cost flow exactly when its residual graph has no cycle of negative cost.
 *
 * <p>The cycles are looked for on a graph of topics and one load node only: an arc t -> u is
 * the cheapest way for one member to take one more partition of t and give up one of u (u the
 * load node: its load grows; t the load node: its load shrinks), so Bellman-Ford runs over at
 * most (topics + 1)^2 arcs whatever the number of members. A negative cycle there changes every
 * (member, topic) count at most once and one member's load up and one down, so its cost is what
 * applying it costs (or more), and applying it improves the flow; with none left the flow is
 * optimal. The graph is built once; after a cycle only the arcs among the topics of the members
 * it changed are recomputed (the same arcs a rebuild gives, ties included). When the start already meets the lower bounds (every load within one of the group's
 * average, every topic within one of its subscribers' average, everything owned kept) it is
 * optimal without a search.
 *
 * <p>Costs are compared lexicographically as in {@link ShareFlow}: (load, topic share, kept).
 * Ties between members go to the first in canonical order, so the result is deterministic;
 * it may break a tie differently from {@link ShareFlow}, never on an objective. Among the
 * optima, cycles of zero cost then narrow the widest topic ({@link #narrow}).
 */
final class WarmShares {
    /** Cancelled cycles before handing over to {@link ShareFlow} (a count, not a time). */
    static final int MAX_CYCLES = 20_000;
    /** Zero-cost cycles {@link #narrow} may apply (a count, not a time). */
    static final int MAX_NARROWINGS = 256;
    /** What {@link #narrow} may scan in all, over (member, topic) counts: this many plus
     *  {@link #NARROW_PER_COUNT} per count (a count, not a time: it only breaks ties, and one
     *  cycle moves one partition, so a large group would spend more on it than on the rest). */
    static final long NARROW_BUDGET = 1 << 14;
    static final long NARROW_PER_COUNT = 4;

    private final Problem problem;
    private final int members;
    private final int topics;
    private final int[][] subs;
    private final int[][] own;
    private final int[][] x;
    private final int[] load;
    /** Topic -> members subscribed to it, and where the topic sits in each one's list. */
    private final int[][] topicMembers;
    private final int[][] topicSlots;

    // the condensed graph: nodes 0..topics-1 and the load node `topics`; arc u -> v at u * n + v
    private final int n;
    private final long[] arcA;
    private final long[] arcB;
    private final long[] arcC;
    private final int[] arcMember; // -1: no arc
    private final int[] arcUp;     // slot of the member's count that grows (-1: none)
    private final int[] arcDown;   // slot of the member's count that shrinks (-1: none)
    private final int[] active;
    private final int[] activeFrom;
    private final int[] activeTo;
    private int activeCount;
    /** Arcs to recompute after a cycle (stamped), and what a full rebuild costs. */
    private final int[] dirty;
    private final int[] dirtyMark;
    private final int[] memberMark;
    private int dirtyStamp;
    private long fullCost;
    /** Bellman-Ford's labels (kept between searches), predecessors and marks. */
    private final long[] da;
    private final long[] db;
    private final long[] dc;
    private final int[] pred;
    private final int[] mark;
    /** The queue of {@link #queuedCycle}: nodes whose out-arcs may relax something. */
    private final int[] queue;
    private final boolean[] queued;
    private int queueHead;
    private int queueSize;
    private boolean requeueAll = true;
    /** Where each node's arcs start in {@link #active} (listed in arc order: by tail). */
    private final int[] outStart;
    /** {@link #pairLists()}, or null. */
    private int[] pairs;

    private WarmShares(Problem problem) {
        this.problem = problem;
        this.members = problem.members();
        this.topics = problem.topics();
        this.subs = problem.subs;
        own = new int[members][];
        x = new int[members][];
        load = new int[members];
        int[] perTopic = new int[topics];
        for (int m = 0; m < members; m++) {
            int[] s = subs[m];
            own[m] = new int[s.length];
            x[m] = new int[s.length];
            for (int k = 0; k < s.length; k++) {
                own[m][k] = problem.ownedCount(m, s[k]);
                perTopic[s[k]]++;
            }
        }
        topicMembers = new int[topics][];
        topicSlots = new int[topics][];
        for (int t = 0; t < topics; t++) {
            topicMembers[t] = new int[perTopic[t]];
            topicSlots[t] = new int[perTopic[t]];
        }
        int[] fill = new int[topics];
        for (int m = 0; m < members; m++) {
            int[] s = subs[m];
            for (int k = 0; k < s.length; k++) {
                int t = s[k];
                topicMembers[t][fill[t]] = m;
                topicSlots[t][fill[t]++] = k;
            }
        }
        n = topics + 1;
        arcA = new long[n * n];
        arcB = new long[n * n];
        arcC = new long[n * n];
        arcMember = new int[n * n];
        arcUp = new int[n * n];
        arcDown = new int[n * n];
        active = new int[n * n];
        activeFrom = new int[n * n];
        activeTo = new int[n * n];
        dirty = new int[n * n];
        dirtyMark = new int[n * n];
        memberMark = new int[members];
        da = new long[n];
        db = new long[n];
        dc = new long[n];
        pred = new int[n];
        mark = new int[n];
        queue = new int[n];
        queued = new boolean[n];
        outStart = new int[n + 1];
        for (int m = 0; m < members; m++) {
            fullCost += (long) (subs[m].length + 1) * (subs[m].length + 1);
        }
    }

    /** x[m][k]: partitions member m gets of its k-th subscribed topic; exact. */
    static int[][] solve(Problem problem) {
        return solve(problem, null);
    }

    static int[][] solve(Problem problem, Path.Sink path) {
        WarmShares warm = new WarmShares(problem);
        int[][] x = warm.run();
        Path.note(path, x == null ? Path.FLOW : warm.outcome);
        return x != null ? x : ShareFlow.of(problem).solve();
    }

    /** How {@link #run} finished (one of {@link Path}'s names). */
    private String outcome = Path.WARM_BOUNDS;

    /** The optimal counts, or null if the cycle budget ran out. */
    int[][] run() {
        start();
        if (meetsLowerBounds()) {
            return x;
        }
        outcome = Path.WARM_LEVELLED;
        level();
        if (meetsLowerBounds()) {
            return x;
        }
        outcome = Path.WARM_CYCLES;
        int[] cycle = new int[n];
        int[] changed = new int[n];
        buildArcs();
        int narrowed = 0;
        for (int round = 0; round < MAX_CYCLES; round++) {
            int len = negativeCycle(cycle);
            if (len == 0) {
                // optimal: the labels are potentials now; spend what is left on the ties
                int count = narrowed < MAX_NARROWINGS ? narrow(changed) : 0;
                if (count == 0) {
                    return x;
                }
                narrowed++;
                updateArcs(changed, count);
                continue;
            }
            if (!stillPays(cycle, len)) {
                return null; // cannot happen (a predecessor cycle is negative): be safe
            }
            int count = 0;
            for (int i = 0; i < len; i++) {
                changed[count++] = arcMember[cycle[i]];
            }
            // the same moves again while they still pay (a load far off takes many units)
            do {
                apply(cycle, len);
            } while (stillPays(cycle, len));
            updateArcs(changed, count);
        }
        return null;
    }

    // ---- the warm start ----

    private void start() {
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
    private void level() {
        pairs = pairLists();
        // first only the moves that also even out the topic, so the rest need not undo them
        for (int pass = 0; pass < 64; pass++) {
            boolean moved = false;
            for (int t = 0; t < topics; t++) {
                moved |= levelTopic(t, true);
            }
            if (!moved) {
                break;
            }
        }
        for (int pass = 0; pass < 64; pass++) {
            boolean moved = false;
            for (int t = 0; t < topics; t++) {
                moved |= levelTopic(t, false);
            }
            if (pairs != null) {
                moved |= swapPairs(pairs);
            }
            if (!moved) {
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
            move(ms[hi], ks[hi], ms[lo], ks[lo]);
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
            move(ms[from], ks[from], ms[to], ks[to]);
            moved = true;
        }
    }

    private void move(int from, int fromSlot, int to, int toSlot) {
        x[from][fromSlot]--;
        load[from]--;
        x[to][toSlot]++;
        load[to]++;
    }

    /** Pair lists are kept only while this small (members with many topics: too many pairs). */
    private static final int MAX_PAIRS = 1 << 18;

    /**
     * For every two topics t < u, the members subscribed to both, as (member, slot of t,
     * slot of u) triples grouped by pair: {@code [offsets over pairs..., triples...]}; null
     * when there are more than {@link #MAX_PAIRS} of them.
     */
    private int[] pairLists() {
        long total = 0;
        for (int m = 0; m < members; m++) {
            total += (long) subs[m].length * (subs[m].length - 1) / 2;
        }
        if (total > MAX_PAIRS || (long) topics * topics > MAX_PAIRS) {
            return null;
        }
        int tt = topics * topics;
        int[] out = new int[tt + 1 + 3 * (int) total];
        for (int m = 0; m < members; m++) {
            int[] s = subs[m];
            for (int j = 0; j < s.length; j++) {
                for (int k = j + 1; k < s.length; k++) {
                    out[s[j] * topics + s[k] + 1]++;
                }
            }
        }
        for (int p = 0; p < tt; p++) {
            out[p + 1] += out[p];
        }
        int[] fill = new int[tt];
        for (int m = 0; m < members; m++) {
            int[] s = subs[m];
            for (int j = 0; j < s.length; j++) {
                for (int k = j + 1; k < s.length; k++) {
                    int p = s[j] * topics + s[k];
                    int at = tt + 1 + 3 * (out[p] + fill[p]++);
                    out[at] = m;
                    out[at + 1] = j;
                    out[at + 2] = k;
                }
            }
        }
        return out;
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

    /**
     * Loads within one of the average over all members, each topic within one of the average
     * over its subscribers, and everything owned kept: no flow does better on any objective.
     */
    private boolean meetsLowerBounds() {
        long total = 0;
        for (int t = 0; t < topics; t++) {
            if (topicMembers[t].length > 0) {
                total += problem.counts[t];
            }
        }
        long q = total / members;
        for (int m = 0; m < members; m++) {
            if (load[m] < q || load[m] > q + 1) {
                return false;
            }
        }
        for (int t = 0; t < topics; t++) {
            int size = topicMembers[t].length;
            if (size == 0) {
                continue;
            }
            int qt = problem.counts[t] / size;
            for (int i = 0; i < size; i++) {
                int v = x[topicMembers[t][i]][topicSlots[t][i]];
                if (v < qt || v > qt + 1) {
                    return false;
                }
            }
        }
        for (int m = 0; m < members; m++) {
            for (int k = 0; k < own[m].length; k++) {
                if (x[m][k] < own[m][k]) {
                    return false;
                }
            }
        }
        return true;
    }

    // ---- ties: the widest topic ----

    /** Scratch for {@link #narrow}, made on first use. */
    private int[] spreadOf;
    private int[] spreadAfter;
    private int[] via;
    private int[] bfs;
    private int[] srcMember;
    private int[] srcUp;
    private int[] srcDown;
    private int[] tgtMember;
    private int[] tgtUp;
    private int[] tgtDown;
    private int[] moveMember;
    private int[] moveUp;
    private int[] moveDown;
    private long deltaA;
    private long deltaB;
    private long deltaC;
    /** What {@link #narrow} has scanned so far, against its budget. */
    private long narrowWork;
    private long narrowBudget;

    /**
     * The three objectives leave ties, and a sum of squares does not pin down how wide the
     * widest topic is (max - min over its subscribers). Once the flow is optimal, this applies
     * one cycle of zero cost that narrows it: a subscriber holding the topic's most gives one
     * up to one holding two or more fewer (or one holding its fewest takes one from one
     * holding two or more more), and the rest of the cycle runs on arcs of zero reduced
     * cost under the labels the search left (feasible potentials, so such a cycle
     * costs exactly nothing; the changes are checked again as they are applied). It is kept
     * only if the worst spread over all topics, then the number of subscribers at an end of a
     * topic that wide, drops, so the narrowing ends. Returns how many members it changed
     * (into {@code changed}), 0 if no such cycle was found.
     */
    private int narrow(int[] changed) {
        if (spreadOf == null) {
            long cells = 0;
            for (int t = 0; t < topics; t++) {
                cells += topicMembers[t].length;
            }
            narrowBudget = NARROW_BUDGET + NARROW_PER_COUNT * cells;
            spreadOf = new int[topics];
            spreadAfter = new int[topics];
            via = new int[n];
            bfs = new int[n];
            srcMember = new int[n];
            srcUp = new int[n];
            srcDown = new int[n];
            tgtMember = new int[n];
            tgtUp = new int[n];
            tgtDown = new int[n];
            moveMember = new int[n + 1];
            moveUp = new int[n + 1];
            moveDown = new int[n + 1];
        }
        if (narrowWork > narrowBudget) {
            return 0;
        }
        long measure = widest(spreadOf);
        int worst = (int) (measure >>> 32);
        if (worst < 2) {
            return 0;
        }
        for (int t = 0; t < topics && narrowWork <= narrowBudget; t++) {
            if (spreadOf[t] == worst) {
                // the top comes down (to anyone two or more below), or the bottom goes up
                for (int fromTop = 1; fromTop >= 0; fromTop--) {
                    int count = narrowTopic(t, fromTop == 1, measure, changed);
                    if (count > 0) {
                        return count;
                    }
                }
            }
        }
        return 0;
    }

    /** (worst spread over the topics) << 32 | subscribers at an end of a topic that wide. */
    private long widest(int[] spreads) {
        int worst = 0;
        for (int t = 0; t < topics; t++) {
            int[] ms = topicMembers[t];
            narrowWork += ms.length;
            int[] ks = topicSlots[t];
            int lo = Integer.MAX_VALUE;
            int hi = Integer.MIN_VALUE;
            for (int i = 0; i < ms.length; i++) {
                int v = x[ms[i]][ks[i]];
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
            spreads[t] = ms.length < 2 ? 0 : hi - lo;
            worst = Math.max(worst, spreads[t]);
        }
        long ends = 0;
        for (int t = 0; t < topics; t++) {
            if (spreads[t] != worst || worst == 0) {
                continue;
            }
            int[] ms = topicMembers[t];
            int[] ks = topicSlots[t];
            int lo = Integer.MAX_VALUE;
            for (int i = 0; i < ms.length; i++) {
                lo = Math.min(lo, x[ms[i]][ks[i]]);
            }
            for (int i = 0; i < ms.length; i++) {
                int v = x[ms[i]][ks[i]];
                if (v == lo || v == lo + worst) {
                    ends++;
                }
            }
        }
        return (long) worst << 32 | ends;
    }

    /** Whether moving from u to v at this cost keeps v's label exactly: zero reduced cost. */
    private boolean tight(int u, int v, long a, long b, long c) {
        return da[u] + a == da[v] && db[u] + b == db[v] && dc[u] + c == dc[v];
    }

    /**
     * @param fromTop one holding the most of t gives one to any two or more below it (else:
     *     one holding the fewest takes one from any two or more above it)
     */
    private int narrowTopic(int t, boolean fromTop, long measure, int[] changed) {
        int[] ms = topicMembers[t];
        int[] ks = topicSlots[t];
        narrowWork += 2L * ms.length + activeCount + n;
        int lo = Integer.MAX_VALUE;
        int hi = Integer.MIN_VALUE;
        for (int i = 0; i < ms.length; i++) {
            int v = x[ms[i]][ks[i]];
            lo = Math.min(lo, v);
            hi = Math.max(hi, v);
        }
        int sinkNode = topics;
        Arrays.fill(via, -1);
        Arrays.fill(tgtMember, -1);
        int head = 0;
        int tail = 0;
        boolean anyTarget = false;
        // sources: a taker of one of t gives up one of u (or its load grows); targets: a
        // giver of one of t takes one of v (or its load shrinks)
        for (int i = 0; i < ms.length; i++) {
            int m = ms[i];
            int slot = ks[i];
            int xt = x[m][slot];
            int[] s = subs[m];
            int[] xs = x[m];
            int[] os = own[m];
            if (fromTop ? xt <= hi - 2 : xt == lo) {
                long b0 = 2L * xt + 1;
                long c0 = xt < os[slot] ? -1 : 0;
                for (int k = -1; k < s.length; k++) {
                    if (k == slot || k >= 0 && xs[k] == 0) {
                        continue;
                    }
                    int u = k < 0 ? sinkNode : s[k];
                    if (via[u] != -1) {
                        continue;
                    }
                    long a = k < 0 ? 2L * load[m] + 1 : 0;
                    long b = b0 - (k < 0 ? 0 : 2L * xs[k] - 1);
                    long c = c0 + (k >= 0 && xs[k] - 1 < os[k] ? 1 : 0);
                    if (tight(t, u, a, b, c)) {
                        via[u] = -2;
                        srcMember[u] = m;
                        srcUp[u] = slot;
                        srcDown[u] = k;
                        bfs[tail++] = u;
                    }
                }
            } else if (fromTop ? xt == hi : xt >= lo + 2) {
                long b0 = -(2L * xt - 1);
                long c0 = xt - 1 < os[slot] ? 1 : 0;
                for (int j = -1; j < s.length; j++) {
                    int v = j < 0 ? sinkNode : s[j];
                    if (j == slot || tgtMember[v] >= 0) {
                        continue;
                    }
                    long a = j < 0 ? -(2L * load[m] - 1) : 0;
                    long b = b0 + (j < 0 ? 0 : 2L * xs[j] + 1);
                    long c = c0 + (j >= 0 && xs[j] < os[j] ? -1 : 0);
                    if (tight(v, t, a, b, c)) {
                        tgtMember[v] = m;
                        tgtUp[v] = j;
                        tgtDown[v] = slot;
                        anyTarget = true;
                    }
                }
            }
        }
        if (tail == 0 || !anyTarget) {
            return 0;
        }
        via[t] = -3; // the cycle passes t only at its ends
        int found = -1;
        while (head < tail) {
            int u = bfs[head++];
            if (tgtMember[u] >= 0) {
                found = u;
                break;
            }
            for (int i = outStart[u], end = outStart[u + 1]; i < end; i++) {
                int v = activeTo[i];
                int arc = active[i];
                if (via[v] == -1 && tight(u, v, arcA[arc], arcB[arc], arcC[arc])) {
                    via[v] = arc;
                    bfs[tail++] = v;
                }
            }
        }
        if (found < 0) {
            return 0;
        }
        // the moves in cycle order: the target's last, the path back to a source, its move
        int count = 0;
        moveMember[count] = tgtMember[found];
        moveUp[count] = tgtUp[found];
        moveDown[count++] = tgtDown[found];
        int v = found;
        while (via[v] >= 0) {
            int arc = via[v];
            moveMember[count] = arcMember[arc];
            moveUp[count] = arcUp[arc];
            moveDown[count++] = arcDown[arc];
            v = arc / n;
        }
        moveMember[count] = srcMember[v];
        moveUp[count] = srcUp[v];
        moveDown[count++] = srcDown[v];
        deltaA = 0;
        deltaB = 0;
        deltaC = 0;
        for (int i = 0; i < count; i++) {
            step(moveMember[i], moveUp[i], moveDown[i]);
        }
        if (compare(deltaA, deltaB, deltaC, 0, 0, 0) > 0 || widest(spreadAfter) >= measure) {
            for (int i = count - 1; i >= 0; i--) {
                step(moveMember[i], moveDown[i], moveUp[i]);
            }
            return 0;
        }
        for (int i = 0; i < count; i++) {
            changed[i] = moveMember[i];
        }
        return count;
    }

    /** One member takes one of slot up (-1: its load shrinks), gives up one of slot down. */
    private void step(int m, int up, int down) {
        int[] xs = x[m];
        if (up >= 0) {
            deltaB += 2L * xs[up] + 1;
            deltaC -= xs[up] < own[m][up] ? 1 : 0;
            xs[up]++;
        }
        if (down >= 0) {
            deltaB -= 2L * xs[down] - 1;
            deltaC += xs[down] - 1 < own[m][down] ? 1 : 0;
            xs[down]--;
        }
        if (up < 0) {
            deltaA -= 2L * load[m] - 1;
            load[m]--;
        } else if (down < 0) {
            deltaA += 2L * load[m] + 1;
            load[m]++;
        }
    }

    // ---- negative cycles on the condensed graph ----

    private void buildArcs() {
        Arrays.fill(arcMember, -1);
        int sinkNode = topics;
        for (int m = 0; m < members; m++) {
            int[] s = subs[m];
            int[] xs = x[m];
            int[] os = own[m];
            long up = 2L * load[m] + 1;
            long down = -(2L * load[m] - 1);
            for (int j = 0; j < s.length; j++) {
                long ib = 2L * xs[j] + 1;
                long ic = xs[j] < os[j] ? -1 : 0;
                consider(s[j] * n + sinkNode, up, ib, ic, m, j, -1);
            }
            for (int k = 0; k < s.length; k++) {
                if (xs[k] == 0) {
                    continue;
                }
                long db = -(2L * xs[k] - 1);
                long dc = xs[k] - 1 < os[k] ? 1 : 0;
                consider(sinkNode * n + s[k], down, db, dc, m, -1, k);
                for (int j = 0; j < s.length; j++) {
                    if (j != k) {
                        long ib = 2L * xs[j] + 1;
                        long ic = xs[j] < os[j] ? -1 : 0;
                        consider(s[j] * n + s[k], 0, ib + db, ic + dc, m, j, k);
                    }
                }
            }
        }
        collectActive();
        requeueAll = true;
    }

    /**
     * The arcs after a cycle changed the counts of {@code changed} members: only arcs between
     * their topics (and the load node) can differ. An arc one of them held is recomputed over
     * every member it may use; on any other the holder's cost is unchanged, so only the
     * changed members can take it over (ties: the first in canonical order, as
     * {@link #buildArcs} picks). So the arcs are the same as a full rebuild's; a full rebuild
     * when that is cheaper.
     */
    private void updateArcs(int[] changed, int count) {
        if (++dirtyStamp == Integer.MAX_VALUE) {
            Arrays.fill(dirtyMark, 0);
            Arrays.fill(memberMark, 0);
            dirtyStamp = 1;
        }
        int stamp = dirtyStamp;
        for (int i = 0; i < count; i++) {
            memberMark[changed[i]] = stamp;
        }
        int sinkNode = topics;
        int dirtyCount = 0;
        long cost = 0;
        for (int i = 0; i < count; i++) {
            int[] s = subs[changed[i]];
            for (int j = -1; j < s.length; j++) {
                int from = j < 0 ? sinkNode : s[j];
                for (int k = -1; k < s.length; k++) {
                    int arc = from * n + (k < 0 ? sinkNode : s[k]);
                    if (j == k || dirtyMark[arc] == stamp) {
                        continue;
                    }
                    dirtyMark[arc] = stamp;
                    int holder = arcMember[arc];
                    if (holder >= 0 && memberMark[holder] == stamp) {
                        dirty[dirtyCount++] = arc;
                        cost += arcCost(arc);
                    }
                }
            }
            if (cost > fullCost) {
                buildArcs();
                return;
            }
        }
        boolean flipped = false;
        for (int d = 0; d < dirtyCount; d++) {
            recomputeArc(dirty[d]);
            touched(dirty[d]);
            flipped |= arcMember[dirty[d]] < 0;
            dirtyMark[dirty[d]] = -stamp; // done: the changed members were among those scanned
        }
        for (int i = 0; i < count; i++) {
            int m = changed[i];
            if (memberMark[m] != stamp) {
                continue; // listed twice
            }
            memberMark[m] = -stamp;
            int[] s = subs[m];
            int[] xs = x[m];
            int[] os = own[m];
            for (int j = -1; j < s.length; j++) {
                int from = j < 0 ? sinkNode : s[j];
                for (int k = -1; k < s.length; k++) {
                    if (j == k || k >= 0 && xs[k] == 0) {
                        continue;
                    }
                    int arc = from * n + (k < 0 ? sinkNode : s[k]);
                    if (dirtyMark[arc] != stamp) {
                        continue; // recomputed above
                    }
                    long a = j < 0 ? -(2L * load[m] - 1) : k < 0 ? 2L * load[m] + 1 : 0;
                    long b = (j < 0 ? 0 : 2L * xs[j] + 1) - (k < 0 ? 0 : 2L * xs[k] - 1);
                    long c = (j >= 0 && xs[j] < os[j] ? -1 : 0) + (k >= 0 && xs[k] - 1 < os[k] ? 1 : 0);
                    int holder = arcMember[arc];
                    if (holder < 0) {
                        flipped = true;
                    } else {
                        int cmp = compare(a, b, c, arcA[arc], arcB[arc], arcC[arc]);
                        if (cmp > 0 || cmp == 0 && holder < m) {
                            continue;
                        }
                    }
                    arcA[arc] = a;
                    arcB[arc] = b;
                    arcC[arc] = c;
                    arcMember[arc] = m;
                    arcUp[arc] = j;
                    arcDown[arc] = k;
                    touched(arc);
                }
            }
        }
        if (flipped) { // the active arcs stay in arc order, as a rebuild lists them
            collectActive();
        }
    }

    /** What recomputing one arc costs: the members it may use. */
    private long arcCost(int arc) {
        int from = arc / n;
        int to = arc % n;
        if (to == topics) {
            return topicMembers[from].length;
        }
        if (from == topics) {
            return topicMembers[to].length;
        }
        if (pairs != null) {
            int p = Math.min(from, to) * topics + Math.max(from, to);
            return pairs[p + 1] - pairs[p];
        }
        return 4L * topicMembers[to].length; // each with a binary search
    }

    private void collectActive() {
        activeCount = 0;
        for (int u = 0, a = 0; u < n; u++) {
            outStart[u] = activeCount;
            for (int v = 0; v < n; v++, a++) {
                if (arcMember[a] >= 0) {
                    activeFrom[activeCount] = u;
                    activeTo[activeCount] = v;
                    active[activeCount++] = a;
                }
            }
        }
        outStart[n] = activeCount;
    }

    /** One arc from scratch: the same candidates, in the same order, as {@link #buildArcs}. */
    private void recomputeArc(int arc) {
        arcMember[arc] = -1;
        int sinkNode = topics;
        int from = arc / n;
        int to = arc % n;
        if (to == sinkNode) {
            // a member takes one more of topic `from`, its load grows
            int[] ms = topicMembers[from];
            int[] ks = topicSlots[from];
            for (int i = 0; i < ms.length; i++) {
                int m = ms[i];
                int j = ks[i];
                int xj = x[m][j];
                consider(arc, 2L * load[m] + 1, 2L * xj + 1, xj < own[m][j] ? -1 : 0, m, j, -1);
            }
            return;
        }
        if (from != sinkNode && pairs != null) {
            // the members subscribed to both, in canonical order
            int p = Math.min(from, to) * topics + Math.max(from, to);
            boolean fromFirst = from < to;
            int tt = topics * topics;
            for (int e = tt + 1 + 3 * pairs[p], end = tt + 1 + 3 * pairs[p + 1]; e < end; e += 3) {
                int m = pairs[e];
                int j = pairs[fromFirst ? e + 1 : e + 2];
                int k = pairs[fromFirst ? e + 2 : e + 1];
                int xk = x[m][k];
                if (xk == 0) {
                    continue;
                }
                int xj = x[m][j];
                consider(arc, 0, 2L * xj + 1 - (2L * xk - 1),
                        (xj < own[m][j] ? -1 : 0) + (xk - 1 < own[m][k] ? 1 : 0), m, j, k);
            }
            return;
        }
        // a member gives up one of topic `to` (it has one), and takes one of `from` or its
        // load shrinks
        int[] ms = topicMembers[to];
        int[] ks = topicSlots[to];
        for (int i = 0; i < ms.length; i++) {
            int m = ms[i];
            int k = ks[i];
            int xk = x[m][k];
            if (xk == 0) {
                continue;
            }
            long db = -(2L * xk - 1);
            long dc = xk - 1 < own[m][k] ? 1 : 0;
            if (from == sinkNode) {
                consider(arc, -(2L * load[m] - 1), db, dc, m, -1, k);
            } else {
                int j = Arrays.binarySearch(subs[m], from);
                if (j >= 0) {
                    int xj = x[m][j];
                    consider(arc, 0, 2L * xj + 1 + db, (xj < own[m][j] ? -1 : 0) + dc, m, j, k);
                }
            }
        }
    }

    private void consider(int arc, long a, long b, long c, int m, int up, int down) {
        if (arcMember[arc] >= 0 && compare(a, b, c, arcA[arc], arcB[arc], arcC[arc]) >= 0) {
            return;
        }
        arcA[arc] = a;
        arcB[arc] = b;
        arcC[arc] = c;
        arcMember[arc] = m;
        arcUp[arc] = up;
        arcDown[arc] = down;
    }

    private static int compare(long a1, long b1, long c1, long a2, long b2, long c2) {
        if (a1 != a2) {
            return Long.compare(a1, a2);
        }
        if (b1 != b2) {
            return Long.compare(b1, b2);
        }
        return Long.compare(c1, c2);
    }

    /**
     * Bellman-Ford from every node at once (all distances 0); a cycle among the predecessor
     * arcs has negative cost. Fills {@code cycle} with its arcs; returns their number, 0 if none.
     */
    private int negativeCycle(int[] cycle) {
        int len = queuedCycle(cycle);
        if (len >= 0) {
            return len;
        }
        // did not settle within its budget: Bellman-Ford from zero
        Arrays.fill(da, 0);
        Arrays.fill(db, 0);
        Arrays.fill(dc, 0);
        len = negativeCycle(cycle, n);
        if (len < 0) {
            throw new IllegalStateException("Bellman-Ford did not settle");
        }
        requeueAll = true;
        return len;
    }

    /** An arc's cost or holder changed: its tail is looked at again, a predecessor it was is dropped. */
    private void touched(int arc) {
        enqueue(arc / n);
        if (pred[arc % n] == arc) {
            pred[arc % n] = -1;
        }
    }

    private void enqueue(int u) {
        if (!queued[u]) {
            queued[u] = true;
            queue[(queueHead + queueSize++) % n] = u;
        }
    }

    /**
     * Bellman-Ford with a queue, resumed where the last search stopped: the labels, the
     * predecessors and the queue are kept (every arc whose head's label could still drop has
     * its tail queued), and {@link #touched} requeues what a cancelled cycle changed. So after
     * a cycle the search only relaxes around the members it changed. A cycle among the
     * predecessors is negative (each was set with the arc's current cost, and dropped when that
     * changed); an empty queue means every arc is satisfied: no negative cycle. Returns the
     * cycle's length, 0 if none, -1 past the budget.
     */
    private int queuedCycle(int[] cycle) {
        if (requeueAll) {
            requeueAll = false;
            Arrays.fill(pred, -1);
            for (int u = 0; u < n; u++) {
                enqueue(u);
            }
        }
        long budget = 4L * n * (activeCount + n);
        int check = Math.max(1, n / 8);
        int pops = 0;
        while (queueSize > 0) {
            int u = queue[queueHead];
            queueHead = (queueHead + 1) % n;
            queueSize--;
            queued[u] = false;
            long au = da[u];
            long bu = db[u];
            long cu = dc[u];
            for (int i = outStart[u], end = outStart[u + 1]; i < end; i++) {
                int arc = active[i];
                int v = activeTo[i];
                long a = au + arcA[arc];
                long b = bu + arcB[arc];
                long c = cu + arcC[arc];
                if (compare(a, b, c, da[v], db[v], dc[v]) < 0) {
                    da[v] = a;
                    db[v] = b;
                    dc[v] = c;
                    pred[v] = arc;
                    enqueue(v);
                }
            }
            budget -= outStart[u + 1] - outStart[u] + 1;
            if (++pops % check == 0 || budget < 0) {
                int len = predecessorCycle(cycle);
                if (len > 0) {
                    return len;
                }
                if (budget < 0) {
                    return -1;
                }
            }
        }
        return 0;
    }

    /** A cycle among the predecessors: its arcs into {@code cycle}, their number; 0 if none. */
    private int predecessorCycle(int[] cycle) {
        int[] mark = this.mark;
        Arrays.fill(mark, 0);
        int stamp = 0;
        for (int s = 0; s < n; s++) {
            stamp++;
            int v = s;
            while (v >= 0 && mark[v] != stamp && mark[v] >= 0) {
                mark[v] = stamp;
                v = pred[v] < 0 ? -1 : pred[v] / n;
            }
            if (v >= 0 && mark[v] == stamp) {
                return collect(v, pred, cycle);
            }
            int w = s;
            while (w >= 0 && mark[w] == stamp) {
                mark[w] = -stamp;
                w = pred[w] < 0 ? -1 : pred[w] / n;
            }
        }
        return 0;
    }

    /**
     * Bellman-Ford from the labels the last search left (any labels will do: relaxing
     * settles exactly when no cycle is negative, and a cycle among predecessors set in this
     * search is negative); after a cycle is cancelled they are mostly still right, so the
     * next search takes few passes. -1 if still changing after {@code passes} passes.
     */
    private int negativeCycle(int[] cycle, int passes) {
        Arrays.fill(pred, -1);
        int[] mark = this.mark;
        Arrays.fill(mark, 0);
        int stamp = 0;
        for (int pass = 0; pass < passes; pass++) {
            boolean changed = false;
            for (int i = 0; i < activeCount; i++) {
                int arc = active[i];
                int u = activeFrom[i];
                int v = activeTo[i];
                long a = da[u] + arcA[arc];
                long b = db[u] + arcB[arc];
                long c = dc[u] + arcC[arc];
                if (compare(a, b, c, da[v], db[v], dc[v]) < 0) {
                    da[v] = a;
                    db[v] = b;
                    dc[v] = c;
                    pred[v] = arc;
                    changed = true;
                }
            }
            if (!changed) {
                return 0;
            }
            // look for a cycle among the predecessors
            for (int s = 0; s < n; s++) {
                stamp++;
                int v = s;
                while (v >= 0 && mark[v] != stamp && mark[v] >= 0) {
                    mark[v] = stamp;
                    v = pred[v] < 0 ? -1 : pred[v] / n;
                }
                if (v >= 0 && mark[v] == stamp) {
                    return collect(v, pred, cycle);
                }
                // settle the walked nodes as cycle-free for this pass
                int w = s;
                while (w >= 0 && mark[w] == stamp) {
                    mark[w] = -stamp;
                    w = pred[w] < 0 ? -1 : pred[w] / n;
                }
            }
            // marks are only valid within a pass
            Arrays.fill(mark, 0);
            stamp = 0;
        }
        return -1;
    }

    private int collect(int start, int[] pred, int[] cycle) {
        int len = 0;
        int v = start;
        do {
            cycle[len++] = pred[v];
            v = pred[v] / n;
        } while (v != start);
        return len;
    }

    /**
     * Whether applying the cycle's moves (once more) (the same members, the same counts) would
     * improve the flow: each arc's cost recomputed from the current counts. A member on two
     * arcs changes two different counts (every topic is on the cycle once), and the load node
     * is on it once, so the costs add up.
     */
    private boolean stillPays(int[] cycle, int len) {
        long a = 0;
        long b = 0;
        long c = 0;
        for (int i = 0; i < len; i++) {
            int arc = cycle[i];
            int m = arcMember[arc];
            int up = arcUp[arc];
            int down = arcDown[arc];
            if (up >= 0) {
                b += 2L * x[m][up] + 1;
                c += x[m][up] < own[m][up] ? -1 : 0;
            } else {
                if (load[m] == 0) {
                    return false;
                }
                a -= 2L * load[m] - 1;
            }
            if (down >= 0) {
                if (x[m][down] == 0) {
                    return false;
                }
                b -= 2L * x[m][down] - 1;
                c += x[m][down] - 1 < own[m][down] ? 1 : 0;
            } else {
                a += 2L * load[m] + 1;
            }
        }
        return compare(a, b, c, 0, 0, 0) < 0;
    }

    /** One unit around the cycle. */
    private void apply(int[] cycle, int len) {
        for (int i = 0; i < len; i++) {
            int arc = cycle[i];
            int m = arcMember[arc];
            if (arcUp[arc] >= 0) {
                x[m][arcUp[arc]]++;
            } else {
                load[m]--; // from the load node
            }
            if (arcDown[arc] >= 0) {
                x[m][arcDown[arc]]--;
            } else {
                load[m]++; // to the load node
            }
        }
    }
}
