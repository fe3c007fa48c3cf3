package io.github.kafkaassignors.broker;

import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

/**
 * For the benchmarks' quality report: balanced-sticky's general path alone (no fast path, no
 * warm start: the min-cost flow from nothing, {@link ShareFlow}). Its moves after a leave are
 * the fewest any assignment with the same balance (sum of squared loads, then of per-topic
 * shares) needs, found independently of the path that is timed.
 */
public final class Reference {
    private Reference() {
    }

    public static GroupAssignment exact(GroupSpec group, SubscribedTopicDescriber topics) {
        return new BalancedStickyAssignor(false).assign(group, topics);
    }
}
