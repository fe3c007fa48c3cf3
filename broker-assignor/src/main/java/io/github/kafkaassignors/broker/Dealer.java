package io.github.kafkaassignors.broker;

import java.util.Arrays;

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
     * @param x member -> k -> partitions of its k-th subscribed topic (from {@link ShareFlow});
     *     used up (what is left in it means nothing)
     * @return member -> topic -> partitions (ascending; {@code null} where none); on a problem
     *     read by size, a member that keeps exactly what it owns has a {@code null} row
     */
    static int[][][] deal(Problem problem, int[][] x) {
        if (problem.isBySize()) {
            return dealChanged(problem, x);
        }
        int members = problem.members();
        int topics = problem.topics();
        int[][][] out = new int[members][topics][];
        boolean[][] kept = new boolean[topics][];
        for (int t = 0; t < topics; t++) {
            kept[t] = new boolean[problem.counts[t]];
        }
        // each member keeps its lowest owned partitions; x[m][k] becomes what it still lacks
        for (int m = 0; m < members; m++) {
            int[] subs = problem.subs[m];
            for (int k = 0; k < subs.length; k++) {
                if (x[m][k] == 0) {
                    continue;
                }
                int t = subs[k];
                int[] mine = new int[x[m][k]];
                out[m][t] = mine;
                int[] owned = problem.owned[m][t];
                int keep = owned == null ? 0 : Math.min(owned.length, mine.length);
                for (int i = 0; i < keep; i++) {
                    mine[i] = owned[i];
                    kept[t][owned[i]] = true;
                }
                x[m][k] -= keep;
            }
        }
        if (problem.racks != null) {
            dealLocal(problem, out, x, kept);
        }
        dealFree(problem, out, x, kept);
        return out;
    }

    /**
     * {@link #deal} on a problem read by size: only members whose counts change are read (a
     * member keeping exactly what it owns, nothing beyond its subscriptions, gets a null row).
     * The same partitions: kept starts as everything subscribers hold, less what the members
     * giving some up do not keep.
     */
    private static int[][][] dealChanged(Problem problem, int[][] x) {
        int members = problem.members();
        int[][][] out = new int[members][][];
        boolean[][] kept = problem.held; // used up
        for (int m = 0; m < members; m++) {
            int[] subs = problem.subs[m];
            boolean same = !problem.outside[m];
            for (int k = 0; k < subs.length && same; k++) {
                same = x[m][k] == problem.ownedCount(m, subs[k]);
            }
            if (same) {
                continue;
            }
            out[m] = new int[problem.topics()][];
            for (int k = 0; k < subs.length; k++) {
                int t = subs[k];
                int owns = problem.ownedCount(m, t);
                int keep = Math.min(owns, x[m][k]);
                int[] owned = problem.owned(m, t);
                for (int i = keep; i < owns; i++) {
                    kept[t][owned[i]] = false;
                }
                if (x[m][k] > 0) {
                    out[m][t] = new int[x[m][k]];
                    if (keep > 0) {
                        System.arraycopy(owned, 0, out[m][t], 0, keep);
                    }
                    x[m][k] -= keep;
                }
            }
        }
        dealFree(problem, out, x, kept);
        return out;
    }

    /** The partitions nobody keeps, lowest first, to members still short, in canonical order. */
    private static void dealFree(Problem problem, int[][][] out, int[][] x, boolean[][] kept) {
        int[] next = new int[problem.topics()]; // the lowest partition of each topic not yet looked at
        for (int m = 0; m < problem.members(); m++) {
            if (out[m] == null) {
                continue;
            }
            int[] subs = problem.subs[m];
            for (int k = 0; k < subs.length; k++) {
                if (x[m][k] == 0) {
                    continue;
                }
                int t = subs[k];
                int[] mine = out[m][t];
                for (int i = mine.length - x[m][k]; i < mine.length; i++) {
                    while (kept[t][next[t]]) {
                        next[t]++;
                    }
                    kept[t][next[t]] = true;
                    mine[i] = next[t];
                }
                x[m][k] = 0;
                if (!Problem.isSorted(mine)) {
                    Arrays.sort(mine);
                }
            }
        }
    }

    /** Members with a rack take free partitions with a replica there, lowest number first. */
    private static void dealLocal(Problem problem, int[][][] out, int[][] x, boolean[][] kept) {
        for (int m = 0; m < problem.members(); m++) {
            String rack = problem.racks[m];
            if (rack == null) {
                continue;
            }
            int[] subs = problem.subs[m];
            for (int k = 0; k < subs.length; k++) {
                int t = subs[k];
                int[] mine = out[m][t];
                for (int p = 0; p < problem.counts[t] && x[m][k] > 0; p++) {
                    if (!kept[t][p] && problem.replicaRacks.apply(t, p).contains(rack)) {
                        kept[t][p] = true;
                        mine[mine.length - x[m][k]] = p;
                        x[m][k]--;
                    }
                }
            }
        }
    }
}
