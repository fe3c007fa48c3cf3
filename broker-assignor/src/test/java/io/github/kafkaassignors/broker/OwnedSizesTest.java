package io.github.kafkaassignors.broker;

import static io.github.kafkaassignors.broker.AssignmentTestUtil.FakeGroup;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.FakeTopics;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.Member;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.junit.jupiter.api.Test;

/**
 * The general path reading current assignments by size ({@link OwnedSizes}) beside reading
 * and resolving every claim: the same assignment, partition for partition, on seeded unequal
 * groups through leaves, joins, resubscriptions (claims outside the subscription), partition
 * increases and decreases (claims out of range) and overlapping claims.
 */
class OwnedSizesTest {
    private static final BalancedStickyAssignor BY_SIZE = new BalancedStickyAssignor(true, true);
    private static final BalancedStickyAssignor EVERY_CLAIM = new BalancedStickyAssignor(true, false);

    @Test
    void testSameAssignmentAsReadingEveryClaim() {
        int bySize = 0;
        for (int seed = 0; seed < 200; seed++) {
            Random random = new Random(seed);
            int topicCount = 2 + random.nextInt(6);
            FakeTopics topics = new FakeTopics();
            List<Uuid> ids = new ArrayList<>();
            for (int t = 0; t < topicCount; t++) {
                ids.add(topicId(t));
                topics.put(topicId(t), 1 + random.nextInt(30));
            }
            FakeGroup group = new FakeGroup();
            int members = 2 + random.nextInt(30);
            for (int m = 0; m < members; m++) {
                group.add(String.format("m%03d", m), someTopics(random, ids));
            }
            GroupAssignment result = same(group, topics, "seed " + seed + " fresh");
            for (int step = 0; step < 6; step++) {
                group = group.next(result);
                String event = event(random, group, topics, ids, step);
                bySize += readsBySize(group, topics) ? 1 : 0;
                result = same(group, topics, "seed " + seed + " step " + step + " " + event);
            }
        }
        assertTrue(bySize > 600, "read by size " + bySize + " times of 1,200");
    }

    @Test
    void testReadsBySizeOnlyWhenClaimsAreDisjointAndInRange() {
        Uuid t0 = topicId(0);
        Uuid t1 = topicId(1);
        FakeTopics topics = new FakeTopics().put(t0, 6).put(t1, 2);
        FakeGroup overlap = new FakeGroup()
                .add("a", null, Set.of(t0), new HashMap<>(Map.of(t0, Set.of(0, 1))))
                .add("b", null, Set.of(t0, t1), new HashMap<>(Map.of(t0, Set.of(1, 2))));
        assertNull(read(overlap, topics), "4 claimed, 3 assigned: the counts disagree");
        FakeGroup range = new FakeGroup()
                .add("a", null, Set.of(t0), new HashMap<>(Map.of(t0, Set.of(0, 9))))
                .add("b", Set.of(t0, t1));
        assertNull(read(range, topics), "a claim beyond the topic");
        FakeGroup outside = new FakeGroup()
                .add("a", null, Set.of(t0), new HashMap<>(Map.of(t0, Set.of(0), t1, Set.of(1))))
                .add("b", null, Set.of(t0, t1), new HashMap<>(Map.of(t0, Set.of(1))));
        Problem problem = read(outside, topics);
        assertNotNull(problem);
        assertEquals(0, problem.ownedCount(0, 1), "a claim outside the subscription owns nothing");
        assertTrue(!problem.held[1][1] && problem.outside[0], "and its partition is free");
        for (FakeGroup group : List.of(overlap, range, outside)) {
            same(group, topics, "hand-made"); // overlap and range: resolved as before
        }
    }

    private static Problem read(FakeGroup group, FakeTopics topics) {
        String[] members = BalancedStickyAssignor.canonicalMembers(group);
        Subscriptions s = Subscriptions.read(group, members, topics);
        MemberAssignment[] current = new MemberAssignment[members.length];
        for (int m = 0; m < members.length; m++) {
            current[m] = group.memberAssignment(members[m]);
        }
        return OwnedSizes.read(group, s, current, new int[members.length], null);
    }

    private static boolean readsBySize(FakeGroup group, FakeTopics topics) {
        return read(group, topics) != null;
    }

    /** One event on the group (it owns what the last assignment gave it). */
    private static String event(Random random, FakeGroup group, FakeTopics topics, List<Uuid> ids,
            int step) {
        List<Member> all = new ArrayList<>(group.members.values());
        Member some = all.get(random.nextInt(all.size()));
        switch (random.nextInt(6)) {
            case 0 -> {
                if (all.size() > 1) {
                    group.members.remove(some.id);
                }
                return "leave";
            }
            case 1 -> {
                group.add("j" + step, someTopics(random, ids));
                return "join";
            }
            case 2 -> {
                group.add(some.id, null, someTopics(random, ids), some.owned);
                return "resubscribe";
            }
            case 3 -> {
                Uuid t = ids.get(random.nextInt(ids.size()));
                topics.put(t, topics.counts.get(t) + 1 + random.nextInt(5));
                return "grow";
            }
            case 4 -> {
                Uuid t = ids.get(random.nextInt(ids.size()));
                topics.put(t, Math.max(1, topics.counts.get(t) - 1 - random.nextInt(5)));
                return "shrink";
            }
            default -> {
                // a second member claims one of some member's partitions
                Member other = all.get(random.nextInt(all.size()));
                for (Map.Entry<Uuid, Set<Integer>> e : some.owned.entrySet()) {
                    if (!e.getValue().isEmpty() && other != some) {
                        Map<Uuid, Set<Integer>> mine = new HashMap<>(other.owned);
                        Set<Integer> ps = new HashSet<>(mine.getOrDefault(e.getKey(), Set.of()));
                        ps.add(e.getValue().iterator().next());
                        mine.put(e.getKey(), ps);
                        group.add(other.id, null, other.topics, mine);
                        return "overlap";
                    }
                }
                return "none";
            }
        }
    }

    private static Set<Uuid> someTopics(Random random, List<Uuid> ids) {
        Set<Uuid> mine = new HashSet<>();
        for (int i = 1 + random.nextInt(3); i > 0; i--) {
            mine.add(ids.get(random.nextInt(ids.size())));
        }
        return mine;
    }

    /**
     * Both ways of reading give the same assignment, also with the members listed the other
     * way round (sets are read in the broker's listing order); returns it.
     */
    private static GroupAssignment same(FakeGroup group, FakeTopics topics, String what) {
        GroupAssignment bySize = BY_SIZE.assign(group, topics);
        GroupAssignment every = EVERY_CLAIM.assign(group, topics);
        assertEquals(plain(every), plain(bySize), what);
        assertEquals(plain(bySize), plain(BY_SIZE.assign(reversed(group), topics)),
                what + ", members listed in reverse");
        return bySize;
    }

    private static FakeGroup reversed(FakeGroup group) {
        List<Member> list = new ArrayList<>(group.members.values());
        FakeGroup g = new FakeGroup();
        for (int i = list.size() - 1; i >= 0; i--) {
            Member m = list.get(i);
            g.add(m.id, m.instanceId, m.topics, m.owned);
        }
        g.racks.putAll(group.racks);
        return g;
    }

    private static Map<String, Map<Uuid, Set<Integer>>> plain(GroupAssignment a) {
        Map<String, Map<Uuid, Set<Integer>>> out = new TreeMap<>();
        a.members().forEach((m, x) -> {
            Map<Uuid, Set<Integer>> mine = new TreeMap<>();
            x.partitions().forEach((t, ps) -> {
                if (!ps.isEmpty()) {
                    mine.put(t, new TreeSet<>(ps));
                }
            });
            out.put(m, mine);
        });
        return out;
    }
}
