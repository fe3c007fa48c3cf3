package io.github.kafkaassignors.broker;

import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicId;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.github.kafkaassignors.broker.AssignmentTestUtil.FakeGroup;
import io.github.kafkaassignors.broker.AssignmentTestUtil.FakeTopics;
import java.util.HashSet;
import java.util.List;
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
}
