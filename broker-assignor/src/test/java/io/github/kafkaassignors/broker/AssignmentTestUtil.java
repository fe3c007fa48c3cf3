package io.github.kafkaassignors.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

/** Helpers in the spirit of Kafka's own AssignmentTestUtil, plus a fake group and metadata. */
final class AssignmentTestUtil {
    private AssignmentTestUtil() {
    }

    /** A topic id whose order is the order of {@code index} (names sorted = ids sorted). */
    static Uuid topicId(int index) {
        return new Uuid(0x6b61L, index + 1L);
    }

    /** {@code mkAssignment(t0, 0, 1, 2)}-style: one topic and its partitions. */
    static Map<Uuid, Set<Integer>> mkAssignment(Object... topicThenPartitions) {
        Map<Uuid, Set<Integer>> out = new HashMap<>();
        Uuid current = null;
        for (Object o : topicThenPartitions) {
            if (o instanceof Uuid) {
                current = (Uuid) o;
                out.computeIfAbsent(current, k -> new TreeSet<>());
            } else {
                out.get(current).add((Integer) o);
            }
        }
        return out;
    }

    static final class Member {
        final String id;
        final String instanceId;
        final Set<Uuid> topics;
        final Map<Uuid, Set<Integer>> owned;
        /** What the broker hands over: Kafka's TopicIds iterates, but its toArray throws. */
        final Set<Uuid> subscription;

        Member(String id, String instanceId, Set<Uuid> topics, Map<Uuid, Set<Integer>> owned) {
            this.id = id;
            this.instanceId = instanceId;
            this.topics = topics;
            this.owned = owned;
            this.subscription = new AbstractSet<>() {
                @Override
                public Iterator<Uuid> iterator() {
                    return topics.iterator();
                }

                @Override
                public int size() {
                    return topics.size();
                }

                @Override
                public boolean contains(Object o) {
                    return topics.contains(o);
                }

                @Override
                public Object[] toArray() {
                    throw new UnsupportedOperationException();
                }

                @Override
                public <T> T[] toArray(T[] a) {
                    throw new UnsupportedOperationException();
                }
            };
        }
    }

    /** A group as the broker hands it over: members in the given (map) order. */
    static final class FakeGroup implements GroupSpec {
        final Map<String, Member> members = new LinkedHashMap<>();
        final Map<String, String> racks = new HashMap<>();

        FakeGroup rack(String member, String rack) {
            racks.put(member, rack);
            return this;
        }

        FakeGroup add(String id, String instanceId, Set<Uuid> topics, Map<Uuid, Set<Integer>> owned) {
            members.put(id, new Member(id, instanceId, topics, owned));
            return this;
        }

        FakeGroup add(String id, Set<Uuid> topics) {
            return add(id, null, topics, new HashMap<>());
        }

        /** The same group with every member owning what {@code result} gave it. */
        FakeGroup next(GroupAssignment result) {
            FakeGroup g = new FakeGroup();
            for (Member m : members.values()) {
                MemberAssignment a = result.members().get(m.id);
                g.add(m.id, m.instanceId, m.topics, a == null ? new HashMap<>() : a.partitions());
            }
            g.racks.putAll(racks);
            return g;
        }

        @Override
        public Collection<String> memberIds() {
            return members.keySet();
        }

        @Override
        public SubscriptionType subscriptionType() {
            Set<Set<Uuid>> distinct = new HashSet<>();
            for (Member m : members.values()) {
                distinct.add(m.topics);
            }
            return distinct.size() <= 1 ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        }

        @Override
        public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
            for (Member m : members.values()) {
                Set<Integer> ps = m.owned.get(topicId);
                if (ps != null && ps.contains(partitionId)) {
                    return true;
                }
            }
            return false;
        }

        // GroupSpec has it from 4.1 (KAFKA-19344): no @Override, so the fake compiles against
        // the 4.0 api the jar is built on, and implements the method on later apis.
        public boolean isPartitionAssignable(Uuid topicId, int partitionId) {
            return true;
        }

        @Override
        public MemberSubscription memberSubscription(String memberId) {
            Member m = members.get(memberId);
            return new MemberSubscription() {
                @Override
                public Optional<String> rackId() {
                    return Optional.ofNullable(racks.get(memberId));
                }

                @Override
                public Optional<String> instanceId() {
                    return Optional.ofNullable(m.instanceId);
                }

                @Override
                public Set<Uuid> subscribedTopicIds() {
                    return m.subscription;
                }
            };
        }

        @Override
        public MemberAssignment memberAssignment(String memberId) {
            return new Assignment(members.get(memberId).owned);
        }
    }

    /** Topic metadata: id -> partitions. */
    static final class FakeTopics implements SubscribedTopicDescriber {
        final Map<Uuid, Integer> counts = new HashMap<>();
        final Map<Uuid, Map<Integer, Set<String>>> racks = new HashMap<>();

        FakeTopics racks(Uuid id, int partition, String... where) {
            racks.computeIfAbsent(id, k -> new HashMap<>()).put(partition, new HashSet<>(Arrays.asList(where)));
            return this;
        }

        FakeTopics put(Uuid id, int partitions) {
            counts.put(id, partitions);
            return this;
        }

        /**
         * A subscription as the broker hands it over (Kafka's {@code TopicIds}): a view of the
         * subscribed topic names whose {@code size()} counts every one of them, while its
         * iterator and {@code contains} skip the topics this metadata does not have yet.
         */
        Set<Uuid> subscription(Set<Uuid> subscribed) {
            return new AbstractSet<>() {
                @Override
                public int size() {
                    return subscribed.size();
                }

                @Override
                public boolean contains(Object o) {
                    return subscribed.contains(o) && counts.containsKey(o);
                }

                @Override
                public Iterator<Uuid> iterator() {
                    return subscribed.stream().filter(counts::containsKey).iterator();
                }
            };
        }

        @Override
        public int numPartitions(Uuid topicId) {
            return counts.getOrDefault(topicId, -1);
        }

        @Override
        public Set<String> racksForPartition(Uuid topicId, int partition) {
            return racks.getOrDefault(topicId, Map.of()).getOrDefault(partition, Set.of());
        }
    }

    static void assertAssignment(Map<String, Map<Uuid, Set<Integer>>> expected, GroupAssignment actual) {
        Map<String, Map<Uuid, Set<Integer>>> got = new HashMap<>();
        actual.members().forEach((m, a) -> got.put(m, a.partitions()));
        assertEquals(expected, got);
    }

    static int load(MemberAssignment a) {
        return a.partitions().values().stream().mapToInt(Set::size).sum();
    }

    /** Most minus fewest partitions held by a member. */
    static int spread(GroupAssignment result) {
        int hi = Integer.MIN_VALUE;
        int lo = Integer.MAX_VALUE;
        for (MemberAssignment a : result.members().values()) {
            hi = Math.max(hi, load(a));
            lo = Math.min(lo, load(a));
        }
        return result.members().isEmpty() ? 0 : hi - lo;
    }

    /** Worst over topics of most minus fewest of the topic held by one of its subscribers. */
    static int topicSpread(FakeGroup group, GroupAssignment result) {
        Map<Uuid, int[]> range = new HashMap<>();
        for (Member m : group.members.values()) {
            MemberAssignment a = result.members().get(m.id);
            for (Uuid t : m.topics) {
                Set<Integer> ps = a.partitions().get(t);
                int n = ps == null ? 0 : ps.size();
                int[] r = range.computeIfAbsent(t, k -> new int[] {Integer.MAX_VALUE, Integer.MIN_VALUE});
                r[0] = Math.min(r[0], n);
                r[1] = Math.max(r[1], n);
            }
        }
        int worst = 0;
        for (int[] r : range.values()) {
            worst = Math.max(worst, r[1] - r[0]);
        }
        return worst;
    }

    /** Partitions a member owned before and that now belong to another member (topics still there). */
    static int moved(FakeGroup before, GroupAssignment after, FakeTopics topics) {
        int moved = 0;
        for (Member m : before.members.values()) {
            MemberAssignment a = after.members().get(m.id);
            for (Map.Entry<Uuid, Set<Integer>> e : m.owned.entrySet()) {
                int n = topics.numPartitions(e.getKey());
                Set<Integer> now = a == null ? Set.of() : a.partitions().getOrDefault(e.getKey(), Set.of());
                for (int p : e.getValue()) {
                    if (p >= 0 && p < n && !now.contains(p)) {
                        moved++;
                    }
                }
            }
        }
        return moved;
    }

    /**
     * Every partition of every subscribed topic assigned exactly once, to a subscriber; every
     * member present; and total balance: no member holds two more than another member that
     * could take one of its partitions along a chain (checked as: no subscriber of a topic held
     * by a member with k+2 or more has k or fewer when both share that topic).
     */
    static void assertValidAndBalanced(FakeGroup group, FakeTopics topics, GroupAssignment result) {
        assertEquals(group.members.keySet(), result.members().keySet(), "every member gets an assignment");
        Map<Uuid, Set<Integer>> seen = new HashMap<>();
        Set<Uuid> subscribed = new HashSet<>();
        for (Member m : group.members.values()) {
            subscribed.addAll(m.topics);
            for (Map.Entry<Uuid, Set<Integer>> e : result.members().get(m.id).partitions().entrySet()) {
                assertTrue(m.topics.contains(e.getKey()), m.id + " got a topic it does not subscribe to");
                Set<Integer> all = seen.computeIfAbsent(e.getKey(), k -> new HashSet<>());
                for (int p : e.getValue()) {
                    if (!all.add(p)) {
                        fail(e.getKey() + "-" + p + " assigned twice");
                    }
                    int n = topics.numPartitions(e.getKey());
                    assertTrue(p >= 0 && p < n, "partition out of range");
                }
            }
        }
        for (Uuid t : subscribed) {
            int n = Math.max(0, topics.numPartitions(t));
            assertEquals(n, seen.getOrDefault(t, Set.of()).size(), "every partition of " + t + " assigned");
        }
        List<Member> list = new ArrayList<>(group.members.values());
        for (Member a : list) {
            int la = load(result.members().get(a.id));
            for (Member b : list) {
                int lb = load(result.members().get(b.id));
                if (la < lb + 2) {
                    continue;
                }
                for (Uuid t : a.topics) {
                    Set<Integer> held = result.members().get(a.id).partitions().get(t);
                    if (held != null && !held.isEmpty() && b.topics.contains(t)) {
                        fail(a.id + " holds " + la + " and " + b.id + " only " + lb + " though both take " + t
                                + " (" + Arrays.toString(new int[] {la, lb}) + ")");
                    }
                }
            }
        }
    }
}
