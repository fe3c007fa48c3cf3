package io.github.kafkaassignors.broker.bench;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

/**
 * Not an assignor: the least any assignor that checks the group's current assignment must
 * do, timed beside the two. It reads each member's current assignment and the size of every
 * set it owns, and hands the same assignments back in a new map. balanced-sticky spreads
 * every topic over its subscribers, so after it each member owns many small sets (10 per
 * member with identical subscriptions of 100 topics), where after {@code uniform} it owns one
 * or two: on a stable group with identical subscriptions this floor alone is about as long as
 * {@code uniform}'s whole assignment.
 */
final class ReadFloor implements ConsumerGroupPartitionAssignor {
    @Override
    public String name() {
        return "read-floor";
    }

    @Override
    public GroupAssignment assign(GroupSpec group, SubscribedTopicDescriber topics) {
        Map<String, MemberAssignment> out = new HashMap<>(group.memberIds().size() * 2);
        Sizes sizes = new Sizes();
        for (String member : group.memberIds()) {
            MemberAssignment current = group.memberAssignment(member);
            current.partitions().forEach(sizes);
            out.put(member, current);
        }
        sink ^= sizes.total;
        return new GroupAssignment(out);
    }

    /** Keeps the sizes' sum alive (a sum never used could be optimized away). */
    static long sink;

    private static final class Sizes implements BiConsumer<Uuid, Set<Integer>> {
        long total;

        @Override
        public void accept(Uuid topic, Set<Integer> partitions) {
            total += partitions.size();
        }
    }
}
