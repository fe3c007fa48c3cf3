package io.github.kafkaassignors.broker;

/**
 * Every member subscribes to the same topics. The optimum is then known up to a choice: every
 * member gets floor(P/M) or one more partitions in total, floor(n_t/M) or one more of every
 * topic t (both bounds hold at once), and what is left to choose is who gets the extra ones,
 * so as to keep the most owned partitions. That choice is made by the same flow as the
 * heterogeneous case ({@link ShareFlow}); a direct construction for large groups is left to
 * do. Single use: construct, call {@link #build()} once.
 */
final class HomogeneousAssignmentBuilder {
    private final Problem problem;

    HomogeneousAssignmentBuilder(Problem problem) {
        this.problem = problem;
    }

    int[][][] build() {
        return Dealer.deal(problem, ShareFlow.of(problem).solve());
    }
}
