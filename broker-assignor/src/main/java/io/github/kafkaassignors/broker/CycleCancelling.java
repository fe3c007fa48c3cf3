package io.github.kafkaassignors.broker;

import java.util.Arrays;

/**
 * The general optimum of {@link WarmShares}: cancels negative cycles, which is exact (a flow
 * is a min-cost flow exactly when its residual graph has no cycle of negative cost).
 *
 * <p>The cycles are looked for on a graph of topics and one load node only: an arc t -> u is
 * the cheapest way for one member to take one more partition of t and give up one of u (u the
 * load node: its load grows; t the load node: its load shrinks), so Bellman-Ford runs over at
 * most (topics + 1)^2 arcs whatever the number of members. A negative cycle there changes every
 * (member, topic) count at most once and one member's load up and one down, so its cost is what
 * applying it costs (or more), and applying it improves the flow; with none left the flow is
 * optimal. The graph is built once; after a cycle only the arcs among the topics of the members
 * it changed are recomputed (the same arcs a rebuild gives, ties included), and
 * {@link CycleSearch} looks for the next cycle from where the last search stopped. Ties
 * between members go to the first in canonical order. Changes the {@link Shares} in place.
 */
final class CycleCancelling {
    private final Shares shares;
    // the Shares' fields under their own names: the same arrays, so every pass sees each
    // other's changes
    private final int members;
    private final int topics;
    private final int[][] subs;
    private final int[][] x;
    private final int[] load;
    private final int[][] topicMembers;
    private final int[][] topicSlots;

    // the condensed graph: nodes 0..topics-1 and the load node `topics`; arc u -> v at u * n + v
    final int n;
    final long[] arcA;
    final long[] arcB;
    final long[] arcC;
    final int[] arcMember; // -1: no arc
    final int[] arcUp;     // slot of the member's count that grows (-1: none)
    final int[] arcDown;   // slot of the member's count that shrinks (-1: none)
    final int[] active;
    final int[] activeFrom;
    final int[] activeTo;
    int activeCount;
    /** Arcs to recompute after a cycle (stamped), and what a full rebuild costs. */
    private final int[] dirty;
    private final int[] dirtyMark;
    private final int[] memberMark;
    private int dirtyStamp;
    private long fullCost;
    /** Where each node's arcs start in {@link #active} (listed in arc order: by tail). */
    final int[] outStart;
    /** The search for negative cycles on this graph (its labels: {@link Narrowing} reads them). */
    final CycleSearch search;


    CycleCancelling(Shares shares) {
        this.shares = shares;
        this.members = shares.members;
        this.topics = shares.topics;
        this.subs = shares.subs;
        this.x = shares.x;
        this.load = shares.load;
        this.topicMembers = shares.topicMembers;
        this.topicSlots = shares.topicSlots;
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
        outStart = new int[n + 1];
        search = new CycleSearch(this);
        for (int m = 0; m < members; m++) {
            fullCost += (long) (subs[m].length + 1) * (subs[m].length + 1);
        }
    }

    /**
     * Every arc from scratch: each member's steps as {@link #consider} weighs them, with the
     * member's costs of one more and one fewer of each topic worked out once (not once per
     * pair of its topics); members in canonical order, so a tie keeps the first.
     */
    void buildArcs() {
        Arrays.fill(arcMember, -1);
        int sinkNode = topics;
        int[][] own = shares.own;
        int widest = 0;
        for (int[] s : subs) {
            widest = Math.max(widest, s.length);
        }
        long[] upB = new long[widest];
        long[] upC = new long[widest];
        for (int m = 0; m < members; m++) {
            int[] s = subs[m];
            int[] xs = x[m];
            int[] os = own[m];
            for (int j = 0; j < s.length; j++) {
                upB[j] = Shares.up(xs[j]);
                upC[j] = Shares.keptUp(xs[j], os[j]);
                offer(s[j] * n + sinkNode, Shares.up(load[m]), upB[j], upC[j], m, j, -1);
            }
            for (int k = 0; k < s.length; k++) {
                if (xs[k] == 0) {
                    continue;
                }
                long downB = Shares.down(xs[k]);
                long downC = Shares.keptDown(xs[k], os[k]);
                offer(sinkNode * n + s[k], Shares.down(load[m]), downB, downC, m, -1, k);
                for (int j = 0; j < s.length; j++) {
                    if (j != k) {
                        offer(s[j] * n + s[k], 0, upB[j] + downB, upC[j] + downC, m, j, k);
                    }
                }
            }
        }
        collectActive(0);
        search.restart();
    }

    /** {@link #consider} while building: the member comes after the holder, so only a cheaper step takes the arc. */
    private void offer(int arc, long a, long b, long c, int m, int up, int down) {
        if (arcMember[arc] >= 0 && Shares.compare(a, b, c, arcA[arc], arcB[arc], arcC[arc]) >= 0) {
            return;
        }
        take(arc, a, b, c, m, up, down);
    }

    /** Member m's step (up, down) at cost (a, b, c) is arc's now. */
    private void take(int arc, long a, long b, long c, int m, int up, int down) {
        arcA[arc] = a;
        arcB[arc] = b;
        arcC[arc] = c;
        arcMember[arc] = m;
        arcUp[arc] = up;
        arcDown[arc] = down;
    }

    /**
     * The arcs after a cycle changed the counts of {@code changed} members: only arcs between
     * their topics (and the load node) can differ. An arc one of them held is recomputed over
     * every member it may use; on any other the holder's cost is unchanged, so only the
     * changed members can take it over (ties: the first in canonical order, as
     * {@link #buildArcs} picks). So the arcs are the same as a full rebuild's; a full rebuild
     * when that is cheaper.
     */
    void updateArcs(int[] changed, int count) {
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
        int flipped = n; // the first tail whose arcs came or went (n: none)
        for (int d = 0; d < dirtyCount; d++) {
            recomputeArc(dirty[d]);
            search.touched(dirty[d]);
            if (arcMember[dirty[d]] < 0) {
                flipped = Math.min(flipped, dirty[d] / n);
            }
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
                    if (arcMember[arc] < 0) {
                        flipped = Math.min(flipped, from);
                    }
                    if (consider(arc, m, j, k)) {
                        search.touched(arc);
                    }
                }
            }
        }
        if (flipped < n) { // the active arcs stay in arc order, as a rebuild lists them
            collectActive(flipped);
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
        int[] pairs = shares.pairs();
        if (pairs != null) {
            int p = Math.min(from, to) * topics + Math.max(from, to);
            return pairs[p + 1] - pairs[p];
        }
        return 4L * topicMembers[to].length; // each with a binary search
    }

    /** The active arcs again from tail {@code first} on (those before it did not change). */
    private void collectActive(int first) {
        activeCount = outStart[first];
        for (int u = first, a = first * n; u < n; u++) {
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
                consider(arc, m, ks[i], -1);
            }
            return;
        }
        int[] pairs = from != sinkNode ? shares.pairs() : null;
        if (pairs != null) {
            // the members subscribed to both, in canonical order
            int p = Math.min(from, to) * topics + Math.max(from, to);
            boolean fromFirst = from < to;
            int tt = topics * topics;
            for (int e = tt + 1 + 3 * pairs[p], end = tt + 1 + 3 * pairs[p + 1]; e < end; e += 3) {
                int m = pairs[e];
                int j = pairs[fromFirst ? e + 1 : e + 2];
                int k = pairs[fromFirst ? e + 2 : e + 1];
                if (x[m][k] > 0) {
                    consider(arc, m, j, k);
                }
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
            if (x[m][k] == 0) {
                continue;
            }
            if (from == sinkNode) {
                consider(arc, m, -1, k);
            } else {
                int j = Arrays.binarySearch(subs[m], from);
                if (j >= 0) {
                    consider(arc, m, j, k);
                }
            }
        }
    }

    /**
     * Member m's step (see {@link Shares#loadCost}) on arc {@code arc}: taken when there is no
     * arc yet, it is cheaper, or it costs the same and m comes first in canonical order.
     */
    private boolean consider(int arc, int m, int up, int down) {
        long a = shares.loadCost(m, up, down);
        long b = shares.shareCost(m, up, down);
        long c = shares.keptCost(m, up, down);
        int holder = arcMember[arc];
        if (holder >= 0) {
            int cmp = Shares.compare(a, b, c, arcA[arc], arcB[arc], arcC[arc]);
            if (cmp > 0 || cmp == 0 && holder < m) {
                return false;
            }
        }
        take(arc, a, b, c, m, up, down);
        return true;
    }


    /** A negative cycle's arcs into {@code cycle}, their number; 0 if none (see {@link CycleSearch}). */
    int negativeCycle(int[] cycle) {
        return search.negativeCycle(cycle);
    }

    /**
     * Whether applying the cycle's moves (once more) (the same members, the same counts) would
     * improve the flow: each arc's cost recomputed from the current counts. A member on two
     * arcs changes two different counts (every topic is on the cycle once), and the load node
     * is on it once, so the costs add up.
     */
    boolean stillPays(int[] cycle, int len) {
        long a = 0;
        long b = 0;
        long c = 0;
        for (int i = 0; i < len; i++) {
            int arc = cycle[i];
            int m = arcMember[arc];
            int up = arcUp[arc];
            int down = arcDown[arc];
            if (up < 0 && load[m] == 0 || down >= 0 && x[m][down] == 0) {
                return false;
            }
            a += shares.loadCost(m, up, down);
            b += shares.shareCost(m, up, down);
            c += shares.keptCost(m, up, down);
        }
        return Shares.compare(a, b, c, 0, 0, 0) < 0;
    }

    /** One unit around the cycle. */
    void apply(int[] cycle, int len) {
        for (int i = 0; i < len; i++) {
            int arc = cycle[i];
            shares.step(arcMember[arc], arcUp[arc], arcDown[arc]);
        }
    }
}
