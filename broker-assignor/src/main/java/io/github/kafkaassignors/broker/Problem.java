package io.github.kafkaassignors.broker;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * The group as the builders see it: members numbered 0..M-1 in canonical order, topics
 * numbered 0..T-1 in topic-id order, every claim already resolved (each partition owned by
 * at most one member, only on topics the member subscribes to, only partitions that exist).
 */
final class Problem {
    /** Partitions per topic (every topic here has at least one). */
    final int[] counts;
    /** Member -> subscribed topics (ascending topic numbers). */
    final int[][] subs;
    /** Member -> topic -> owned partitions, ascending ({@code null} where none). */
    final int[][][] owned;
    /** Member -> rack ({@code null} where none); {@code null} when no member has a rack. */
    String[] racks;
    /** (topic, partition) -> racks of its replicas; only read when {@link #racks} is set. */
    BiFunction<Integer, Integer, Set<String>> replicaRacks;

    Problem(int[] counts, int[][] subs, int[][][] owned) {
        this.counts = counts;
        this.subs = subs;
        this.owned = owned;
    }

    /** Racks for dealing: members' racks and where each partition's replicas are. */
    Problem withRacks(String[] racks, BiFunction<Integer, Integer, Set<String>> replicaRacks) {
        this.racks = racks;
        this.replicaRacks = replicaRacks;
        return this;
    }

    int members() {
        return subs.length;
    }

    int topics() {
        return counts.length;
    }

    int ownedCount(int m, int t) {
        int[] ps = owned[m][t];
        return ps == null ? 0 : ps.length;
    }

    /**
     * Resolve raw claims: a member's claim counts only for an existing partition of a topic it
     * subscribes to; of two members claiming one partition the one first in canonical order
     * keeps it (the broker's target assignment is disjoint, so this is a safety net).
     *
     * @param claims member -> topic -> claimed partitions (any order, may hold junk; the
     *     arrays are sorted and reused)
     */
    static Problem resolve(int[] counts, int[][] subs, List<List<int[]>> claims) {
        int members = subs.length;
        int[][][] owned = new int[members][counts.length][];
        boolean[][] taken = new boolean[counts.length][];
        for (int t = 0; t < counts.length; t++) {
            taken[t] = new boolean[counts[t]];
        }
        for (int m = 0; m < members; m++) {
            List<int[]> mine = claims.get(m);
            for (int t : subs[m]) {
                int[] ps = mine.get(t);
                if (ps == null || ps.length == 0) {
                    continue;
                }
                Arrays.sort(ps);
                int kept = 0;
                for (int p : ps) {
                    if (p >= 0 && p < counts[t] && !taken[t][p]) {
                        taken[t][p] = true;
                        ps[kept++] = p;
                    }
                }
                if (kept > 0) {
                    owned[m][t] = kept == ps.length ? ps : Arrays.copyOf(ps, kept);
                }
            }
        }
        return new Problem(counts, subs, owned);
    }
}
