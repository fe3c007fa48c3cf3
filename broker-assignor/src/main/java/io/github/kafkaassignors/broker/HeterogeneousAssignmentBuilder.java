package io.github.kafkaassignors.broker;

/**
 * Members subscribe to different topics: the three objectives (total balance, each topic
 * even, fewest moves) solved exactly by {@link ShareFlow}, the partitions then dealt by
 * {@link Dealer}. Single use: construct, call {@link #build()} once.
 */
final class HeterogeneousAssignmentBuilder {
    private final Problem problem;

    HeterogeneousAssignmentBuilder(Problem problem) {
        this.problem = problem;
    }

    int[][][] build() {
        return Dealer.deal(problem, ShareFlow.of(problem).solve());
    }
}
