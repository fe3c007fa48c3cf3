package io.github.kafkaassignors.broker;

import java.util.Arrays;
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
    /**
     * Member -> topic -> owned partitions, ascending ({@code null} where none). On a problem
     * read by size ({@link #bySize}) rows and entries are filled on demand: read them through
     * {@link #owned(int, int)}.
     */
    final int[][][] owned;
    /** Read by size: member -> topic -> owned count; null when {@link #owned} is complete. */
    private int[][] sizes;
    /** Read by size: one member's owned partitions of a topic, ascending. */
    private Reader reader;
    /** Read by size: topic -> partition -> held by a subscriber (the dealer's starting point). */
    boolean[][] held;
    /** Read by size: member -> claims beyond its subscribed topics (it cannot keep all). */
    boolean[] outside;

    /** Reads one member's owned partitions of one topic (ascending) when they are needed. */
    interface Reader {
        int[] read(int m, int t);
    }
    /** Member -> rack ({@code null} where none); {@code null} when no member has a rack. */
    String[] racks;
    /** (topic, partition) -> racks of its replicas; only read when {@link #racks} is set. */
    BiFunction<Integer, Integer, Set<String>> replicaRacks;

    Problem(int[] counts, int[][] subs, int[][][] owned) {
        this.counts = counts;
        this.subs = subs;
        this.owned = owned;
    }

    /**
     * A problem whose claims are known disjoint and in range, read by size: only the members
     * whose counts change have their partitions read (by {@link Dealer}).
     */
    static Problem bySize(int[] counts, int[][] subs, int[][] sizes, boolean[][] held,
            boolean[] outside, Reader reader) {
        Problem p = new Problem(counts, subs, new int[subs.length][][]);
        p.sizes = sizes;
        p.held = held;
        p.outside = outside;
        p.reader = reader;
        return p;
    }

    boolean isBySize() {
        return sizes != null;
    }

    /** Member m's owned partitions of topic t, ascending; null if none. */
    int[] owned(int m, int t) {
        if (sizes == null) {
            return owned[m][t];
        }
        if (sizes[m][t] == 0) {
            return null;
        }
        if (owned[m] == null) {
            owned[m] = new int[counts.length][];
        }
        if (owned[m][t] == null) {
            owned[m][t] = reader.read(m, t);
        }
        return owned[m][t];
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

    /** Whether any member owns a partition (false: a new group). */
    boolean ownsAny() {
        if (sizes != null) {
            for (int[] mine : sizes) {
                for (int n : mine) {
                    if (n > 0) {
                        return true;
                    }
                }
            }
            return false;
        }
        for (int[][] mine : owned) {
            for (int[] ps : mine) {
                if (ps != null) {
                    return true;
                }
            }
        }
        return false;
    }

    int ownedCount(int m, int t) {
        if (sizes != null) {
            return sizes[m][t];
        }
        int[] ps = owned[m][t];
        return ps == null ? 0 : ps.length;
    }

    /**
     * Resolve raw claims: a member's claim counts only for an existing partition of a topic it
     * subscribes to; of two members claiming one partition the one first in canonical order
     * keeps it (the broker's target assignment is disjoint, so this is a safety net).
     *
     * @param claims member -> topic -> claimed partitions (any order, may hold junk); resolved
     *     in place: it becomes {@link #owned}
     */
    static Problem resolve(int[] counts, int[][] subs, int[][][] claims) {
        boolean[][] taken = new boolean[counts.length][];
        for (int t = 0; t < counts.length; t++) {
            taken[t] = new boolean[counts[t]];
        }
        for (int m = 0; m < subs.length; m++) {
            int[][] mine = claims[m];
            int k = 0; // walks subs[m] (ascending) beside t
            for (int t = 0; t < mine.length; t++) {
                while (k < subs[m].length && subs[m][k] < t) {
                    k++;
                }
                int[] ps = mine[t];
                if (ps == null) {
                    continue;
                }
                mine[t] = k < subs[m].length && subs[m][k] == t ? valid(ps, taken[t]) : null;
            }
        }
        return new Problem(counts, subs, claims);
    }

    /**
     * {@link #resolve} for claims already only on topics each member subscribes to (what the
     * assignor reads): only those entries are looked at, not every topic of every member.
     */
    static Problem resolveSubscribed(int[] counts, int[][] subs, int[][][] claims) {
        boolean[][] taken = new boolean[counts.length][];
        for (int t = 0; t < counts.length; t++) {
            taken[t] = new boolean[counts[t]];
        }
        for (int m = 0; m < subs.length; m++) {
            int[][] mine = claims[m];
            for (int t : subs[m]) {
                if (mine[t] != null) {
                    mine[t] = valid(mine[t], taken[t]);
                }
            }
        }
        return new Problem(counts, subs, claims);
    }

    /** The claimed partitions that exist and nobody took yet, ascending; null if none. */
    private static int[] valid(int[] ps, boolean[] taken) {
        if (!isSorted(ps)) {
            Arrays.sort(ps);
        }
        int kept = 0;
        for (int p : ps) {
            if (p >= 0 && p < taken.length && !taken[p]) {
                taken[p] = true;
                ps[kept++] = p;
            }
        }
        return kept == 0 ? null : kept == ps.length ? ps : Arrays.copyOf(ps, kept);
    }

    static boolean isSorted(int[] ps) {
        for (int i = 1; i < ps.length; i++) {
            if (ps[i - 1] > ps[i]) {
                return false;
            }
        }
        return true;
    }
}
