package io.github.kafkaassignors.broker;

/**
 * Which path computed an assignment, for the benchmark's one line per row (a regression to
 * the slow path shows there). The assignor itself never reads it.
 */
final class Path {
    static final String IDENTICAL_FRESH = "identical, new group: dealt directly";
    static final String IDENTICAL_STABLE = "identical, stable group: from set sizes";
    static final String IDENTICAL_GENERAL = "identical: general (flow on the extras)";
    static final String WARM_BOUNDS = "unequal: warm start at the lower bounds";
    static final String WARM_LEVELLED = "unequal: warm start, levelled";
    static final String WARM_CYCLES = "unequal: warm start + negative cycles";
    static final String FLOW = "unequal: min-cost flow from nothing";

    /** Receives the path's name; may be called more than once (the last call wins). */
    interface Sink {
        void path(String name);
    }

    private Path() {
    }

    static void note(Sink sink, String name) {
        if (sink != null) {
            sink.path(name);
        }
    }
}
