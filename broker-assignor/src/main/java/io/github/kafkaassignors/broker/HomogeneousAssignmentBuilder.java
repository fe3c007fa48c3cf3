package io.github.kafkaassignors.broker;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Every member subscribes to the same topics. Then every optimum gives each member
 * floor(n_t/M) or one more partitions of every topic t (that per-topic bound and the total
 * bound, floor(P/M) or one more, hold together), so only the extra partitions are left to
 * place: r_t = n_t mod M of each topic, over members that count as owning what they own
 * beyond the floor. The same flow as the heterogeneous case places them ({@link ShareFlow}:
 * the objectives on the extras are the objectives on the whole, less constants), on
 * sum of r_t units instead of all partitions. A new group (nobody owns anything) and the
 * usual rebalance of a stable group ({@link #keepThenFill}) need no flow at all. Single use: construct, call {@link #build()} once.
 */
final class HomogeneousAssignmentBuilder {
    private final Problem problem;

    HomogeneousAssignmentBuilder(Problem problem) {
        this.problem = problem;
    }

    int[][][] build() {
        int members = problem.members();
        int topics = problem.topics();
        int[] base = new int[topics];
        int[] extra = new int[topics];
        for (int t = 0; t < topics; t++) {
            base[t] = problem.counts[t] / members;
            extra[t] = problem.counts[t] % members;
        }
        int[][] x;
        if (!problem.ownsAny()) {
            x = dealExtras(extra, problem.subs);
        } else {
            int[][] owned = new int[members][];
            for (int m = 0; m < members; m++) {
                int[] s = problem.subs[m];
                owned[m] = new int[s.length];
                for (int k = 0; k < s.length; k++) {
                    owned[m][k] = Math.max(0, problem.ownedCount(m, s[k]) - base[s[k]]);
                }
            }
            x = keepThenFill(extra, problem.subs, owned);
            if (x == null) {
                x = new ShareFlow(extra, problem.subs, owned).solve();
            }
        }
        for (int m = 0; m < members; m++) {
            int[] s = problem.subs[m];
            for (int k = 0; k < s.length; k++) {
                x[m][k] += base[s[k]];
            }
        }
        return Dealer.deal(problem, x);
    }

    /**
     * Nobody owns anything (a new group): nothing to keep, so the extras go round the members
     * in canonical order, topic after topic. Each topic's (fewer than M) extras land on
     * distinct members and every member gets the same number of extras or one more: optimal.
     */
    private static int[][] dealExtras(int[] extra, int[][] subs) {
        int members = subs.length;
        int[][] x = new int[members][];
        for (int m = 0; m < members; m++) {
            x[m] = new int[subs[m].length];
        }
        int next = 0;
        int[] topics = subs[0]; // everybody's (identical) topics
        for (int k = 0; k < topics.length; k++) {
            for (int i = 0; i < extra[topics[k]]; i++) {
                x[next][k] = 1;
                next = (next + 1) % members;
            }
        }
        return x;
    }

    /**
     * The usual rebalance of a stable group (a member leaves or crashes, partitions are
     * added): every member keeps an extra of each topic it owns beyond the floor, if that fits
     * the shape (at most r_t extras of topic t, at most q+1 extras per member and at most
     * R mod M members with q+1, where q = R / M). Keeping all of them is the most any
     * assignment keeps, so what remains is to complete the shape: topic by topic (the most
     * wanted first), to members that do not hold an extra of that topic yet, those below q
     * first (the most room first), then those at q while places with q+1 are left (ties:
     * canonical order). Returns null when the kept extras do not fit or the greedy
     * completion gets stuck; the flow then decides.
     */
    static int[][] keepThenFill(int[] extra, int[][] subs, int[][] owned) {
        int members = subs.length;
        int[] topics = subs[0]; // everybody's (identical) topics
        int count = topics.length;
        long total = 0;
        int[] need = new int[count];
        for (int k = 0; k < count; k++) {
            need[k] = extra[topics[k]];
            total += need[k];
        }
        int quota = (int) (total / members);
        int bonus = (int) (total % members);
        int[][] x = new int[members][count];
        int[] deg = new int[members];
        int full = 0;
        for (int m = 0; m < members; m++) {
            for (int k = 0; k < count; k++) {
                if (owned[m][k] > 0) {
                    x[m][k] = 1;
                    deg[m]++;
                    need[k]--;
                }
            }
            if (deg[m] > quota + 1) {
                return null;
            }
            if (deg[m] == quota + 1) {
                full++;
            }
        }
        for (int k = 0; k < count; k++) {
            if (need[k] < 0) {
                return null;
            }
        }
        if (full > bonus) {
            return null;
        }
        // topic by topic (the most wanted first): members below q first (the most room
        // first), then members at q while q+1 places are left; ties in canonical order
        int bonusLeft = bonus - full;
        List<Integer> order = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            order.add(k);
        }
        order.sort(Comparator.comparingInt((Integer k) -> -need[k]).thenComparingInt(k -> k));
        List<Integer> room = new ArrayList<>(members);
        for (int k : order) {
            if (need[k] == 0) {
                continue;
            }
            room.clear();
            for (int m = 0; m < members; m++) {
                if (x[m][k] == 0 && deg[m] <= quota) {
                    room.add(m);
                }
            }
            room.sort(Comparator.comparingInt((Integer m) -> deg[m]).thenComparingInt(m -> m));
            int got = 0;
            for (int i = 0; i < room.size() && got < need[k]; i++) {
                int m = room.get(i);
                if (deg[m] == quota) {
                    if (bonusLeft == 0) {
                        break; // the rest of the list is at q too
                    }
                    bonusLeft--;
                }
                x[m][k] = 1;
                deg[m]++;
                got++;
            }
            if (got < need[k]) {
                return null;
            }
        }
        for (int m = 0; m < members; m++) {
            if (deg[m] < quota) {
                return null;
            }
        }
        return x;
    }
}
