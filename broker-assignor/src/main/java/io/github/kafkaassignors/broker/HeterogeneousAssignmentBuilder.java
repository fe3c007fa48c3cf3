package io.github.kafkaassignors.broker;

/**
 * Members subscribe to different topics: the three objectives (total balance, each topic
 * even, fewest moves) solved exactly, from a warm start by {@link WarmShares} (or from nothing
 * by {@link ShareFlow}), the partitions then dealt by {@link Dealer}. Single use: construct,
 * call {@link #build()} once.
 */
final class HeterogeneousAssignmentBuilder {
    private final Problem problem;
    private final boolean warm;

    HeterogeneousAssignmentBuilder(Problem problem) {
        this(problem, true);
    }

    /** @param warm false: the flow from nothing ({@link ShareFlow}; tests compare the two) */
    HeterogeneousAssignmentBuilder(Problem problem, boolean warm) {
        this.problem = problem;
        this.warm = warm;
    }

    int[][][] build() {
        int[][] x = warm ? WarmShares.solve(problem) : ShareFlow.of(problem).solve();
        return Dealer.deal(problem, x);
    }
}
