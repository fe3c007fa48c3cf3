package io.github.kafkaassignors.broker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

/**
 * balanced-sticky on the broker (KIP-848 consumer groups): the port of the Python core
 * ({@code kafka_assignors/core/balanced_sticky.py}). In this order:
 * <ol>
 *   <li>optimal total balance, also with unequal subscriptions (least sum of squared loads);</li>
 *   <li>every topic spread over its subscribers as evenly as 1 allows (least sum over topics
 *       and members of the member's partitions of the topic, squared);</li>
 *   <li>among those, the fewest partitions that change owner.</li>
 * </ol>
 * Deterministic whatever order the broker lists members and topics in: members are numbered
 * in canonical order (static members first by instance id, then the others by member id;
 * ties by member id), topics by topic id ({@link Uuid#compareTo}; the broker never shows an
 * assignor topic names). A rerun on its own output changes nothing.
 *
 * <p>Racks: when members have racks, partitions that move are dealt to a member in a rack
 * holding one of their replicas where the counts allow (best effort: locality never changes
 * how many partitions of a topic a member gets, nor what it keeps). List the class in the
 * broker setting
 * {@code group.consumer.assignors}; clients pick it with {@code group.remote.assignor=balanced-sticky}.
 */
public class BalancedStickyAssignor implements ConsumerGroupPartitionAssignor {
    public static final String NAME = "balanced-sticky";

    @Override
    public String name() {
        return NAME;
    }

    /** Stateless: one instance serves every group, also from several threads at once. */
    @Override
    public GroupAssignment assign(GroupSpec groupSpec, SubscribedTopicDescriber topics)
            throws PartitionAssignorException {
        try {
            return compute(groupSpec, topics);
        } catch (PartitionAssignorException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new PartitionAssignorException(NAME + " could not assign: " + e, e);
        }
    }

    private GroupAssignment compute(GroupSpec groupSpec, SubscribedTopicDescriber topics) {
        List<String> members = canonicalMembers(groupSpec);
        if (members.isEmpty()) {
            return new GroupAssignment(Collections.emptyMap());
        }
        // topics: every subscribed topic id that exists with partitions, in id order
        TreeSet<Uuid> ids = new TreeSet<>();
        for (String member : members) {
            ids.addAll(groupSpec.memberSubscription(member).subscribedTopicIds());
        }
        List<Uuid> topicIds = new ArrayList<>(ids.size());
        List<Integer> sizes = new ArrayList<>(ids.size());
        for (Uuid id : ids) {
            int n = topics.numPartitions(id);
            if (n > 0) {
                topicIds.add(id);
                sizes.add(n);
            }
        }
        Map<Uuid, Integer> topicIndex = new HashMap<>();
        for (int t = 0; t < topicIds.size(); t++) {
            topicIndex.put(topicIds.get(t), t);
        }
        int[] counts = sizes.stream().mapToInt(Integer::intValue).toArray();

        int[][] subs = new int[members.size()][];
        List<List<int[]>> claims = new ArrayList<>(members.size());
        Map<Set<Uuid>, int[]> seen = new HashMap<>(); // few distinct subscriptions: once each
        for (int m = 0; m < members.size(); m++) {
            Set<Uuid> subscribed = groupSpec.memberSubscription(members.get(m)).subscribedTopicIds();
            subs[m] = seen.computeIfAbsent(subscribed, s -> s.stream()
                    .map(topicIndex::get).filter(t -> t != null)
                    .mapToInt(Integer::intValue).sorted().toArray());
            List<int[]> mine = new ArrayList<>(Collections.nCopies(counts.length, (int[]) null));
            MemberAssignment current = groupSpec.memberAssignment(members.get(m));
            if (current != null) {
                for (Map.Entry<Uuid, Set<Integer>> e : current.partitions().entrySet()) {
                    Integer t = topicIndex.get(e.getKey());
                    if (t != null && !e.getValue().isEmpty()) {
                        int[] ps = new int[e.getValue().size()];
                        int i = 0;
                        for (int p : e.getValue()) {
                            ps[i++] = p;
                        }
                        mine.set(t, ps); // ours: resolve() may sort and trim it in place
                    }
                }
            }
            claims.add(mine);
        }
        Problem problem = Problem.resolve(counts, subs, claims);
        String[] racks = new String[members.size()];
        boolean anyRack = false;
        for (int m = 0; m < members.size(); m++) {
            racks[m] = groupSpec.memberSubscription(members.get(m)).rackId().orElse(null);
            anyRack |= racks[m] != null;
        }
        if (anyRack) {
            problem.withRacks(racks, (t, p) -> {
                Set<String> where = topics.racksForPartition(topicIds.get(t), p);
                return where == null ? Collections.emptySet() : where;
            });
        }
        // by the usable subscriptions rather than GroupSpec.subscriptionType(): the same
        // answer for the broker's HOMOGENEOUS, and members that differ only in topics that do
        // not exist still get the homogeneous builder (identical arrays: cheap to compare)
        int[][][] result = sameSubscriptions(subs)
                ? new HomogeneousAssignmentBuilder(problem).build()
                : new HeterogeneousAssignmentBuilder(problem).build();

        Map<String, MemberAssignment> out = new HashMap<>(members.size() * 2);
        for (int m = 0; m < members.size(); m++) {
            String member = members.get(m);
            MemberAssignment current = groupSpec.memberAssignment(member);
            if (current != null && keepsAll(problem, result, m, subs[m], current)) {
                out.put(member, current); // unchanged: hand back the broker's own object
                continue;
            }
            Map<Uuid, Set<Integer>> partitions = new HashMap<>();
            for (int t : subs[m]) {
                int[] ps = result[m][t];
                if (ps != null && ps.length > 0) {
                    Set<Integer> set = new HashSet<>(ps.length * 2);
                    for (int p : ps) {
                        set.add(p);
                    }
                    partitions.put(topicIds.get(t), Collections.unmodifiableSet(set));
                }
            }
            out.put(member, new Assignment(Collections.unmodifiableMap(partitions)));
        }
        return new GroupAssignment(out);
    }

    /**
     * Member m gets exactly what its current assignment holds: every claim was valid (nothing
     * dropped when resolving) and its result equals its resolved claims, topic by topic.
     */
    private static boolean keepsAll(Problem problem, int[][][] result, int m, int[] subs,
            MemberAssignment current) {
        long claimed = 0;
        for (Set<Integer> ps : current.partitions().values()) {
            claimed += ps.size();
        }
        long kept = 0;
        for (int t : subs) {
            int[] got = result[m][t];
            int[] owned = problem.owned[m][t];
            int n = got == null ? 0 : got.length;
            if (n != (owned == null ? 0 : owned.length) || n > 0 && !Arrays.equals(got, owned)) {
                return false;
            }
            kept += n;
        }
        return kept == claimed;
    }

    private static boolean sameSubscriptions(int[][] subs) {
        for (int[] s : subs) {
            if (!Arrays.equals(s, subs[0])) {
                return false;
            }
        }
        return true;
    }

    /** Static members first by instance id, then the others by member id (ties: member id). */
    static List<String> canonicalMembers(GroupSpec groupSpec) {
        List<String> members = new ArrayList<>(groupSpec.memberIds());
        Map<String, String> instance = new HashMap<>(members.size() * 2);
        for (String member : members) {
            MemberSubscription sub = groupSpec.memberSubscription(member);
            Optional<String> id = sub.instanceId();
            instance.put(member, id.orElse(null));
        }
        Comparator<String> order = Comparator
                .comparing((String m) -> instance.get(m) == null ? 1 : 0)
                .thenComparing(m -> instance.get(m) == null ? m : instance.get(m))
                .thenComparing(m -> m);
        members.sort(order);
        return members;
    }
}
