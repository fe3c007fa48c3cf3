package io.github.kafkaassignors.broker;

import java.util.Arrays;
import java.util.PriorityQueue;

/**
 * How many partitions of each topic each member gets: the three objectives of the Python
 * core ({@code kafka_assignors/core/balanced_sticky.py}) as one convex min-cost flow, solved
 * exactly with lexicographic costs.
 *
 * <p>Network: source -> topic t (capacity = partitions of t to place) -> member m subscribed
 * to t (flow x[m][t]) -> sink (flow = member load L[m]). The cost of a flow is the vector
 * <ol>
 *   <li>sum over members of L[m]^2 (optimal total balance, also with unequal subscriptions);</li>
 *   <li>sum over members and topics of x[m][t]^2 (every topic as even as 1 allows);</li>
 *   <li>minus sum of min(x[m][t], owned[m][t]) (partitions kept: fewest moves),</li>
 * </ol>
 * compared in that order. Every cost is separable and convex in its flow, so the primal-dual
 * method ends at an optimum: Dijkstra on reduced costs (potentials keep them non-negative)
 * finds the shortest distance to the sink, then a maximum flow in the subgraph of arcs with
 * zero reduced cost (Dinic; every arc there carries one unit, the next unit of a convex cost
 * costs more) pushes every unit that shares that distance at once. Ties are broken by node
 * and arc order (topics in topic-id order, members in canonical order), so the result is
 * deterministic.
 */
final class ShareFlow {
    private static final long INF = Long.MAX_VALUE / 4;

    private final int[] supply;
    private final int topics;
    private final int members;
    private final int sink;
    // edges: one per (topic, subscribed member)
    private final int[] edgeTopic;
    private final int[] edgeMember;
    private final int[] edgeOwned;
    private final int[] edgeFlow;
    private final int[][] topicEdges;
    private final int[][] memberEdges;
    private final int[] sent;
    private final int[] load;
    // potentials and distances, one array per cost component
    private final long[][] pot = new long[3][];
    private final long[][] dist = new long[3][];
    private final boolean[] done;
    // the admissible graph of one phase: residual units per arc
    private final int[] resTM; // topic -> member along an edge
    private final int[] resMT; // member -> topic along an edge
    private final int[] resST; // source -> topic
    private final int[] resTS; // topic -> source (units sent in this phase)
    private final int[] resMK; // member -> sink
    private final int[] resKM; // sink -> member (units in this phase; never used on a path)
    private final int[] level;
    private final int[] arc;

    /**
     * @param supply partitions to place per topic
     * @param subs member -> subscribed topics (ascending)
     * @param owned member -> k -> partitions it owns of its k-th topic (worth keeping)
     */
    ShareFlow(int[] supply, int[][] subs, int[][] owned) {
        this.supply = supply;
        this.topics = supply.length;
        this.members = subs.length;
        this.sink = 1 + topics + members;
        int edges = 0;
        int[] perTopic = new int[topics];
        for (int[] s : subs) {
            edges += s.length;
            for (int t : s) {
                perTopic[t]++;
            }
        }
        edgeTopic = new int[edges];
        edgeMember = new int[edges];
        edgeOwned = new int[edges];
        edgeFlow = new int[edges];
        topicEdges = new int[topics][];
        for (int t = 0; t < topics; t++) {
            topicEdges[t] = new int[perTopic[t]];
        }
        memberEdges = new int[members][];
        int[] fill = new int[topics];
        int e = 0;
        for (int m = 0; m < members; m++) {
            int[] s = subs[m];
            memberEdges[m] = new int[s.length];
            for (int k = 0; k < s.length; k++, e++) {
                int t = s[k];
                edgeTopic[e] = t;
                edgeMember[e] = m;
                edgeOwned[e] = owned[m][k];
                memberEdges[m][k] = e;
                topicEdges[t][fill[t]++] = e;
            }
        }
        sent = new int[topics];
        load = new int[members];
        int nodes = sink + 1;
        for (int c = 0; c < 3; c++) {
            pot[c] = new long[nodes];
            dist[c] = new long[nodes];
        }
        done = new boolean[nodes];
        resTM = new int[edges];
        resMT = new int[edges];
        resST = new int[topics];
        resTS = new int[topics];
        resMK = new int[members];
        resKM = new int[members];
        level = new int[nodes];
        arc = new int[nodes];
    }

    /** The whole problem's counts: a member's owned partitions are all worth keeping. */
    static ShareFlow of(Problem problem) {
        int[][] owned = new int[problem.members()][];
        for (int m = 0; m < owned.length; m++) {
            int[] s = problem.subs[m];
            owned[m] = new int[s.length];
            for (int k = 0; k < s.length; k++) {
                owned[m][k] = problem.ownedCount(m, s[k]);
            }
        }
        return new ShareFlow(problem.counts, problem.subs, owned);
    }

    /** x[m][k]: partitions member m gets of its k-th subscribed topic. */
    int[][] solve() {
        long left = 0;
        for (int t = 0; t < topics; t++) {
            if (topicEdges[t].length > 0) {
                left += supply[t];
            }
        }
        while (left > 0) {
            shortestDistances();
            int pushed = pushAdmissible();
            if (pushed == 0) {
                throw new IllegalStateException("no admissible path with partitions left");
            }
            left -= pushed;
        }
        int[][] x = new int[members][];
        for (int m = 0; m < members; m++) {
            x[m] = new int[memberEdges[m].length];
            for (int k = 0; k < x[m].length; k++) {
                x[m][k] = edgeFlow[memberEdges[m][k]];
            }
        }
        return x;
    }

    private int topicNode(int t) {
        return 1 + t;
    }

    private int memberNode(int m) {
        return 1 + topics + m;
    }

    // ---- costs of the next unit on each arc (before potentials) ----

    /** Topic -> member: the next unit of x. */
    private long fwdB(int e) {
        return 2L * edgeFlow[e] + 1;
    }

    private long fwdC(int e) {
        return edgeFlow[e] < edgeOwned[e] ? -1 : 0;
    }

    /** Member -> topic: undo the last unit of x (only while x > 0). */
    private long bwdB(int e) {
        return -(2L * edgeFlow[e] - 1);
    }

    private long bwdC(int e) {
        return edgeFlow[e] - 1 < edgeOwned[e] ? 1 : 0;
    }

    private static final class Entry {
        final long a;
        final long b;
        final long c;
        final int node;

        Entry(long a, long b, long c, int node) {
            this.a = a;
            this.b = b;
            this.c = c;
            this.node = node;
        }
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

    /** Dijkstra from the source on reduced costs, then the potentials move by the distances. */
    private void shortestDistances() {
        int nodes = sink + 1;
        for (int c = 0; c < 3; c++) {
            Arrays.fill(dist[c], INF);
        }
        Arrays.fill(done, false);
        PriorityQueue<Entry> queue = new PriorityQueue<>((p, q) -> {
            int r = compare(p.a, p.b, p.c, q.a, q.b, q.c);
            return r != 0 ? r : Integer.compare(p.node, q.node);
        });
        for (int t = 0; t < topics; t++) {
            if (topicEdges[t].length > 0 && sent[t] < supply[t]) {
                int v = topicNode(t);
                relax(v, -pot[0][v], -pot[1][v], -pot[2][v], queue);
            }
        }
        while (!queue.isEmpty()) {
            Entry top = queue.poll();
            int u = top.node;
            if (done[u] || top.a != dist[0][u] || top.b != dist[1][u] || top.c != dist[2][u]) {
                continue;
            }
            done[u] = true;
            if (u == sink) {
                break;
            }
            if (u <= topics) {
                for (int e : topicEdges[u - 1]) {
                    relaxArc(u, memberNode(edgeMember[e]), 0, fwdB(e), fwdC(e), queue);
                }
            } else {
                int m = u - 1 - topics;
                for (int e : memberEdges[m]) {
                    if (edgeFlow[e] > 0) {
                        relaxArc(u, topicNode(edgeTopic[e]), 0, bwdB(e), bwdC(e), queue);
                    }
                }
                relaxArc(u, sink, 2L * load[m] + 1, 0, 0, queue);
            }
        }
        if (!done[sink]) {
            throw new IllegalStateException("no path to the sink with partitions left");
        }
        // nodes settled before the sink move by their distance, every other node by the
        // sink's: every reduced cost stays non-negative, every shortest path costs 0
        long sa = dist[0][sink];
        long sb = dist[1][sink];
        long sc = dist[2][sink];
        for (int v = 1; v < nodes; v++) {
            boolean settled = done[v];
            pot[0][v] += settled ? dist[0][v] : sa;
            pot[1][v] += settled ? dist[1][v] : sb;
            pot[2][v] += settled ? dist[2][v] : sc;
        }
    }

    private void relaxArc(int u, int v, long ca, long cb, long cc, PriorityQueue<Entry> queue) {
        if (done[v]) {
            return;
        }
        long a = dist[0][u] + ca + pot[0][u] - pot[0][v];
        long b = dist[1][u] + cb + pot[1][u] - pot[1][v];
        long c = dist[2][u] + cc + pot[2][u] - pot[2][v];
        relax(v, a, b, c, queue);
    }

    private void relax(int v, long a, long b, long c, PriorityQueue<Entry> queue) {
        if (compare(a, b, c, dist[0][v], dist[1][v], dist[2][v]) < 0) {
            dist[0][v] = a;
            dist[1][v] = b;
            dist[2][v] = c;
            queue.add(new Entry(a, b, c, v));
        }
    }

    private boolean zero(int u, int v, long ca, long cb, long cc) {
        return ca + pot[0][u] - pot[0][v] == 0 && cb + pot[1][u] - pot[1][v] == 0
                && cc + pot[2][u] - pot[2][v] == 0;
    }

    // ---- one phase: a maximum flow over the arcs of zero reduced cost ----

    private int pushAdmissible() {
        for (int t = 0; t < topics; t++) {
            int v = topicNode(t);
            boolean open = topicEdges[t].length > 0 && sent[t] < supply[t];
            resST[t] = open && zero(0, v, 0, 0, 0) ? supply[t] - sent[t] : 0;
            resTS[t] = 0;
        }
        for (int e = 0; e < edgeTopic.length; e++) {
            int t = topicNode(edgeTopic[e]);
            int m = memberNode(edgeMember[e]);
            resTM[e] = zero(t, m, 0, fwdB(e), fwdC(e)) ? 1 : 0;
            resMT[e] = edgeFlow[e] > 0 && zero(m, t, 0, bwdB(e), bwdC(e)) ? 1 : 0;
        }
        for (int m = 0; m < members; m++) {
            resMK[m] = zero(memberNode(m), sink, 2L * load[m] + 1, 0, 0) ? 1 : 0;
            resKM[m] = 0;
        }
        int pushed = 0;
        while (levels()) {
            Arrays.fill(arc, 0);
            int got;
            while ((got = pushPaths()) > 0) {
                pushed += got;
            }
        }
        // what the phase moved becomes flow
        for (int t = 0; t < topics; t++) {
            sent[t] += resTS[t];
        }
        for (int m = 0; m < members; m++) {
            load[m] += resKM[m];
        }
        return pushed;
    }

    /** How many arcs leave node u (numbered 0..n-1; see {@link #target} and {@link #residual}). */
    private int arcs(int u) {
        if (u == 0) {
            return topics;
        }
        if (u <= topics) {
            return 1 + topicEdges[u - 1].length;
        }
        if (u == sink) {
            return 0;
        }
        return memberEdges[u - 1 - topics].length + 1;
    }

    private int target(int u, int i) {
        if (u == 0) {
            return topicNode(i);
        }
        if (u <= topics) {
            return i == 0 ? 0 : memberNode(edgeMember[topicEdges[u - 1][i - 1]]);
        }
        int m = u - 1 - topics;
        return i < memberEdges[m].length ? topicNode(edgeTopic[memberEdges[m][i]]) : sink;
    }

    private int residual(int u, int i) {
        if (u == 0) {
            return resST[i];
        }
        if (u <= topics) {
            return i == 0 ? resTS[u - 1] : resTM[topicEdges[u - 1][i - 1]];
        }
        int m = u - 1 - topics;
        return i < memberEdges[m].length ? resMT[memberEdges[m][i]] : resMK[m];
    }

    /** One unit along arc i out of u: its residual shrinks, the reverse arc's grows. */
    private void push(int u, int i) {
        if (u == 0) {
            resST[i]--;
            resTS[i]++;
        } else if (u <= topics) {
            if (i == 0) {
                resTS[u - 1]--;
                resST[u - 1]++;
            } else {
                int e = topicEdges[u - 1][i - 1];
                resTM[e]--;
                resMT[e]++;
                edgeFlow[e]++;
            }
        } else {
            int m = u - 1 - topics;
            if (i < memberEdges[m].length) {
                int e = memberEdges[m][i];
                resMT[e]--;
                resTM[e]++;
                edgeFlow[e]--;
            } else {
                resMK[m]--;
                resKM[m]++;
            }
        }
    }

    /** Breadth-first levels from the source over arcs with residual units; true if the sink is reached. */
    private boolean levels() {
        Arrays.fill(level, -1);
        int[] queue = new int[sink + 1];
        int head = 0;
        int tail = 0;
        queue[tail++] = 0;
        level[0] = 0;
        while (head < tail) {
            int u = queue[head++];
            int n = arcs(u);
            for (int i = 0; i < n; i++) {
                if (residual(u, i) > 0) {
                    int v = target(u, i);
                    if (level[v] < 0) {
                        level[v] = level[u] + 1;
                        queue[tail++] = v;
                    }
                }
            }
        }
        return level[sink] >= 0;
    }

    /** Depth-first (iterative) along levels with current-arc pointers; units pushed. */
    private int pushPaths() {
        int[] path = new int[sink + 1];
        int depth = 0;
        path[0] = 0;
        int pushed = 0;
        while (true) {
            int u = path[depth];
            if (u == sink) {
                for (int d = 0; d < depth; d++) {
                    push(path[d], arc[path[d]]);
                }
                pushed++;
                depth = 0;
                continue;
            }
            int n = arcs(u);
            boolean advanced = false;
            while (arc[u] < n) {
                int i = arc[u];
                int v = target(u, i);
                if (residual(u, i) > 0 && level[v] == level[u] + 1) {
                    path[++depth] = v;
                    advanced = true;
                    break;
                }
                arc[u]++;
            }
            if (!advanced) {
                if (depth == 0) {
                    return pushed;
                }
                level[u] = -1; // a dead end in this level graph
                depth--;
                arc[path[depth]]++;
            }
        }
    }
}
