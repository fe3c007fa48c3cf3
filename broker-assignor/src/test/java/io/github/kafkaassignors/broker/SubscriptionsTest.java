package io.github.kafkaassignors.broker;

import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicId;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.kafkaassignors.broker.AssignmentTestUtil.FakeGroup;
import io.github.kafkaassignors.broker.AssignmentTestUtil.FakeTopics;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/**
 * {@link Subscriptions#read}: topics numbered in id order (only those with partitions), each
 * member's subscription as ascending numbers, and equal subscriptions found by content (the
 * broker hands every member a set object of its own) so that they share one array.
 */
class SubscriptionsTest {
    @Test
    void equalSubscriptionsInSeparateSetsShareOneArray() {
        Uuid t0 = topicId(0);
        Uuid t1 = topicId(1);
        Uuid t2 = topicId(2);
        Uuid gone = topicId(3); // subscribed, but not in the metadata
        FakeTopics topics = new FakeTopics().put(t0, 3).put(t1, 2).put(t2, 4);
        FakeGroup group = new FakeGroup()
                .add("a", new HashSet<>(Set.of(t2, t0)))
                .add("b", new HashSet<>(Set.of(t0, t2)))
                .add("c", new HashSet<>(Set.of(t1, t2, gone)))
                .add("d", new HashSet<>(Set.of(t2, t0)));
        String[] members = BalancedStickyAssignor.canonicalMembers(group);
        Subscriptions s = Subscriptions.read(group, members, topics);

        assertEquals(List.of(t0, t1, t2), s.topicIds);
        assertArrayEquals(new int[] {3, 2, 4}, s.counts);
        int a = List.of(members).indexOf("a");
        int b = List.of(members).indexOf("b");
        int c = List.of(members).indexOf("c");
        int d = List.of(members).indexOf("d");
        assertArrayEquals(new int[] {0, 2}, s.subs[a]);
        assertSame(s.subs[a], s.subs[b]);
        assertSame(s.subs[a], s.subs[d]);
        assertArrayEquals(new int[] {1, 2}, s.subs[c]);
        assertNotSame(s.subs[a], s.subs[c]);
        assertEquals(-1, s.topicIndex.get(gone));
        assertEquals(2, s.topicIndex.get(t2));
    }

    @Test
    void topicIndexAnswersAnEqualIdObjectAndOneAddedAfterAMiss() {
        UuidIndex index = new UuidIndex(4);
        Uuid id = topicId(7);
        assertEquals(-1, index.get(id)); // cached as missing ...
        assertEquals(5, index.putIfAbsent(id, 5)); // ... until it is added
        assertEquals(5, index.get(id));
        assertEquals(5, index.get(new Uuid(id.getMostSignificantBits(), id.getLeastSignificantBits())));
        assertEquals(-1, index.get(topicId(8)));
    }

    /**
     * {@link Subscriptions#subscribes} answers as the member's topic list does, with few
     * topics (kept as bits) and with more than 64 (a look through the list); a copy of a
     * subscription shares its array, of up to five topics (packed) and longer (arrays).
     */
    @Test
    void subscribesAgreesWithTheTopicListsWithFewAndManyTopics() {
        for (int topicCount : new int[] {10, 64, 80}) {
            Random random = new Random(topicCount);
            FakeTopics topics = new FakeTopics();
            for (int t = 0; t < topicCount; t++) {
                topics.put(topicId(t), 1 + random.nextInt(5));
            }
            FakeGroup group = new FakeGroup();
            Set<Uuid> previous = Set.of(topicId(0));
            for (int m = 0; m < 200; m++) {
                Set<Uuid> mine = new HashSet<>();
                if (m % 7 == 3) {
                    mine.addAll(previous); // an equal subscription in a set of its own
                } else {
                    int n = 1 + random.nextInt(m % 2 == 0 ? 5 : 9);
                    while (mine.size() < n) {
                        mine.add(topicId(random.nextInt(topicCount)));
                    }
                }
                group.add(String.format("m%03d", m), mine);
                previous = mine;
            }
            String[] members = BalancedStickyAssignor.canonicalMembers(group);
            Subscriptions s = Subscriptions.read(group, members, topics);
            for (int m = 0; m < members.length; m++) {
                for (int t = -1; t <= topicCount; t++) {
                    assertEquals(Arrays.binarySearch(s.subs[m], t) >= 0, s.subscribes(m, t),
                            topicCount + " topics, member " + members[m] + ", topic " + t);
                }
            }
            List<String> order = List.of(members);
            for (int m = 3; m < 200; m += 7) { // a copy of the one before: shared
                assertSame(s.subs[order.indexOf(String.format("m%03d", m - 1))],
                        s.subs[order.indexOf(String.format("m%03d", m))], topicCount + " topics");
            }
            assertTrue(Arrays.stream(s.subs).anyMatch(ts -> ts.length > 5), "long subscriptions too");
        }
    }
}
