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
    private final Path.Sink path;

    HeterogeneousAssignmentBuilder(Problem problem) {
        this(problem, true, null);
    }

    /** @param warm false: the flow from nothing ({@link ShareFlow}; tests compare the two) */
    HeterogeneousAssignmentBuilder(Problem problem, boolean warm) {
        this(problem, warm, null);
    }

    HeterogeneousAssignmentBuilder(Problem problem, boolean warm, Path.Sink path) {
        this.problem = problem;
        this.warm = warm;
        this.path = path;
    }

    int[][][] build() {
        int[][] x;
        if (warm) {
            x = WarmShares.solve(problem, path);
        } else {
            Path.note(path, Path.FLOW);
            x = ShareFlow.of(problem).solve();
        }
        return Dealer.deal(problem, x);
    }
}
