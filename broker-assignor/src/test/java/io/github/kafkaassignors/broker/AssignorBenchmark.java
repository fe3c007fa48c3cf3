package io.github.kafkaassignors.broker;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

/**
 * A first side-by-side of balanced-sticky and Kafka's {@code uniform} in one JVM (not a
 * JMH harness yet): a new group (FULL) and the same group after one member leaves
 * (INCREMENTAL), identical or random unequal subscriptions; median of a few calls after
 * warm-up, total spread, worst per-topic spread, moved partitions.
 *
 * <pre>
 *   cd broker-assignor
 *   mvn -q -Pbench test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 *   java -cp target/classes:target/test-classes:$(cat target/cp.txt) \
 *       io.github.kafkaassignors.broker.AssignorBenchmark 1000 100 100 [unequal]
 * </pre>
 * Arguments: members, topics, partitions per topic, and "unequal" for random subscriptions.
 */
public final class AssignorBenchmark {
    private AssignorBenchmark() {
    }

    /** A group with an index of assigned partitions (uniform asks isPartitionAssigned a lot). */
    static final class Group implements GroupSpec {
        final Map<String, Set<Uuid>> subs = new LinkedHashMap<>();
        final Map<String, Map<Uuid, Set<Integer>>> owned = new HashMap<>();
        final Map<Uuid, Set<Integer>> assigned = new HashMap<>();

        void add(String member, Set<Uuid> topics, Map<Uuid, Set<Integer>> current) {
            subs.put(member, topics);
            // as the broker hands them over: uniform insists on unmodifiable maps
            owned.put(member, Collections.unmodifiableMap(current));
            current.forEach((t, ps) -> assigned.computeIfAbsent(t, k -> new HashSet<>()).addAll(ps));
        }

        @Override
        public Collection<String> memberIds() {
            return subs.keySet();
        }

        @Override
        public SubscriptionType subscriptionType() {
            return new HashSet<>(subs.values()).size() <= 1
                    ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        }

        @Override
        public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
            Set<Integer> ps = assigned.get(topicId);
            return ps != null && ps.contains(partitionId);
        }

        // GroupSpec has it from 4.1 (KAFKA-19344): no @Override, so the fake compiles against
        // the 4.0 api the jar is built on, and implements the method on later apis.
        public boolean isPartitionAssignable(Uuid topicId, int partitionId) {
            return true;
        }

        @Override
        public MemberSubscription memberSubscription(String memberId) {
            Set<Uuid> topics = subs.get(memberId);
            return new MemberSubscription() {
                @Override
                public Optional<String> rackId() {
                    return Optional.empty();
                }

                @Override
                public Optional<String> instanceId() {
                    return Optional.empty();
                }

                @Override
                public Set<Uuid> subscribedTopicIds() {
                    return topics;
                }
            };
        }

        @Override
        public MemberAssignment memberAssignment(String memberId) {
            return new Assignment(owned.getOrDefault(memberId, Map.of()));
        }
    }

    public static void main(String[] args) throws Exception {
        int members = Integer.parseInt(args[0]);
        int topicCount = Integer.parseInt(args[1]);
        int partitions = Integer.parseInt(args[2]);
        boolean unequal = args.length > 3 && args[3].equals("unequal");
        Map<Uuid, Integer> counts = new HashMap<>();
        List<Uuid> ids = new ArrayList<>();
        for (int t = 0; t < topicCount; t++) {
            ids.add(AssignmentTestUtil.topicId(t));
            counts.put(ids.get(t), partitions);
        }
        SubscribedTopicDescriber topics = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return counts.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                return Set.of();
            }
        };
        Random random = new Random(5);
        Map<String, Set<Uuid>> subs = new LinkedHashMap<>();
        for (int m = 0; m < members; m++) {
            Set<Uuid> s = new HashSet<>(ids);
            if (unequal) {
                s.clear();
                for (Uuid id : ids) {
                    if (random.nextInt(2) == 0) {
                        s.add(id);
                    }
                }
                s.add(ids.get(m % ids.size()));
            }
            subs.put(String.format("member-%05d", m), s);
        }
        ConsumerGroupPartitionAssignor uniform = (ConsumerGroupPartitionAssignor) Class
                .forName("org.apache.kafka.coordinator.group.assignor.UniformAssignor")
                .getDeclaredConstructor().newInstance();
        System.out.printf("%d members x %d topics x %d partitions, %s subscriptions%n", members,
                topicCount, partitions, unequal ? "unequal" : "identical");
        for (ConsumerGroupPartitionAssignor assignor
                : List.of(new BalancedStickyAssignor(), uniform)) {
            Group fresh = new Group();
            subs.forEach((m, s) -> fresh.add(m, s, Map.of()));
            GroupAssignment first = null;
            List<Long> full = new ArrayList<>();
            List<Long> incremental = new ArrayList<>();
            Group after = null;
            GroupAssignment second = null;
            for (int round = 0; round < 7; round++) {
                long t0 = System.nanoTime();
                first = assignor.assign(fresh, topics);
                full.add(System.nanoTime() - t0);
                after = new Group();
                boolean skip = true;
                for (Map.Entry<String, Set<Uuid>> e : subs.entrySet()) {
                    if (skip) {
                        skip = false; // the first member leaves
                        continue;
                    }
                    after.add(e.getKey(), e.getValue(), first.members().get(e.getKey()).partitions());
                }
                t0 = System.nanoTime();
                second = assignor.assign(after, topics);
                incremental.add(System.nanoTime() - t0);
            }
            int moved = 0;
            for (Map.Entry<String, Map<Uuid, Set<Integer>>> e : after.owned.entrySet()) {
                Set<Uuid> ts = e.getValue().keySet();
                for (Uuid t : ts) {
                    Set<Integer> now = second.members().get(e.getKey()).partitions().getOrDefault(t, Set.of());
                    for (int p : e.getValue().get(t)) {
                        moved += now.contains(p) ? 0 : 1;
                    }
                }
            }
            System.out.printf("  %-16s full %8.1f ms  incremental %8.1f ms  spread %d  topic spread %d"
                    + "  (after the leave: spread %d, topic spread %d, moved %d)%n",
                    assignor.name(), median(full), median(incremental), spread(first),
                    topicSpread(first, fresh), spread(second), topicSpread(second, after), moved);
        }
    }

    private static double median(List<Long> nanos) {
        List<Long> sorted = new ArrayList<>(nanos.subList(2, nanos.size())); // 2 warm-up calls
        sorted.sort(null);
        return sorted.get(sorted.size() / 2) / 1e6;
    }

    private static int spread(GroupAssignment a) {
        int hi = 0;
        int lo = Integer.MAX_VALUE;
        for (MemberAssignment m : a.members().values()) {
            int n = AssignmentTestUtil.load(m);
            hi = Math.max(hi, n);
            lo = Math.min(lo, n);
        }
        return hi - lo;
    }

    private static int topicSpread(GroupAssignment a, Group group) {
        Map<Uuid, int[]> range = new HashMap<>();
        group.subs.forEach((m, ts) -> {
            for (Uuid t : ts) {
                Set<Integer> ps = a.members().get(m).partitions().get(t);
                int n = ps == null ? 0 : ps.size();
                int[] r = range.computeIfAbsent(t, k -> new int[] {Integer.MAX_VALUE, 0});
                r[0] = Math.min(r[0], n);
                r[1] = Math.max(r[1], n);
            }
        });
        return range.values().stream().mapToInt(r -> r[1] - r[0]).max().orElse(0);
    }
}
