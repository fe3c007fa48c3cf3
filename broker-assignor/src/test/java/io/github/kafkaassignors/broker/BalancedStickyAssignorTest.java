package io.github.kafkaassignors.broker;

import static io.github.kafkaassignors.broker.AssignmentTestUtil.assertAssignment;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.assertValidAndBalanced;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.mkAssignment;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.moved;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.spread;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicId;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicSpread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.kafkaassignors.broker.AssignmentTestUtil.FakeGroup;
import io.github.kafkaassignors.broker.AssignmentTestUtil.FakeTopics;
import io.github.kafkaassignors.broker.AssignmentTestUtil.Member;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.junit.jupiter.api.Test;

class BalancedStickyAssignorTest {
    private static final Uuid T0 = topicId(0);
    private static final Uuid T1 = topicId(1);
    private static final Uuid T2 = topicId(2);

    private final BalancedStickyAssignor assignor = new BalancedStickyAssignor();

    /** Assign, check validity and balance, and check that a rerun on the output changes nothing. */
    private GroupAssignment assign(FakeGroup group, FakeTopics topics) {
        GroupAssignment result = assignor.assign(group, topics);
        assertValidAndBalanced(group, topics, result);
        FakeGroup again = group.next(result);
        GroupAssignment rerun = assignor.assign(again, topics);
        assertEquals(result, rerun, "a rerun on its own output changes nothing");
        rerun.members().forEach((m, a) -> assertSame(again.memberAssignment(m).partitions(), a.partitions(),
                "an unchanged member gets the broker's own map back"));
        return result;
    }

    @Test
    void testNameIsTheWireName() {
        assertEquals("balanced-sticky", assignor.name());
    }

    @Test
    void testNoMembers() {
        assertTrue(assignor.assign(new FakeGroup(), new FakeTopics()).members().isEmpty());
    }

    @Test
    void testSubscriptionNamingATopicTheBrokerDoesNotHaveYet() {
        // The broker's set counts the name of a topic just created (its metadata not there
        // yet) but does not iterate it: a lone member gets every partition of the other topic.
        FakeTopics topics = new FakeTopics().put(T0, 5);
        for (Set<Uuid> names : List.of(Set.of(T0, T1), Set.of(T1, T0, T2))) {
            FakeGroup group = new FakeGroup().add("a", topics.subscription(names));
            assertAssignment(Map.of("a", mkAssignment(T0, 0, 1, 2, 3, 4)), assign(group, topics));
            group = new FakeGroup().add("a", topics.subscription(names))
                    .add("b", topics.subscription(Set.of(T0)));
            assertEquals(1, spread(assign(group, topics))); // 3 and 2
        }
    }

    @Test
    void testMemberWithoutTopicsOrWithUnknownTopicGetsNothing() {
        FakeTopics topics = new FakeTopics().put(T0, 2);
        FakeGroup group = new FakeGroup().add("a", Set.of()).add("b", Set.of(T1)).add("c", Set.of(T0));
        assertAssignment(Map.of("a", Map.of(), "b", Map.of(), "c", mkAssignment(T0, 0, 1)),
                assign(group, topics));
    }

    @Test
    void testFirstAssignmentBalancesEveryTopic() {
        FakeTopics topics = new FakeTopics().put(T0, 3).put(T1, 3);
        FakeGroup group = new FakeGroup().add("a", Set.of(T0, T1)).add("b", Set.of(T0, T1))
                .add("c", Set.of(T0, T1));
        GroupAssignment result = assign(group, topics);
        assertEquals(0, spread(result));
        assertEquals(0, topicSpread(group, result));
        assertAssignment(Map.of("a", mkAssignment(T0, 0, T1, 0), "b", mkAssignment(T0, 1, T1, 1),
                "c", mkAssignment(T0, 2, T1, 2)), result);
    }

    @Test
    void testUnequalSubscriptionsOptimal() {
        // t0: 1 partition, t1: 2, t2: 3; a on t0, b on t0+t1, c on all: 1/2/3 (roundrobin: 1/1/4)
        FakeTopics topics = new FakeTopics().put(T0, 1).put(T1, 2).put(T2, 3);
        FakeGroup group = new FakeGroup().add("a", Set.of(T0)).add("b", Set.of(T0, T1))
                .add("c", Set.of(T0, T1, T2));
        GroupAssignment result = assign(group, topics);
        assertEquals(Map.of(T0, Set.of(0)), result.members().get("a").partitions());
        assertEquals(Map.of(T1, Set.of(0, 1)), result.members().get("b").partitions());
        assertEquals(Map.of(T2, Set.of(0, 1, 2)), result.members().get("c").partitions());
    }

    @Test
    void testReassignmentWhenOneMemberAdded() {
        FakeTopics topics = new FakeTopics().put(T0, 6).put(T1, 6);
        FakeGroup group = new FakeGroup()
                .add("a", null, Set.of(T0, T1), mkAssignment(T0, 0, 1, 2, T1, 0, 1, 2))
                .add("b", null, Set.of(T0, T1), mkAssignment(T0, 3, 4, 5, T1, 3, 4, 5))
                .add("c", Set.of(T0, T1));
        GroupAssignment result = assign(group, topics);
        assertEquals(0, spread(result));
        assertEquals(0, topicSpread(group, result));
        assertEquals(4, moved(group, result, topics), "the new member takes 2 of each topic, no more");
    }

    @Test
    void testReassignmentWhenOneMemberRemoved() {
        FakeTopics topics = new FakeTopics().put(T0, 6).put(T1, 3);
        FakeGroup group = new FakeGroup()
                .add("a", null, Set.of(T0, T1), mkAssignment(T0, 0, 1, T1, 0))
                .add("b", null, Set.of(T0, T1), mkAssignment(T0, 2, 3, T1, 1));
        // c (t0: 4, 5; t1: 2) left
        GroupAssignment result = assign(group, topics);
        assertEquals(0, moved(group, result, topics));
        assertEquals(1, topicSpread(group, result));
        assertTrue(spread(result) <= 1);
    }

    @Test
    void testReassignmentWhenPartitionsIncreased() {
        FakeTopics topics = new FakeTopics().put(T0, 4);
        FakeGroup group = new FakeGroup()
                .add("a", null, Set.of(T0), mkAssignment(T0, 0))
                .add("b", null, Set.of(T0), mkAssignment(T0, 1));
        GroupAssignment result = assign(group, topics);
        assertEquals(0, moved(group, result, topics));
        assertAssignment(Map.of("a", mkAssignment(T0, 0, 2), "b", mkAssignment(T0, 1, 3)), result);
    }

    @Test
    void testInvalidClaimsAreIgnored() {
        // a claims a topic it left and a partition that does not exist; b claims a's partition too
        FakeTopics topics = new FakeTopics().put(T0, 2).put(T1, 2);
        FakeGroup group = new FakeGroup()
                .add("b", null, Set.of(T0), mkAssignment(T0, 0))
                .add("a", null, Set.of(T0), mkAssignment(T0, 0, 7, T1, 0, 1));
        GroupAssignment result = assign(group, topics);
        assertAssignment(Map.of("a", mkAssignment(T0, 0), "b", mkAssignment(T0, 1)), result);
    }

    @Test
    void testPartitionsGoToAMemberInTheirRackWhereCountsAllow() {
        // t0-0, t0-1 live in rack b, t0-2, t0-3 in rack a; a sorts first but takes rack a's
        FakeTopics topics = new FakeTopics().put(T0, 4)
                .racks(T0, 0, "b").racks(T0, 1, "b").racks(T0, 2, "a").racks(T0, 3, "a");
        FakeGroup group = new FakeGroup().add("a", Set.of(T0)).add("b", Set.of(T0))
                .rack("a", "a").rack("b", "b");
        assertAssignment(Map.of("a", mkAssignment(T0, 2, 3), "b", mkAssignment(T0, 0, 1)),
                assign(group, topics));
    }

    @Test
    void testRacksNeverCostAMove() {
        // a owns rack b's partitions: it keeps them (locality comes after fewest moves)
        FakeTopics topics = new FakeTopics().put(T0, 4)
                .racks(T0, 0, "b").racks(T0, 1, "b").racks(T0, 2, "a").racks(T0, 3, "a");
        FakeGroup group = new FakeGroup()
                .add("a", null, Set.of(T0), mkAssignment(T0, 0, 1))
                .add("b", Set.of(T0)).rack("a", "a").rack("b", "b");
        GroupAssignment result = assign(group, topics);
        assertAssignment(Map.of("a", mkAssignment(T0, 0, 1), "b", mkAssignment(T0, 2, 3)), result);
    }

    @Test
    void testStaticMembersSortFirstByInstanceId() {
        // 3 partitions over 2 members: the extra one goes to the first member in canonical
        // order, the static one, whatever its member id
        FakeTopics topics = new FakeTopics().put(T0, 3);
        FakeGroup group = new FakeGroup().add("a", Set.of(T0))
                .add("z", "instance-1", Set.of(T0), new HashMap<>());
        GroupAssignment result = assign(group, topics);
        assertEquals(2, result.members().get("z").partitions().get(T0).size());
    }

    @Test
    void testReassignmentWithUnequalSubscriptionsMovesOne() {
        FakeTopics topics = new FakeTopics().put(T0, 4).put(T1, 4);
        FakeGroup group = new FakeGroup()
                .add("a", null, Set.of(T0), mkAssignment(T0, 0, 1))
                .add("b", null, Set.of(T0, T1), mkAssignment(T0, 2, 3, T1, 0, 1))
                .add("c", null, Set.of(T1), mkAssignment(T1, 2, 3));
        GroupAssignment result = assign(group, topics);
        // loads 2/4/2 must become 3/3/2 (or 2/3/3): b hands over exactly one partition
        assertEquals(1, moved(group, result, topics));
        assertEquals(1, spread(result));
    }

    /** Random groups (half with racks): the result does not depend on the order members and
     *  topics arrive in, is valid and balanced, and a rerun on it changes nothing; then a
     *  member leaves and another joins. */
    @Test
    void testFuzzShuffledInputAndRerun() {
        Random random = new Random(848);
        for (int round = 0; round < 150; round++) {
            int topicCount = 1 + random.nextInt(5);
            FakeTopics topics = new FakeTopics();
            List<Uuid> ids = new ArrayList<>();
            boolean withRacks = random.nextBoolean();
            for (int t = 0; t < topicCount; t++) {
                ids.add(topicId(t));
                int n = random.nextInt(12);
                topics.put(topicId(t), n);
                for (int p = 0; withRacks && p < n; p++) {
                    topics.racks(topicId(t), p, "r" + random.nextInt(3), "r" + random.nextInt(3));
                }
            }
            Map<String, String> racks = new HashMap<>();
            int memberCount = 1 + random.nextInt(7);
            List<Member> members = new ArrayList<>();
            for (int m = 0; m < memberCount; m++) {
                Set<Uuid> subs = new HashSet<>();
                for (Uuid id : ids) {
                    if (random.nextInt(3) > 0) {
                        subs.add(id);
                    }
                }
                String instance = random.nextInt(3) == 0 ? "i" + random.nextInt(100) + "-" + m : null;
                String id = "m" + random.nextInt(1000) + "-" + m;
                if (withRacks && random.nextInt(4) > 0) {
                    racks.put(id, "r" + random.nextInt(3));
                }
                members.add(new Member(id, instance, subs, new HashMap<>()));
            }
            GroupAssignment first = null;
            for (int shuffle = 0; shuffle < 3; shuffle++) {
                Collections.shuffle(members, random);
                FakeGroup group = new FakeGroup();
                for (Member m : members) {
                    group.add(m.id, m.instanceId, m.topics, m.owned);
                }
                group.racks.putAll(racks);
                GroupAssignment result = assign(group, topics);
                if (first == null) {
                    first = result;
                } else {
                    assertEquals(first, result, "the input order changes nothing (round " + round + ")");
                }
            }
            // one member leaves, another joins: still valid, balanced and stable
            FakeGroup after = new FakeGroup();
            for (Member m : members.subList(1, members.size())) {
                after.add(m.id, m.instanceId, m.topics, first.members().get(m.id).partitions());
            }
            after.add("new-" + round, members.get(0).topics);
            after.racks.putAll(racks);
            assign(after, topics);
        }
    }
}
