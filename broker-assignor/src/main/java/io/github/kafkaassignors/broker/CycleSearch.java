package io.github.kafkaassignors.broker;

import java.util.Arrays;

/**
 * The search for negative cycles of {@link CycleCancelling}: Bellman-Ford on its graph of
 * topics and the load node, with a queue that keeps its labels and predecessors between
 * cycles (after a cycle only what it changed is looked at again; once no cycle is left the
 * labels are potentials: {@link Narrowing} reads them). A cycle among the predecessors is
 * negative.
 */
final class CycleSearch {
    private final CycleCancelling graph;
    // the graph's arrays under their own names (the same arrays: the search sees its changes)
    private final int n;
    private final long[] arcA;
    private final long[] arcB;
    private final long[] arcC;
    private final int[] active;
    private final int[] activeFrom;
    private final int[] activeTo;
    private final int[] outStart;
    /** Bellman-Ford's labels (kept between searches), predecessors and marks. */
    final long[] da;
    final long[] db;
    final long[] dc;
    private final int[] pred;
    /** The tail of each predecessor arc (arc / n, kept: the walks for cycles divided a lot). */
    private final int[] predTail;
    private final int[] mark;
    /**
     * Whether the last look found no cycle among the predecessors, and the nodes whose
     * predecessor was set since: a new cycle passes one of them, so while nothing else
     * changed only they are walked from ({@link #newCycle}).
     */
    private boolean acyclic;
    private final int[] fresh;
    private final boolean[] isFresh;
    private int freshCount;
    private final int[] visit;
    private int visitStamp;
    /** The queue of {@link #queuedCycle}: nodes whose out-arcs may relax something. */
    private final int[] queue;
    private final boolean[] queued;
    private int queueHead;
    private int queueSize;
    private boolean requeueAll = true;

    CycleSearch(CycleCancelling graph) {
        this.graph = graph;
        this.n = graph.n;
        this.arcA = graph.arcA;
        this.arcB = graph.arcB;
        this.arcC = graph.arcC;
        this.active = graph.active;
        this.activeFrom = graph.activeFrom;
        this.activeTo = graph.activeTo;
        this.outStart = graph.outStart;
        da = new long[n];
        db = new long[n];
        dc = new long[n];
        pred = new int[n];
        predTail = new int[n];
        mark = new int[n];
        fresh = new int[n];
        isFresh = new boolean[n];
        visit = new int[n];
        queue = new int[n];
        queued = new boolean[n];
    }

    /** The graph was rebuilt: the next search starts from every node, its labels as they are. */
    void restart() {
        requeueAll = true;
    }

    /**
     * Bellman-Ford from every node at once (all distances 0); a cycle among the predecessor
     * arcs has negative cost. Fills {@code cycle} with its arcs; returns their number, 0 if none.
     */
    int negativeCycle(int[] cycle) {
        int len = queuedCycle(cycle);
        if (len >= 0) {
            return len;
        }
        // did not settle within its budget: Bellman-Ford from zero
        Arrays.fill(da, 0);
        Arrays.fill(db, 0);
        Arrays.fill(dc, 0);
        len = negativeCycle(cycle, n);
        acyclic = false;
        if (len < 0) {
            throw new IllegalStateException("Bellman-Ford did not settle");
        }
        requeueAll = true;
        return len;
    }

    /** An arc's cost or holder changed: its tail is looked at again, a predecessor it was is dropped. */
    void touched(int arc) {
        enqueue(arc / n);
        if (pred[arc % n] == arc) {
            pred[arc % n] = -1;
        }
    }

    private void enqueue(int u) {
        if (!queued[u]) {
            queued[u] = true;
            int at = queueHead + queueSize++;
            queue[at < n ? at : at - n] = u;
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
            clearFresh();
            acyclic = true;
            for (int u = 0; u < n; u++) {
                enqueue(u);
            }
        }
        long budget = 4L * n * (graph.activeCount + n);
        int check = Math.max(1, n / 8);
        int untilCheck = check;
        while (queueSize > 0) {
            int u = queue[queueHead];
            queueHead = queueHead + 1 < n ? queueHead + 1 : 0;
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
                if (relax(u, arc, v, a, b, c)) {
                    if (!isFresh[v]) {
                        isFresh[v] = true;
                        fresh[freshCount++] = v;
                    }
                    enqueue(v);
                }
            }
            budget -= outStart[u + 1] - outStart[u] + 1;
            if (--untilCheck == 0 || budget < 0) {
                untilCheck = check;
                int len = acyclic && !newCycle() ? 0 : predecessorCycle(cycle);
                acyclic = len == 0;
                clearFresh();
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

    /**
     * Whether a walk along the predecessors from a node whose predecessor was set since the
     * last look ends on a cycle (with none before, any new cycle passes such a node).
     */
    private boolean newCycle() {
        if (visitStamp > Integer.MAX_VALUE - 2 * n) {
            Arrays.fill(visit, 0);
            visitStamp = 0;
        }
        int walked = visitStamp; // visited by this look: above it
        for (int f = 0; f < freshCount; f++) {
            int stamp = ++visitStamp;
            int v = fresh[f];
            while (v >= 0 && visit[v] <= walked) {
                visit[v] = stamp;
                v = pred[v] < 0 ? -1 : predTail[v];
            }
            if (v >= 0 && visit[v] == stamp) {
                return true;
            }
        }
        return false;
    }

    private void clearFresh() {
        for (int f = 0; f < freshCount; f++) {
            isFresh[fresh[f]] = false;
        }
        freshCount = 0;
    }

    /** v's label becomes (a, b, c), reached by arc from u, if that is lower; whether it was. */
    private boolean relax(int u, int arc, int v, long a, long b, long c) {
        if (Shares.compare(a, b, c, da[v], db[v], dc[v]) >= 0) {
            return false;
        }
        da[v] = a;
        db[v] = b;
        dc[v] = c;
        pred[v] = arc;
        predTail[v] = u;
        return true;
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
                v = pred[v] < 0 ? -1 : predTail[v];
            }
            if (v >= 0 && mark[v] == stamp) {
                return collect(v, pred, cycle);
            }
            int w = s;
            while (w >= 0 && mark[w] == stamp) {
                mark[w] = -stamp;
                w = pred[w] < 0 ? -1 : predTail[w];
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
        for (int pass = 0; pass < passes; pass++) {
            boolean changed = false;
            for (int i = 0; i < graph.activeCount; i++) {
                int arc = active[i];
                int u = activeFrom[i];
                int v = activeTo[i];
                long a = da[u] + arcA[arc];
                long b = db[u] + arcB[arc];
                long c = dc[u] + arcC[arc];
                changed |= relax(u, arc, v, a, b, c);
            }
            if (!changed) {
                return 0;
            }
            int len = predecessorCycle(cycle); // marks are only valid within a pass
            if (len > 0) {
                return len;
            }
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
}
