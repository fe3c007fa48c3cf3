package io.github.kafkaassignors.broker;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

/**
 * Who subscribes to what, numbered: topics 0..T-1 in topic-id order (only those that exist
 * with partitions), each member's subscription as ascending topic numbers. A group has few
 * distinct subscriptions, so each is translated once and members share the array (reading
 * every member's topics into one sorted set cost a third of a 5,000-member assignment).
 */
final class Subscriptions {
    /** Topic number -> topic id. */
    final List<Uuid> topicIds;
    /** Topic id -> topic number. */
    final Map<Uuid, Integer> topicIndex;
    /** Topic number -> partitions. */
    final int[] counts;
    /** Member -> subscribed topic numbers, ascending (members with equal subscriptions share one array). */
    final int[][] subs;
    private final IdentityHashMap<int[], boolean[]> masks = new IdentityHashMap<>();

    private Subscriptions(List<Uuid> topicIds, Map<Uuid, Integer> topicIndex, int[] counts,
            int[][] subs) {
        this.topicIds = topicIds;
        this.topicIndex = topicIndex;
        this.counts = counts;
        this.subs = subs;
    }

    /** @param members in canonical order */
    static Subscriptions read(GroupSpec groupSpec, String[] members,
            SubscribedTopicDescriber describer) {
        List<Set<Uuid>> distinct = new ArrayList<>();
        int[] kind = new int[members.length];
        if (groupSpec.subscriptionType() == SubscriptionType.HOMOGENEOUS) {
            // the broker counts subscribers per topic: trusted as Kafka's own assignors do
            // (comparing 5,000 sets of 100 topics cost more than the whole assignment)
            distinct.add(groupSpec.memberSubscription(members[0]).subscribedTopicIds());
        } else {
            // the same object first (cheap), then equal sets
            Map<Set<Uuid>, Integer> byObject = new IdentityHashMap<>();
            Map<Set<Uuid>, Integer> equal = new HashMap<>();
            for (int m = 0; m < members.length; m++) {
                Set<Uuid> topics = groupSpec.memberSubscription(members[m]).subscribedTopicIds();
                Integer k = byObject.get(topics);
                if (k == null) {
                    k = equal.computeIfAbsent(topics, s -> {
                        distinct.add(s);
                        return distinct.size() - 1;
                    });
                    byObject.put(topics, k);
                }
                kind[m] = k;
            }
        }

        TreeSet<Uuid> ids = new TreeSet<>();
        for (Set<Uuid> s : distinct) {
            ids.addAll(s);
        }
        List<Uuid> topicIds = new ArrayList<>(ids.size());
        List<Integer> sizes = new ArrayList<>(ids.size());
        for (Uuid id : ids) {
            int n = describer.numPartitions(id);
            if (n > 0) {
                topicIds.add(id);
                sizes.add(n);
            }
        }
        Map<Uuid, Integer> topicIndex = new HashMap<>(topicIds.size() * 2);
        int[] counts = new int[topicIds.size()];
        for (int t = 0; t < counts.length; t++) {
            topicIndex.put(topicIds.get(t), t);
            counts[t] = sizes.get(t);
        }
        int[][] numbered = new int[distinct.size()][];
        for (int k = 0; k < numbered.length; k++) {
            numbered[k] = distinct.get(k).stream().map(topicIndex::get).filter(t -> t != null)
                    .mapToInt(Integer::intValue).sorted().toArray();
        }
        int[][] subs = new int[members.length][];
        for (int m = 0; m < members.length; m++) {
            subs[m] = numbered[kind[m]];
        }
        return new Subscriptions(topicIds, topicIndex, counts, subs);
    }

    /** Topic number -> whether member m subscribes to it (one array per distinct subscription). */
    boolean[] subscribed(int m) {
        return masks.computeIfAbsent(subs[m], s -> {
            boolean[] mask = new boolean[counts.length];
            for (int t : s) {
                mask[t] = true;
            }
            return mask;
        });
    }
}
