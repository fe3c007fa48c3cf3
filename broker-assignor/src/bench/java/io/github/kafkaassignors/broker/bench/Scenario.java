package io.github.kafkaassignors.broker.bench;

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
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

/**
 * A benchmark group, seeded: topics with their partition counts and members with their
 * subscriptions. Names: {@code homogeneous-<members>x<partitions>} (100 topics, every member
 * subscribes to all, as Kafka's own assignor benchmarks), {@code random-<members>x<partitions>}
 * (100 topics of equal size, each member subscribes to each with probability 1/2) and
 * {@code few-<members>} (50 topics of 10 to 400 partitions, each member subscribes to 1 to 5 of
 * them: uneven subscriptions where a greedy assignor leaves total balance on the table).
 */
public final class Scenario {
    public static final List<String> ALL = List.of(
            "homogeneous-1000x10000", "homogeneous-5000x50000", "homogeneous-10000x100000",
            "random-1000x10000", "random-5000x50000", "few-1000", "few-5000", "few-10000");
    /** What happens to a group after it was assigned: see {@link #after}. */
    public static final List<String> EVENTS = List.of("leave", "join", "resubscribe", "grow");

    final String name;
    final Map<Uuid, Integer> partitions = new LinkedHashMap<>();
    /** Member id -> subscribed topic ids, in the order the group lists its members. */
    final Map<String, Set<Uuid>> subscriptions = new LinkedHashMap<>();

    private Scenario(String name) {
        this.name = name;
    }

    /**
     * The same group after an event: {@code leave}, its first member leaves; {@code join}, a
     * new member joins with the first member's subscription; {@code resubscribe}, the first
     * member swaps its first topic (in topic order) for the first it lacks (drops it when it
     * has them all); {@code grow}, the first topic gains a tenth more partitions (at least 1).
     */
    public Scenario after(String event) {
        Scenario s = new Scenario(name + "/" + event);
        s.partitions.putAll(partitions);
        s.subscriptions.putAll(subscriptions);
        String first = subscriptions.keySet().iterator().next();
        Uuid firstTopic = partitions.keySet().iterator().next();
        switch (event) {
            case "leave" -> s.subscriptions.remove(first);
            case "join" -> s.subscriptions.put(memberId(new Random(~name.hashCode())),
                    new HashSet<>(subscriptions.get(first)));
            case "resubscribe" -> {
                Set<Uuid> mine = new HashSet<>(subscriptions.get(first));
                Uuid drop = null;
                Uuid add = null;
                for (Uuid t : partitions.keySet()) {
                    if (drop == null && mine.contains(t)) {
                        drop = t;
                    }
                    if (add == null && !mine.contains(t)) {
                        add = t;
                    }
                }
                mine.remove(drop);
                if (add != null) {
                    mine.add(add);
                }
                s.subscriptions.put(first, mine);
            }
            case "grow" -> s.partitions.put(firstTopic, partitions.get(firstTopic)
                    + Math.max(1, partitions.get(firstTopic) / 10));
            default -> throw new IllegalArgumentException("no event " + event);
        }
        return s;
    }

    /**
     * This group's members, each owning what {@code previous} gave it (nothing if it is new),
     * copied into plain sets as the broker rebuilds a target assignment from its records.
     */
    public Group owning(GroupAssignment previous) {
        Group group = new Group();
        subscriptions.forEach((m, topics) -> {
            Map<Uuid, Set<Integer>> owned = new HashMap<>();
            MemberAssignment before = previous.members().get(m);
            if (before != null) {
                // plain HashSets in an unmodifiable map: what the broker's Assignment.fromRecord builds
                before.partitions().forEach((t, ps) -> owned.put(t, new HashSet<>(ps)));
            }
            group.add(m, topics, owned);
        });
        return group.done();
    }

    public static Scenario of(String name) {
        Scenario s = new Scenario(name);
        Random random = new Random(name.hashCode());
        String[] parts = name.split("-", 2);
        if (parts[0].equals("nested")) {
            // the live test's shape (integration_tests/test_broker_assignor_live.py), scaled:
            // topics of 7k, 3k and 5k partitions, members of five kinds in turn
            int members = Integer.parseInt(parts[1]);
            int k = 2 * members / 3;
            List<Uuid> ids = s.topics(3, random);
            int[] sizes = {7 * k, 3 * k, 5 * k};
            for (int t = 0; t < 3; t++) {
                s.partitions.put(ids.get(t), sizes[t]);
            }
            int[][] kinds = {{0, 1}, {0}, {0, 1, 2}, {2}, {0, 2}};
            for (int m = 0; m < members; m++) {
                Set<Uuid> mine = new HashSet<>();
                for (int t : kinds[m % kinds.length]) {
                    mine.add(ids.get(t));
                }
                s.subscriptions.put(memberId(random), mine);
            }
            return s;
        }
        if (parts[0].equals("few")) {
            int members = Integer.parseInt(parts[1]);
            List<Uuid> ids = s.topics(50, random);
            for (Uuid id : ids) {
                s.partitions.put(id, 10 + random.nextInt(391));
            }
            for (int m = 0; m < members; m++) {
                Set<Uuid> mine = new HashSet<>();
                int n = 1 + random.nextInt(5);
                while (mine.size() < n) {
                    mine.add(ids.get(random.nextInt(ids.size())));
                }
                s.subscriptions.put(memberId(random), mine);
            }
            return s;
        }
        String[] size = parts[1].split("x");
        int members = Integer.parseInt(size[0]);
        int total = Integer.parseInt(size[1]);
        List<Uuid> ids = s.topics(100, random);
        for (Uuid id : ids) {
            s.partitions.put(id, total / ids.size());
        }
        boolean homogeneous = parts[0].equals("homogeneous");
        for (int m = 0; m < members; m++) {
            Set<Uuid> mine = new HashSet<>(); // one set per member, as on the broker
            for (int t = 0; t < ids.size(); t++) {
                if (homogeneous || t == m % ids.size() || random.nextBoolean()) {
                    mine.add(ids.get(t));
                }
            }
            s.subscriptions.put(memberId(random), mine);
        }
        return s;
    }

    private List<Uuid> topics(int count, Random random) {
        List<Uuid> ids = new ArrayList<>(count);
        for (int t = 0; t < count; t++) {
            ids.add(new Uuid(random.nextLong(), random.nextLong()));
        }
        return ids;
    }

    /** Like the broker's member ids: a random Uuid's string, here seeded. */
    private static String memberId(Random random) {
        return new Uuid(random.nextLong(), random.nextLong()).toString();
    }

    public SubscribedTopicDescriber describer() {
        return new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return partitions.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                return Set.of();
            }
        };
    }

    /** Every member joins a new group: nobody owns anything. */
    public Group fresh() {
        Group group = new Group();
        subscriptions.forEach((m, topics) -> group.add(m, topics, Map.of()));
        return group.done();
    }

    /**
     * The first member listed leaves; the others own what {@code previous} gave them, copied
     * into plain sets as the broker rebuilds a target assignment from its records.
     */
    public Group afterLeave(GroupAssignment previous) {
        Group group = new Group();
        boolean first = true;
        for (Map.Entry<String, Set<Uuid>> e : subscriptions.entrySet()) {
            if (first) {
                first = false;
                continue;
            }
            Map<Uuid, Set<Integer>> owned = new HashMap<>();
            previous.members().get(e.getKey()).partitions()
                    .forEach((t, ps) -> owned.put(t, new HashSet<>(ps)));
            group.add(e.getKey(), e.getValue(), owned);
        }
        return group.done();
    }

    /** The assignor under test: ours, or Kafka's uniform (loaded by name: bench classpath only). */
    public static ConsumerGroupPartitionAssignor assignor(String name) {
        try {
            if (name.equals("balanced-sticky")) {
                return new io.github.kafkaassignors.broker.BalancedStickyAssignor();
            }
            if (name.equals("uniform")) {
                return (ConsumerGroupPartitionAssignor) Class
                        .forName("org.apache.kafka.coordinator.group.assignor.UniformAssignor")
                        .getDeclaredConstructor().newInstance();
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        throw new IllegalArgumentException("no assignor " + name);
    }

    /**
     * A group as the broker hands it over: Kafka's own {@code GroupSpecImpl} (its member
     * objects answer both the subscription and the assignment, one lookup per member), the
     * subscription type computed once, plain sets in an unmodifiable map as the broker rebuilds
     * a target assignment from its records, the index of assigned partitions. The benchmark
     * keeps the owned sets beside it for the quality columns.
     */
    public static final class Group implements GroupSpec {
        final Map<String, MemberSubscriptionAndAssignmentImpl> subs = new LinkedHashMap<>();
        final Map<String, MemberAssignment> owned = new HashMap<>();
        private final Map<Uuid, Map<Integer, String>> assigned = new HashMap<>();
        private GroupSpec spec;

        void add(String member, Set<Uuid> topics, Map<Uuid, Set<Integer>> current) {
            Set<Uuid> mine = Collections.unmodifiableSet(topics);
            MemberSubscriptionAndAssignmentImpl both = new MemberSubscriptionAndAssignmentImpl(
                    Optional.empty(), Optional.empty(), mine,
                    new org.apache.kafka.coordinator.group.modern.Assignment(current));
            subs.put(member, both);
            owned.put(member, both);
            current.forEach((t, ps) -> {
                Map<Integer, String> index = assigned.computeIfAbsent(t, k -> new HashMap<>());
                ps.forEach(p -> index.put(p, member));
            });
        }

        Group done() {
            Set<Set<Uuid>> distinct = new HashSet<>();
            subs.values().forEach(s -> distinct.add(s.subscribedTopicIds()));
            SubscriptionType type = distinct.size() <= 1 ? SubscriptionType.HOMOGENEOUS
                    : SubscriptionType.HETEROGENEOUS;
            spec = new GroupSpecImpl(subs, type, assigned);
            return this;
        }

        @Override
        public Collection<String> memberIds() {
            return spec.memberIds();
        }

        @Override
        public SubscriptionType subscriptionType() {
            return spec.subscriptionType();
        }

        @Override
        public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
            return spec.isPartitionAssigned(topicId, partitionId);
        }

        @Override
        public boolean isPartitionAssignable(Uuid topicId, int partitionId) {
            return spec.isPartitionAssignable(topicId, partitionId);
        }

        @Override
        public MemberSubscription memberSubscription(String memberId) {
            return spec.memberSubscription(memberId);
        }

        @Override
        public MemberAssignment memberAssignment(String memberId) {
            return spec.memberAssignment(memberId);
        }
    }
}
