package io.github.kafkaassignors.broker;

/**
 * Turns counts into partitions: each member keeps the lowest-numbered of its owned partitions
 * up to its count of the topic, and the partitions nobody keeps go, lowest number first, to
 * the members still short of their count, in canonical order. So a member moves exactly
 * max(0, owned - count) partitions of each topic, and an assignment fed back in comes out
 * unchanged. With racks (some member has one), a member first takes free partitions with a
 * replica in its rack, then any: locality never changes a count, so the guarantees hold; it
 * is best effort (the counts are not chosen for locality).
 */
final class Dealer {
    private Dealer() {
    }

    /**
     * @param x member -> k -> partitions of its k-th subscribed topic (from {@link ShareFlow})
     * @return member -> topic -> partitions (ascending; {@code null} where none)
     */
    static int[][][] deal(Problem problem, int[][] x) {
        int members = problem.members();
        int topics = problem.topics();
        int[][][] out = new int[members][topics][];
        int[][] got = new int[members][topics];
        int[][] want = new int[members][topics];
        boolean[][] kept = new boolean[topics][];
        for (int t = 0; t < topics; t++) {
            kept[t] = new boolean[problem.counts[t]];
        }
        for (int m = 0; m < members; m++) {
            int[] subs = problem.subs[m];
            for (int k = 0; k < subs.length; k++) {
                int t = subs[k];
                want[m][t] = x[m][k];
                if (x[m][k] == 0) {
                    continue;
                }
                out[m][t] = new int[x[m][k]];
                int[] owned = problem.owned[m][t];
                if (owned == null) {
                    continue;
                }
                int keep = Math.min(owned.length, x[m][k]);
                for (int i = 0; i < keep; i++) {
                    out[m][t][i] = owned[i];
                    kept[t][owned[i]] = true;
                }
                got[m][t] = keep;
            }
        }
        if (problem.racks != null) {
            dealLocal(problem, out, got, want, kept);
        }
        int[] next = new int[topics]; // the lowest partition of each topic not yet looked at
        for (int m = 0; m < members; m++) {
            for (int t : problem.subs[m]) {
                int[] mine = out[m][t];
                while (got[m][t] < want[m][t]) {
                    while (kept[t][next[t]]) {
                        next[t]++;
                    }
                    kept[t][next[t]] = true;
                    mine[got[m][t]++] = next[t];
                }
                if (mine != null) {
                    java.util.Arrays.sort(mine);
                }
            }
        }
        return out;
    }

    /** Members with a rack take free partitions with a replica there, lowest number first. */
    private static void dealLocal(Problem problem, int[][][] out, int[][] got, int[][] want,
            boolean[][] kept) {
        for (int m = 0; m < problem.members(); m++) {
            String rack = problem.racks[m];
            if (rack == null) {
                continue;
            }
            for (int t : problem.subs[m]) {
                for (int p = 0; p < problem.counts[t] && got[m][t] < want[m][t]; p++) {
                    if (!kept[t][p] && problem.replicaRacks.apply(t, p).contains(rack)) {
                        kept[t][p] = true;
                        out[m][t][got[m][t]++] = p;
                    }
                }
            }
        }
    }
}
