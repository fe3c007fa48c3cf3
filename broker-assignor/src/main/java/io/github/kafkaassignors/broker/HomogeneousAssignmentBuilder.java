package io.github.kafkaassignors.broker;

/**
 * Every member subscribes to the same topics. Then every optimum gives each member
 * floor(n_t/M) or one more partitions of every topic t (that per-topic bound and the total
 * bound, floor(P/M) or one more, hold together), so only the extra partitions are left to
 * place: r_t = n_t mod M of each topic, over members that count as owning what they own
 * beyond the floor. The same flow as the heterogeneous case places them ({@link ShareFlow}:
 * the objectives on the extras are the objectives on the whole, less constants), on
 * sum of r_t units instead of all partitions. Single use: construct, call {@link #build()} once.
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
        for (int m = 0; m < members; m++) {
            int[] s = problem.subs[m];
            owned[m] = new int[s.length];
            for (int k = 0; k < s.length; k++) {
                owned[m][k] = Math.max(0, problem.ownedCount(m, s[k]) - base[s[k]]);
            }
        }
        int[][] x = new ShareFlow(extra, problem.subs, owned).solve();
        for (int m = 0; m < members; m++) {
            int[] s = problem.subs[m];
            for (int k = 0; k < s.length; k++) {
                x[m][k] += base[s[k]];
            }
        }
        return Dealer.deal(problem, x);
    }
}
