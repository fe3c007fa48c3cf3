package io.github.kafkaassignors.broker;

/**
 * The counts {@link ShareFlow} computes (partitions of each topic per member: the same three
 * objectives, {@link Shares}, the same optimum), reached from a warm start instead of from
 * nothing, in up to three passes over one {@link Shares}:
 * <ol>
 *   <li>{@link WarmStart}: members keep what they own, the rest is dealt greedily, then
 *       {@link Levelling} applies cheap improving moves; when that meets the lower bounds (every load within one of the group's average, every
 *       topic within one of its subscribers' average, everything owned kept) it is optimal
 *       and nothing else runs (most rebalances end here);</li>
 *   <li>{@link CycleCancelling}: the general optimum, negative cycles on a graph of topics;</li>
 *   <li>{@link Narrowing}: among the optima, zero-cost cycles that narrow the widest topic.</li>
 * </ol>
 * Ties between members go to the first in canonical order, so the result is deterministic;
 * it may break a tie differently from {@link ShareFlow}, never on an objective.
 */
final class WarmShares {
    /** Cancelled cycles before handing over to {@link ShareFlow} (a count, not a time). */
    static final int MAX_CYCLES = 20_000;
    /** Zero-cost cycles {@link Narrowing} may apply (a count, not a time). */
    static final int MAX_NARROWINGS = 256;
    /** What {@link Narrowing} may scan in all, over (member, topic) counts: this many plus
     *  {@link #NARROW_PER_COUNT} per count (a count, not a time: it only breaks ties, and one
     *  cycle moves one partition, so a large group would spend more on it than on the rest). */
    static final long NARROW_BUDGET = 1 << 14;
    static final long NARROW_PER_COUNT = 4;

    private final Shares shares;
    /** How {@link #run} finished (one of {@link Path}'s names). */
    private String outcome = Path.WARM_BOUNDS;

    private WarmShares(Problem problem) {
        shares = new Shares(problem);
    }

    /** x[m][k]: partitions member m gets of its k-th subscribed topic; exact. */
    static int[][] solve(Problem problem) {
        return solve(problem, null);
    }

    static int[][] solve(Problem problem, Path.Sink path) {
        WarmShares warm = new WarmShares(problem);
        int[][] x = warm.run();
        Path.note(path, x == null ? Path.FLOW : warm.outcome);
        return x != null ? x : ShareFlow.of(problem).solve();
    }

    /** The optimal counts, or null if the cycle budget ran out. */
    int[][] run() {
        WarmStart start = new WarmStart(shares);
        start.start();
        if (shares.meetsLowerBounds()) {
            return shares.x;
        }
        outcome = Path.WARM_LEVELLED;
        new Levelling(shares).level();
        if (shares.meetsLowerBounds()) {
            return shares.x;
        }
        outcome = Path.WARM_CYCLES;
        CycleCancelling cycles = new CycleCancelling(shares);
        Narrowing narrowing = new Narrowing(shares, cycles);
        int[] cycle = new int[cycles.n];
        int[] changed = new int[cycles.n];
        cycles.buildArcs();
        int narrowed = 0;
        for (int round = 0; round < MAX_CYCLES; round++) {
            int len = cycles.negativeCycle(cycle);
            if (len == 0) {
                // optimal: the labels are potentials now; spend what is left on the ties
                int count = narrowed < MAX_NARROWINGS ? narrowing.narrow(changed) : 0;
                if (count == 0) {
                    return shares.x;
                }
                narrowed++;
                cycles.updateArcs(changed, count);
                continue;
            }
            if (!cycles.stillPays(cycle, len)) {
                return null; // cannot happen (a predecessor cycle is negative): be safe
            }
            int count = 0;
            for (int i = 0; i < len; i++) {
                changed[count++] = cycles.arcMember[cycle[i]];
            }
            // the same moves again while they still pay (a load far off takes many units)
            do {
                cycles.apply(cycle, len);
            } while (cycles.stillPays(cycle, len));
            cycles.updateArcs(changed, count);
        }
        return null;
    }
}
