package io.github.kafkaassignors.broker;

import java.util.Arrays;

/**
 * Ties among the optima of {@link WarmShares}: the three objectives leave them, and a sum of
 * squares does not decide how wide the widest topic is. Once {@link CycleCancelling} found no
 * negative cycle, its labels are potentials; {@link #narrow} applies cycles of zero reduced
 * cost (so of zero cost: checked again as applied) that take one partition of the widest topic
 * from a holder of its most to one two or more below (or to a holder of its fewest), kept only
 * when the worst spread, then the number of members at its ends, drops; a budget in counts
 * scanned ({@link WarmShares#NARROW_BUDGET} plus {@link WarmShares#NARROW_PER_COUNT} per
 * member-topic count) keeps it a small share of the solve.
 */
final class Narrowing {
    private final CycleCancelling cycles;
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
    // and the search's graph and labels, CycleCancelling's (read only here)
    private final int n;
    private final long[] arcA;
    private final long[] arcB;
    private final long[] arcC;
    private final int[] arcMember;
    private final int[] arcUp;
    private final int[] arcDown;
    private final int[] active;
    private final int[] activeTo;
    private final int[] outStart;
    private final long[] da;
    private final long[] db;
    private final long[] dc;
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

    Narrowing(Shares shares, CycleCancelling cycles) {
        this.cycles = cycles;
        this.shares = shares;
        this.members = shares.members;
        this.topics = shares.topics;
        this.subs = shares.subs;
        this.x = shares.x;
        this.load = shares.load;
        this.topicMembers = shares.topicMembers;
        this.topicSlots = shares.topicSlots;
        this.n = cycles.n;
        this.arcA = cycles.arcA;
        this.arcB = cycles.arcB;
        this.arcC = cycles.arcC;
        this.arcMember = cycles.arcMember;
        this.arcUp = cycles.arcUp;
        this.arcDown = cycles.arcDown;
        this.active = cycles.active;
        this.activeTo = cycles.activeTo;
        this.outStart = cycles.outStart;
        this.da = cycles.search.da;
        this.db = cycles.search.db;
        this.dc = cycles.search.dc;
    }

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
    int narrow(int[] changed) {
        if (spreadOf == null) {
            long cells = 0;
            for (int t = 0; t < topics; t++) {
                cells += topicMembers[t].length;
            }
            narrowBudget = WarmShares.NARROW_BUDGET + WarmShares.NARROW_PER_COUNT * cells;
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
        narrowWork += 2L * ms.length + cycles.activeCount + n;
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
            if (fromTop ? xt <= hi - 2 : xt == lo) {
                for (int k = -1; k < s.length; k++) {
                    if (k == slot || k >= 0 && xs[k] == 0) {
                        continue;
                    }
                    int u = k < 0 ? sinkNode : s[k];
                    if (via[u] != -1) {
                        continue;
                    }
                    if (tight(t, u, shares.loadCost(m, slot, k), shares.shareCost(m, slot, k),
                            shares.keptCost(m, slot, k))) {
                        via[u] = -2;
                        srcMember[u] = m;
                        srcUp[u] = slot;
                        srcDown[u] = k;
                        bfs[tail++] = u;
                    }
                }
            } else if (fromTop ? xt == hi : xt >= lo + 2) {
                for (int j = -1; j < s.length; j++) {
                    int v = j < 0 ? sinkNode : s[j];
                    if (j == slot || tgtMember[v] >= 0) {
                        continue;
                    }
                    if (tight(v, t, shares.loadCost(m, j, slot), shares.shareCost(m, j, slot),
                            shares.keptCost(m, j, slot))) {
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
        if (Shares.compare(deltaA, deltaB, deltaC, 0, 0, 0) > 0 || widest(spreadAfter) >= measure) {
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
        deltaA += shares.loadCost(m, up, down);
        deltaB += shares.shareCost(m, up, down);
        deltaC += shares.keptCost(m, up, down);
        shares.step(m, up, down);
    }
}
