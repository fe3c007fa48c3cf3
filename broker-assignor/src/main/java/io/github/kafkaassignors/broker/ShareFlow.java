package io.github.kafkaassignors.broker;

import java.util.Arrays;
import java.util.PriorityQueue;

/**
 * How many partitions of each topic each member gets: the three objectives of the Python
 * core ({@code kafka_assignors/core/balanced_sticky.py}) as one convex min-cost flow, solved
 * exactly with lexicographic costs.
 *
 * <p>Network: source -> topic t (capacity = partitions of t) -> member m subscribed to t
 * (flow x[m][t]) -> sink (flow = member load L[m]). The cost of a flow is the vector
 * <ol>
 *   <li>sum over members of L[m]^2 (optimal total balance, also with unequal subscriptions);</li>
 *   <li>sum over members and topics of x[m][t]^2 (every topic as even as 1 allows);</li>
 *   <li>minus sum of min(x[m][t], owned[m][t]) (partitions kept: fewest moves),</li>
 * </ol>
 * compared in that order. Every cost is separable and convex in its flow, so the successive
 * shortest paths method with one unit per path (Dijkstra on reduced costs, potentials kept
 * per component) ends at an optimum. Ties between paths are broken by node number (topics in
 * topic-id order, then members in canonical order), so the result is deterministic.
 */
final class ShareFlow {
    private final Problem problem;
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
    private final int[] prevEdge; // edge used to reach a node (-1: from source / none)
    private final boolean[] done;

    ShareFlow(Problem problem) {
        this.problem = problem;
        this.topics = problem.topics();
        this.members = problem.members();
        this.sink = 1 + topics + members;
        int edges = 0;
        int[] perTopic = new int[topics];
        for (int[] s : problem.subs) {
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
            int[] s = problem.subs[m];
            memberEdges[m] = new int[s.length];
            for (int k = 0; k < s.length; k++, e++) {
                int t = s[k];
                edgeTopic[e] = t;
                edgeMember[e] = m;
                edgeOwned[e] = problem.ownedCount(m, t);
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
        prevEdge = new int[nodes];
        done = new boolean[nodes];
    }

    /** x[m][k]: partitions member m gets of its k-th subscribed topic. */
    int[][] solve() {
        long total = 0;
        for (int t = 0; t < topics; t++) {
            if (topicEdges[t].length > 0) {
                total += problem.counts[t];
            }
        }
        for (long unit = 0; unit < total; unit++) {
            augment();
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

    private static final long INF = Long.MAX_VALUE / 4;

    /** One shortest path from the source to the sink, one unit along it. */
    private void augment() {
        int nodes = sink + 1;
        for (int c = 0; c < 3; c++) {
            Arrays.fill(dist[c], INF);
        }
        Arrays.fill(prevEdge, -1);
        Arrays.fill(done, false);
        PriorityQueue<Entry> queue = new PriorityQueue<>((p, q) -> {
            int r = compare(p.a, p.b, p.c, q.a, q.b, q.c);
            return r != 0 ? r : Integer.compare(p.node, q.node);
        });
        // the source's arcs: to every topic with partitions left
        for (int t = 0; t < topics; t++) {
            if (topicEdges[t].length > 0 && sent[t] < problem.counts[t]) {
                int v = topicNode(t);
                relax(v, -pot[0][v], -pot[1][v], -pot[2][v], -1, queue);
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
                int t = u - 1;
                for (int e : topicEdges[t]) {
                    int x = edgeFlow[e];
                    int v = memberNode(edgeMember[e]);
                    // forward t -> m: (0, 2x+1, -1 while still within what m owns)
                    relaxArc(u, v, 0, 2L * x + 1, x < edgeOwned[e] ? -1 : 0, e, queue);
                }
            } else {
                int m = u - 1 - topics;
                for (int e : memberEdges[m]) {
                    int x = edgeFlow[e];
                    if (x > 0) {
                        int v = topicNode(edgeTopic[e]);
                        // backward m -> t: undo the last unit of x
                        relaxArc(u, v, 0, -(2L * x - 1), x - 1 < edgeOwned[e] ? 1 : 0,
                                -2 - e, queue);
                    }
                }
                int l = load[m];
                relaxArc(u, sink, 2L * l + 1, 0, 0, -2 - edges() - m, queue);
            }
        }
        if (!done[sink]) {
            throw new IllegalStateException("no path to the sink with partitions left");
        }
        // potentials: nodes settled before the sink by their distance, every other node by
        // the sink's (keeps every reduced cost non-negative although the search stopped there)
        long sa = dist[0][sink];
        long sb = dist[1][sink];
        long sc = dist[2][sink];
        for (int v = 1; v < nodes; v++) {
            boolean settled = done[v];
            pot[0][v] += settled ? dist[0][v] : sa;
            pot[1][v] += settled ? dist[1][v] : sb;
            pot[2][v] += settled ? dist[2][v] : sc;
        }
        // walk back from the sink and push one unit
        int v = sink;
        while (true) {
            int code = prevEdge[v];
            if (code == -1) {
                sent[v - 1]++; // v is a topic reached from the source
                break;
            }
            int id = -2 - code;
            if (id >= edges()) {
                int m = id - edges();
                load[m]++;
                v = memberNode(m);
            } else if (code >= 0) {
                edgeFlow[code]++;
                v = topicNode(edgeTopic[code]);
            } else {
                edgeFlow[id]--;
                v = memberNode(edgeMember[id]);
            }
        }
    }

    private int edges() {
        return edgeTopic.length;
    }

    private void relaxArc(int u, int v, long ca, long cb, long cc, int code,
            PriorityQueue<Entry> queue) {
        if (done[v]) {
            return;
        }
        long a = dist[0][u] + ca + pot[0][u] - pot[0][v];
        long b = dist[1][u] + cb + pot[1][u] - pot[1][v];
        long c = dist[2][u] + cc + pot[2][u] - pot[2][v];
        relax(v, a, b, c, code, queue);
    }

    private void relax(int v, long a, long b, long c, int code, PriorityQueue<Entry> queue) {
        if (compare(a, b, c, dist[0][v], dist[1][v], dist[2][v]) < 0) {
            dist[0][v] = a;
            dist[1][v] = b;
            dist[2][v] = c;
            prevEdge[v] = code;
            queue.add(new Entry(a, b, c, v));
        }
    }
}
