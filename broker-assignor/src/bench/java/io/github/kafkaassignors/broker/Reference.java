package io.github.kafkaassignors.broker;

import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

/**
 * For the benchmarks: balanced-sticky's general path alone (no fast path, no warm start: the
 * min-cost flow from nothing, {@link ShareFlow}), whose moves after an event are the fewest any
 * assignment with the same balance (sum of squared loads, then of per-topic shares) needs,
 * found independently of the path that is timed; and which path the timed assignor takes.
 */
public final class Reference {
    private Reference() {
    }

    public static GroupAssignment exact(GroupSpec group, SubscribedTopicDescriber topics) {
        return new BalancedStickyAssignor(false).assign(group, topics);
    }

    /** The path {@link BalancedStickyAssignor} takes on this group (its name, for the table). */
    public static String path(GroupSpec group, SubscribedTopicDescriber topics) {
        String[] name = {"?"};
        new BalancedStickyAssignor().assign(group, topics, n -> name[0] = n);
        return name[0];
    }
}
