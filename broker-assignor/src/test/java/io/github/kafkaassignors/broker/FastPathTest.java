package io.github.kafkaassignors.broker;

import static io.github.kafkaassignors.broker.AssignmentTestUtil.assertValidAndBalanced;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.moved;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.spread;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicId;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicSpread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.junit.jupiter.api.Test;

/**
 * {@link HomogeneousFastPath} beside the general path on seeded random groups with identical
 * subscriptions: a new group, then leaves, joins, several leaves at once, partition
 * increases. Where the fast path answers it must reach what the general path reaches (the
 * same sum of squared loads, per-topic sum of squares, spreads and moves; a new group: the
 * very same assignment), stay deterministic whatever order members are listed in, and
 * change nothing when run on its own output.
 */
class FastPathTest {
    private static final BalancedStickyAssignor GENERAL = new BalancedStickyAssignor(false);

    private static GroupAssignment fast(FakeGroup group, FakeTopics topics) {
        String[] members = BalancedStickyAssignor.canonicalMembers(group);
        return HomogeneousFastPath.assign(group, members, Subscriptions.read(group, members, topics), null);
    }

    /** Sum of squared loads and sum over topics of squared shares. */
    private static long[] squares(GroupAssignment result) {
        long loads = 0;
        long shares = 0;
        for (MemberAssignment a : result.members().values()) {
            long load = 0;
            for (Set<Integer> ps : a.partitions().values()) {
                load += ps.size();
                shares += (long) ps.size() * ps.size();
            }
            loads += load * load;
        }
        return new long[] {loads, shares};
    }

    private static Map<String, Map<Uuid, Set<Integer>>> plain(GroupAssignment result) {
        Map<String, Map<Uuid, Set<Integer>>> out = new HashMap<>();
        result.members().forEach((m, a) -> {
            Map<Uuid, Set<Integer>> ps = new HashMap<>();
            a.partitions().forEach((t, s) -> {
                if (!s.isEmpty()) {
                    ps.put(t, new HashSet<>(s));
                }
            });
            out.put(m, ps);
        });
        return out;
    }

    private static FakeGroup shuffled(FakeGroup group, Random random) {
        List<Member> list = new ArrayList<>(group.members.values());
        Collections.shuffle(list, random);
        FakeGroup g = new FakeGroup();
        for (Member m : list) {
            g.add(m.id, m.instanceId, m.topics, m.owned);
        }
        return g;
    }

    /** Checks one step; returns the assignment to continue from (the fast one if any). */
    private static GroupAssignment step(FakeGroup group, FakeTopics topics, Random random,
            boolean fresh, int[] answered) {
        GroupAssignment general = GENERAL.assign(group, topics);
        GroupAssignment fast = fast(group, topics);
        if (fast == null) {
            return general;
        }
        answered[0]++;
        assertValidAndBalanced(group, topics, fast);
        String what = group.members.size() + " members, " + topics.counts;
        assertEquals(spread(general), spread(fast), what);
        assertEquals(topicSpread(group, general), topicSpread(group, fast), what);
        long[] g = squares(general);
        long[] f = squares(fast);
        assertEquals(g[0], f[0], "sum of squared loads: " + what);
        assertEquals(g[1], f[1], "sum of squared shares: " + what);
        assertEquals(moved(group, general, topics), moved(group, fast, topics), "moves: " + what);
        if (fresh) {
            assertEquals(plain(general), plain(fast), "a new group: the same assignment");
        }
        // deterministic whatever the order, and what the assignor itself returns
        assertEquals(plain(fast), plain(fast(shuffled(group, random), topics)));
        assertEquals(plain(fast), plain(new BalancedStickyAssignor().assign(group, topics)));
        // a fixed point
        FakeGroup again = group.next(fast);
        GroupAssignment rerun = fast(again, topics);
        assertNotNull(rerun, "the fast path takes its own output");
        assertEquals(plain(fast), plain(rerun));
        assertEquals(0, moved(again, rerun, topics));
        return fast;
    }

    @Test
    void testFastPathMatchesTheGeneralPath() {
        Random random = new Random(13);
        int[] answered = new int[1];
        int steps = 0;
        for (int round = 0; round < 300; round++) {
            int topicCount = 1 + random.nextInt(6);
            FakeTopics topics = new FakeTopics();
            Set<Uuid> subscribed = new HashSet<>();
            for (int t = 0; t < topicCount; t++) {
                subscribed.add(topicId(t));
                if (random.nextInt(10) > 0) { // now and then a topic that does not exist
                    topics.put(topicId(t), random.nextInt(40));
                }
            }
            FakeGroup group = new FakeGroup();
            int next = 0;
            for (int m = 1 + random.nextInt(25); m > 0; m--) {
                group.add(String.format("m%03d", next++), subscribed);
            }
            GroupAssignment result = step(group, topics, random, true, answered);
            steps++;
            for (int event = 0; event < 6; event++) {
                group = group.next(result);
                List<String> ids = new ArrayList<>(group.members.keySet());
                switch (random.nextInt(5)) {
                    case 0: // one leaves
                    case 1: // several leave
                        int leave = random.nextInt(2) == 0 ? 1 : 1 + random.nextInt(3);
                        for (int i = 0; i < leave && group.members.size() > 1; i++) {
                            group.members.remove(ids.get(random.nextInt(ids.size())));
                            ids = new ArrayList<>(group.members.keySet());
                        }
                        break;
                    case 2: // joins
                        for (int i = random.nextInt(3); i >= 0; i--) {
                            group.add(String.format("m%03d", next++), subscribed);
                        }
                        break;
                    case 3: // partitions added
                        for (Uuid t : subscribed) {
                            if (random.nextBoolean()) {
                                topics.put(t, Math.max(0, topics.numPartitions(t)) + random.nextInt(7));
                            }
                        }
                        break;
                    default: // a leave and more partitions at once
                        group.members.remove(ids.get(random.nextInt(ids.size())));
                        if (group.members.isEmpty()) {
                            group.add(String.format("m%03d", next++), subscribed);
                        }
                        Uuid t = topicId(random.nextInt(topicCount));
                        topics.put(t, Math.max(0, topics.numPartitions(t)) + 1 + random.nextInt(5));
                        break;
                }
                result = step(group, topics, random, false, answered);
                steps++;
            }
        }
        assertTrue(answered[0] > steps / 2, "the fast path answered " + answered[0] + " of " + steps);
    }

    /**
     * Members join a stable group whose topics have fewer partitions than members (each member
     * holds extras only): the members over the new quota give some up, and the fast path
     * answers with the general path's objectives (checked by {@link #step}).
     */
    @Test
    void testReassignmentWhenMembersJoinTakesTheFastPath() {
        Random random = new Random(5);
        for (int round = 0; round < 40; round++) {
            FakeTopics topics = new FakeTopics();
            Set<Uuid> subscribed = new HashSet<>();
            int topicCount = 2 + random.nextInt(30);
            int members = 3 + random.nextInt(40);
            for (int t = 0; t < topicCount; t++) {
                subscribed.add(topicId(t));
                topics.put(topicId(t), 1 + random.nextInt(members));
            }
            FakeGroup group = new FakeGroup();
            int next = 0;
            for (int m = 0; m < members; m++) {
                group.add(String.format("m%03d", next++), subscribed);
            }
            int[] answered = new int[1];
            GroupAssignment result = step(group, topics, random, true, answered);
            for (int event = 0; event < 3; event++) {
                group = group.next(result);
                for (int i = random.nextInt(3); i >= 0; i--) {
                    group.add(String.format("m%03d", next++), subscribed);
                }
                result = step(group, topics, random, false, answered);
            }
            assertEquals(4, answered[0], "joins into " + members + " members, " + topics.counts);
        }
    }

    @Test
    void testFallsBackWhenClaimsOverlapOrLieOutOfRangeOrMembersHaveRacks() {
        Uuid t0 = topicId(0);
        FakeTopics topics = new FakeTopics().put(t0, 6);
        Map<Uuid, Set<Integer>> a = new HashMap<>(Map.of(t0, Set.of(0, 1)));
        Map<Uuid, Set<Integer>> b = new HashMap<>(Map.of(t0, Set.of(1, 2)));
        FakeGroup overlap = new FakeGroup().add("a", null, Set.of(t0), a).add("b", null, Set.of(t0), b);
        assertNull(fast(overlap, topics), "4 claimed, 3 assigned: the counts disagree");
        Map<Uuid, Set<Integer>> out = new HashMap<>(Map.of(t0, Set.of(0, 9)));
        FakeGroup range = new FakeGroup().add("a", null, Set.of(t0), out).add("b", Set.of(t0));
        assertNull(fast(range, topics), "a claim beyond the topic");
        FakeGroup racks = new FakeGroup().add("a", Set.of(t0)).add("b", Set.of(t0)).rack("a", "r1");
        assertNull(fast(racks, topics));
        assertNotNull(fast(new FakeGroup().add("a", Set.of(t0)).add("b", Set.of(t0)), topics));
    }
}
