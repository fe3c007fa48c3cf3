package io.github.kafkaassignors.broker;

import static io.github.kafkaassignors.broker.AssignmentTestUtil.FakeGroup;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.FakeTopics;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.Member;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.assertValidAndBalanced;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicId;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.junit.jupiter.api.Test;

/**
 * Groups as a broker sees them over time: members join one by one, leave, change their
 * subscriptions (keeping, in their previous target, partitions of topics they dropped), and
 * subscribe to topics that appear only later (subscriptions are views like the broker's, whose
 * size counts topics its metadata does not have yet). At every epoch the assignor with its
 * fast paths and warm start answers, validly, with the objectives of the flow from nothing.
 */
class EvolvingGroupFuzzTest {
    private static final BalancedStickyAssignor FAST = new BalancedStickyAssignor();
    private static final BalancedStickyAssignor GENERAL = new BalancedStickyAssignor(false);

    private static Set<Uuid> someTopics(Random random, int topics) {
        Set<Uuid> out = new HashSet<>();
        double p = random.nextDouble();
        for (int t = 0; t < topics; t++) {
            if (random.nextDouble() < p) {
                out.add(topicId(t));
            }
        }
        return out;
    }

    /** Sum of squared loads, then sum over members and topics of squared shares. */
    private static String squares(GroupAssignment result) {
        long loads = 0;
        long shares = 0;
        for (MemberAssignment a : result.members().values()) {
            long n = AssignmentTestUtil.load(a);
            loads += n * n;
            for (Set<Integer> ps : a.partitions().values()) {
                shares += (long) ps.size() * ps.size();
            }
        }
        return loads + " / " + shares;
    }

    @Test
    void testEveryEpochOfEvolvingGroups() {
        Random random = new Random(1848);
        for (int round = 0; round < 300; round++) {
            int topicCount = 1 + random.nextInt(5);
            FakeTopics topics = new FakeTopics();
            List<Integer> missing = new ArrayList<>();
            for (int t = 0; t < topicCount; t++) {
                if (random.nextInt(3) == 0) {
                    missing.add(t); // created later
                } else {
                    topics.put(topicId(t), 1 + random.nextInt(12));
                }
            }
            FakeGroup group = new FakeGroup();
            int next = 0;
            for (int epoch = 0; epoch < 12; epoch++) {
                int event = random.nextInt(6);
                List<Member> members = new ArrayList<>(group.members.values());
                if (event <= 1 || members.isEmpty()) {
                    group.add(String.format("m%03d", next++), topics.subscription(someTopics(random, topicCount)));
                } else if (event == 2) {
                    group.members.remove(members.get(random.nextInt(members.size())).id);
                } else if (event == 3) {
                    Member m = members.get(random.nextInt(members.size()));
                    group.members.put(m.id, new Member(m.id, m.instanceId,
                            topics.subscription(someTopics(random, topicCount)), m.owned));
                } else if (event == 4 && !missing.isEmpty()) {
                    topics.put(topicId(missing.remove(0)), 1 + random.nextInt(12));
                } else {
                    Uuid t = topicId(random.nextInt(topicCount));
                    if (topics.counts.containsKey(t)) {
                        topics.put(t, topics.counts.get(t) + 1 + random.nextInt(4));
                    }
                }
                String what = "round " + round + " epoch " + epoch + ": " + describe(group, topics);
                GroupAssignment fast = FAST.assign(group, topics);
                GroupAssignment general = GENERAL.assign(group, topics);
                assertValidAndBalanced(group, topics, fast);
                assertEquals(squares(general), squares(fast), what);
                group = group.next(fast);
            }
        }
    }

    private static String describe(FakeGroup group, FakeTopics topics) {
        StringBuilder out = new StringBuilder("topics " + topics.counts + "; members");
        for (Member m : group.members.values()) {
            out.append(' ').append(m.id).append(m.topics).append(" owns ");
            for (Map.Entry<Uuid, Set<Integer>> e : m.owned.entrySet()) {
                out.append(e.getKey()).append('=').append(e.getValue());
            }
        }
        return out.toString();
    }
}
