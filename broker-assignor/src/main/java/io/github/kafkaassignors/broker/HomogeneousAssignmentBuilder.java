package io.github.kafkaassignors.broker;

/**
 * Every member subscribes to the same topics. Then every optimum gives each member
 * floor(n_t/M) or one more partitions of every topic t (that per-topic bound and the total
 * bound, floor(P/M) or one more, hold together), so only the extra partitions are left to
 * place: r_t = n_t mod M of each topic, over members that count as owning what they own
 * beyond the floor. The same flow as the heterogeneous case places them ({@link ShareFlow}:
 * the objectives on the extras are the objectives on the whole, less constants), on
 * sum of r_t units instead of all partitions; a new group (nobody owns anything) needs no
 * flow at all. Single use: construct, call {@link #build()} once.
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
        int[][] owned = new int[members][];
        boolean fresh = true;
        for (int m = 0; m < members; m++) {
            int[] s = problem.subs[m];
            owned[m] = new int[s.length];
            for (int k = 0; k < s.length; k++) {
                owned[m][k] = Math.max(0, problem.ownedCount(m, s[k]) - base[s[k]]);
                fresh &= problem.ownedCount(m, s[k]) == 0;
            }
        }
        int[][] x = fresh
                ? dealExtras(extra, problem.subs)
                : new ShareFlow(extra, problem.subs, owned).solve();
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
}
