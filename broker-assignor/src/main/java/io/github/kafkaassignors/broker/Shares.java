package io.github.kafkaassignors.broker;

/**
 * The counts a solution is made of, and the objectives, stated once. x[m][k] is how many
 * partitions member m gets of its k-th subscribed topic ({@code subs[m][k]}); a solution is
 * better than another when, in this order:
 * <ol>
 *   <li>its sum over members of load squared is smaller (total balance);</li>
 *   <li>then its sum over (member, topic) of x squared is smaller (each topic even);</li>
 *   <li>then it keeps more of what members own: sum of min(x, owned) larger (fewest moves).</li>
 * </ol>
 * One more unit of a count v changes a sum of squares by {@link #up}(v), one fewer by
 * {@link #down}(v); costs are compared as (load, share, kept) triples by {@link #compare}.
 * The passes over these counts ({@link WarmStart}, {@link CycleCancelling}, {@link Narrowing})
 * share one instance: each changes x and load in place.
 */
final class Shares {
    final Problem problem;
    final int members;
    final int topics;
    final int[][] subs;
    /** own[m][k]: what member m owns of its k-th topic (the claims, resolved). */
    final int[][] own;
    /** Starts at {@code own} (each member keeps what it owns), with the loads that make. */
    final int[][] x;
    final int[] load;
    /** Partitions of each topic no subscriber owns. */
    final int[] unowned;
    /** Topic -> members subscribed to it, and where the topic sits in each one's list. */
    final int[][] topicMembers;
    final int[][] topicSlots;

    /** {@link #pairLists}, once {@link #pairs} made them (null: too many). */
    private int[] pairs;
    private boolean pairsMade;

    Shares(Problem problem) {
        this.problem = problem;
        this.members = problem.members();
        this.topics = problem.topics();
        this.subs = problem.subs;
        own = new int[members][];
        x = new int[members][];
        load = new int[members];
        unowned = problem.counts.clone();
        int[] perTopic = new int[topics];
        for (int m = 0; m < members; m++) {
            int[] s = subs[m];
            int[] mine = new int[s.length];
            for (int k = 0; k < s.length; k++) {
                mine[k] = problem.ownedCount(m, s[k]);
                load[m] += mine[k];
                unowned[s[k]] -= mine[k];
                perTopic[s[k]]++;
            }
            own[m] = mine;
            x[m] = mine.clone();
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
    }

    /** What one more unit costs a sum of squares at count v: (v+1)^2 - v^2. */
    static long up(long v) {
        return 2 * v + 1;
    }

    /** What one unit fewer costs a sum of squares at count v (negative): (v-1)^2 - v^2. */
    static long down(long v) {
        return 1 - 2 * v;
    }

    /** What one more unit at count v costs the kept partitions: -1 while v is below what is owned. */
    static int keptUp(int v, int owned) {
        return v < owned ? -1 : 0;
    }

    /** What one unit fewer at count v costs the kept partitions: 1 when it gives up an owned one. */
    static int keptDown(int v, int owned) {
        return v - 1 < owned ? 1 : 0;
    }

    /** The objectives' order on (load, share, kept) cost triples. */
    static int compare(long a1, long b1, long c1, long a2, long b2, long c2) {
        if (a1 != a2) {
            return Long.compare(a1, a2);
        }
        if (b1 != b2) {
            return Long.compare(b1, b2);
        }
        return Long.compare(c1, c2);
    }

    /**
     * The cost of one member's step, as the three objectives count it: member m takes one
     * more of its slot {@code up} and gives up one of its slot {@code down}; -1 for up: its
     * load shrinks instead; -1 for down: its load grows. Every search of the general path
     * weighs its moves with these three, and {@link #step} applies one.
     */
    long loadCost(int m, int up, int down) {
        return up < 0 ? down(load[m]) : down < 0 ? up(load[m]) : 0;
    }

    long shareCost(int m, int up, int down) {
        int[] xs = x[m];
        return (up < 0 ? 0 : up(xs[up])) + (down < 0 ? 0 : down(xs[down]));
    }

    long keptCost(int m, int up, int down) {
        int[] xs = x[m];
        int[] os = own[m];
        return (up < 0 ? 0 : keptUp(xs[up], os[up])) + (down < 0 ? 0 : keptDown(xs[down], os[down]));
    }

    /** Applies the step {@link #loadCost} and the others weigh. */
    void step(int m, int up, int down) {
        if (up >= 0) {
            x[m][up]++;
        } else {
            load[m]--;
        }
        if (down >= 0) {
            x[m][down]--;
        } else {
            load[m]++;
        }
    }

    /** One partition of a topic from one member to another (their slots of it). */
    void move(int from, int fromSlot, int to, int toSlot) {
        x[from][fromSlot]--;
        load[from]--;
        x[to][toSlot]++;
        load[to]++;
    }

    /**
     * Whether no solution does better on any objective, from lower bounds alone: every load
     * within one of the group's average, every topic within one of its subscribers' average,
     * and no more partitions moved than those bounds force. With loads q or q + 1 (b members
     * at q + 1), a member owning o keeps at most q + 1, and only b of them that many: at least
     * (sum of max(0, o - q)) - min(b, members owning more than q) partitions move; the same
     * holds per topic, and the topics' moves add up. Where nothing has to move (a leave, new
     * partitions) that is everything owned kept; after a join it certifies the few moves that
     * give the new member its share.
     */
    boolean meetsLowerBounds() {
        return meetsBalanceBounds() && movesMeetBound();
    }

    /** Every load within one of the group's average, every share within one of its topic's. */
    boolean meetsBalanceBounds() {
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
        return true;
    }

    /**
     * With the loads and shares at their bounds: no more moves than those bounds force. Four
     * bounds, each a count of partitions that must change owner in any such assignment:
     * members owning more than the load bound allows (load), the same per topic (topic), and
     * members owning less than the least load (or a topic's least share) than the free
     * partitions of their topics can make up (fill, topic fill): what they lack beyond those
     * free partitions has to come from someone else.
     */
    private boolean movesMeetBound() {
        long total = 0;
        for (int t = 0; t < topics; t++) {
            if (topicMembers[t].length > 0) {
                total += problem.counts[t];
            }
        }
        long q = total / members;
        long[] free = new long[topics];
        for (int t = 0; t < topics; t++) {
            free[t] = problem.counts[t];
        }
        long moves = 0;
        long[] owned = new long[members];
        long loadBound = 0;
        long above = 0;
        for (int m = 0; m < members; m++) {
            for (int k = 0; k < own[m].length; k++) {
                owned[m] += own[m][k];
                free[subs[m][k]] -= own[m][k];
                moves += Math.max(0, own[m][k] - x[m][k]);
            }
            loadBound += Math.max(0, owned[m] - q);
            above += owned[m] > q ? 1 : 0;
        }
        loadBound -= Math.min(total - q * members, above);
        long fillBound = 0;
        for (int m = 0; m < members; m++) {
            long lack = q - owned[m];
            for (int k = 0; k < subs[m].length && lack > 0; k++) {
                lack -= free[subs[m][k]];
            }
            fillBound += Math.max(0, lack);
        }
        long topicBound = 0;
        for (int t = 0; t < topics; t++) {
            int size = topicMembers[t].length;
            if (size == 0) {
                continue;
            }
            int qt = problem.counts[t] / size;
            long over = 0;
            long lack = 0;
            int aboveT = 0;
            for (int i = 0; i < size; i++) {
                int o = own[topicMembers[t][i]][topicSlots[t][i]];
                over += Math.max(0, o - qt);
                lack += Math.max(0, qt - o);
                aboveT += o > qt ? 1 : 0;
            }
            // in one topic both count the same moves: the larger holds
            topicBound += Math.max(over - Math.min(problem.counts[t] - (long) qt * size, aboveT),
                    lack - free[t]);
        }
        return moves <= Math.max(Math.max(loadBound, fillBound), topicBound);
    }

    /**
     * {@link #pairLists}, made on first use: a solve that finds nothing to swap and no cycle
     * to cancel (most rebalances of a stable group) never needs them.
     */
    int[] pairs() {
        if (!pairsMade) {
            pairs = pairLists();
            pairsMade = true;
        }
        return pairs;
    }

    /** Whether {@link #pairs} made the lists already (they may be null: too many). */
    boolean pairsMade() {
        return pairsMade;
    }

    /** Whether {@link #pairLists} keeps lists: no more than {@link #MAX_PAIRS} pairs of topics and of members' topics. */
    boolean pairsFit() {
        long total = 0;
        for (int m = 0; m < members; m++) {
            total += (long) subs[m].length * (subs[m].length - 1) / 2;
        }
        return total <= MAX_PAIRS && (long) topics * topics <= MAX_PAIRS;
    }

    /** Pair lists are kept only while this small (members with many topics: too many pairs). */
    private static final int MAX_PAIRS = 1 << 18;

    /**
     * For every two topics t < u, the members subscribed to both, as (member, slot of t,
     * slot of u) triples grouped by pair: {@code [offsets over pairs..., triples...]}; null
     * when there are more than {@link #MAX_PAIRS} of them.
     */
    int[] pairLists() {
        if (!pairsFit()) {
            return null;
        }
        long total = 0;
        for (int m = 0; m < members; m++) {
            total += (long) subs[m].length * (subs[m].length - 1) / 2;
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
}
