package io.github.kafkaassignors.broker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

/**
 * Who subscribes to what, numbered: topics 0..T-1 in topic-id order (only those that exist
 * with partitions), each member's subscription as ascending topic numbers. Each subscription
 * set object is translated once and the members that share it share the array (reading every
 * member's topics into one sorted set cost a third of a 5,000-member assignment).
 */
final class Subscriptions {
    /** Topic number -> topic id. */
    final List<Uuid> topicIds;
    /** Topic id -> topic number (-1: not ours). */
    final UuidIndex topicIndex;
    /** Topic number -> partitions. */
    final int[] counts;
    /** Member -> subscribed topic numbers, ascending (members with equal subscriptions share one array). */
    final int[][] subs;

    private Subscriptions(List<Uuid> topicIds, UuidIndex topicIndex, int[] counts,
            int[][] subs) {
        this.topicIds = topicIds;
        this.topicIndex = topicIndex;
        this.counts = counts;
        this.subs = subs;
    }

    /** @param members in canonical order */
    static Subscriptions read(GroupSpec groupSpec, String[] members,
            SubscribedTopicDescriber describer) {
        MemberSubscription[] specs = new MemberSubscription[members.length];
        for (int m = 0; m < members.length; m++) {
            specs[m] = groupSpec.memberSubscription(members[m]);
        }
        return read(groupSpec, members, specs, describer);
    }

    /** @param specs each member's subscription, in the order of {@code members} */
    static Subscriptions read(GroupSpec groupSpec, String[] members, MemberSubscription[] specs,
            SubscribedTopicDescriber describer) {
        List<Set<Uuid>> distinct = new ArrayList<>();
        int[] kind = new int[members.length];
        if (groupSpec.subscriptionType() == SubscriptionType.HOMOGENEOUS) {
            // the broker counts subscribers per topic: trusted as Kafka's own assignors do
            // (comparing 5,000 sets of 100 topics cost more than the whole assignment)
            distinct.add(specs[0].subscribedTopicIds());
        } else {
            // one entry per set object (the broker shares equal subscriptions' sets); equal
            // sets that are different objects are not looked for: hashing and comparing
            // thousands of sets of topic ids cost more than numbering each one
            Map<Set<Uuid>, Integer> byObject = new IdentityHashMap<>(members.length);
            for (int m = 0; m < members.length; m++) {
                Set<Uuid> topics = specs[m].subscribedTopicIds();
                Integer k = byObject.get(topics);
                if (k == null) {
                    k = distinct.size();
                    distinct.add(topics);
                    byObject.put(topics, k);
                }
                kind[m] = k;
            }
        }

        // every topic id once, numbered as met, then renumbered in id order
        Numbering met = new Numbering();
        List<Uuid> seen = met.seen;
        int[][] provisional = new int[distinct.size()][];
        for (int k = 0; k < provisional.length; k++) {
            provisional[k] = met.number(distinct.get(k));
        }
        Uuid[] ids = seen.toArray(new Uuid[0]);
        Arrays.sort(ids);
        int[] renumber = new int[ids.length];
        List<Uuid> topicIds = new ArrayList<>(ids.length);
        List<Integer> sizes = new ArrayList<>(ids.length);
        for (Uuid id : ids) {
            int n = describer.numPartitions(id);
            renumber[met.index.get(id)] = n > 0 ? topicIds.size() : -1;
            if (n > 0) {
                topicIds.add(id);
                sizes.add(n);
            }
        }
        UuidIndex topicIndex = new UuidIndex(topicIds.size());
        int[] counts = new int[topicIds.size()];
        for (int t = 0; t < counts.length; t++) {
            topicIndex.putIfAbsent(topicIds.get(t), t);
            counts[t] = sizes.get(t);
        }
        int[][] numbered = new int[distinct.size()][];
        for (int k = 0; k < numbered.length; k++) {
            int[] ts = provisional[k];
            int kept = 0;
            for (int t : ts) {
                if (renumber[t] >= 0) {
                    ts[kept++] = renumber[t];
                }
            }
            int[] mine = kept == ts.length ? ts : Arrays.copyOf(ts, kept);
            Arrays.sort(mine);
            numbered[k] = mine;
        }
        int[][] subs = new int[members.length][];
        for (int m = 0; m < members.length; m++) {
            subs[m] = numbered[kind[m]];
        }
        return new Subscriptions(topicIds, topicIndex, counts, subs);
    }

    /**
     * Every topic id once, numbered as met. A set is read with {@link Set#forEach}: a wrapper
     * (an unmodifiable set) hands the action to the set it wraps instead of wrapping its
     * iterator (one object fewer per subscription, thousands of small sets; a HashSet still
     * iterates, JFR's allocation samples show its key iterators). Its
     * size() is only a bound: the broker's set counts subscribed topic names, and it skips
     * names its metadata does not have yet (a topic just created); its toArray throws
     * (Kafka's TopicIds).
     */
    private static final class Numbering implements Consumer<Uuid> {
        final UuidIndex index = new UuidIndex(64);
        final List<Uuid> seen = new ArrayList<>();
        private int[] ts;
        private int size;

        int[] number(Set<Uuid> set) {
            ts = new int[set.size()];
            size = 0;
            set.forEach(this);
            return size == ts.length ? ts : Arrays.copyOf(ts, size);
        }

        @Override
        public void accept(Uuid id) {
            int t = index.get(id); // most ids are met before: found by reference
            if (t < 0) {
                t = index.putIfAbsent(id, seen.size());
                seen.add(id);
            }
            if (size == ts.length) {
                ts = Arrays.copyOf(ts, 2 * size + 1);
            }
            ts[size++] = t;
        }
    }

    /** Whether member m subscribes to topic t (its topics are few, or sorted: a search). */
    boolean subscribes(int m, int t) {
        int[] mine = subs[m];
        if (mine.length <= 8) {
            for (int u : mine) {
                if (u == t) {
                    return true;
                }
            }
            return false;
        }
        return Arrays.binarySearch(mine, t) >= 0;
    }
}
