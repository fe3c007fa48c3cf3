package io.github.kafkaassignors.broker;

import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

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

    private final boolean fastPaths;
    private final boolean bySize;

    public BalancedStickyAssignor() {
        this(true);
    }

    /** @param fastPaths false: always the general path (tests compare the two) */
    BalancedStickyAssignor(boolean fastPaths) {
        this(fastPaths, fastPaths);
    }

    /** @param bySize false: every claim read and resolved (tests compare the two) */
    BalancedStickyAssignor(boolean fastPaths, boolean bySize) {
        this.fastPaths = fastPaths;
        this.bySize = bySize;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Stateless: one instance serves every group, also from several threads at once. */
    @Override
    public GroupAssignment assign(GroupSpec groupSpec, SubscribedTopicDescriber topics)
            throws PartitionAssignorException {
        try {
            return compute(groupSpec, topics, null);
        } catch (PartitionAssignorException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new PartitionAssignorException(NAME + " could not assign: " + e, e);
        }
    }

    /**
     * For the benchmark: the assignment, and in {@code path} (when not null) which path
     * computed it (see {@link Path}).
     */
    GroupAssignment assign(GroupSpec groupSpec, SubscribedTopicDescriber topics, Path.Sink path) {
        return compute(groupSpec, topics, path);
    }

    private GroupAssignment compute(GroupSpec groupSpec, SubscribedTopicDescriber topics,
            Path.Sink path) {
        // identical subscriptions (the broker says so): filled with each member's current
        // assignment (unless empty) while its id is at hand (hashed, in cache), the fast
        // paths replace what changes; otherwise every member is put once its assignment is known
        Map<String, MemberAssignment> out = new HashMap<>(groupSpec.memberIds().size() * 2);
        boolean prefilled = groupSpec.subscriptionType() == SubscriptionType.HOMOGENEOUS;
        CanonicalKey[] keys = canonicalKeys(groupSpec, prefilled ? out : null);
        if (keys.length == 0) {
            return new GroupAssignment(Collections.emptyMap());
        }
        String[] members = new String[keys.length];
        MemberSubscription[] specs = new MemberSubscription[keys.length];
        MemberAssignment[] current = new MemberAssignment[keys.length];
        String[] racks = new String[keys.length];
        boolean anyRack = false;
        for (int m = 0; m < keys.length; m++) { // one pass over the keys: each is touched once
            members[m] = keys[m].member;
            specs[m] = keys[m].subscription;
            current[m] = keys[m].assignment;
            racks[m] = keys[m].rack;
            anyRack |= racks[m] != null;
        }
        // canonical positions in the order the broker listed the members: their sets are read
        // in that order (about the order they lie in memory)
        int[] listed = new int[keys.length];
        for (int m = 0; m < keys.length; m++) {
            listed[keys[m].listed] = m;
        }
        Subscriptions subscriptions = Subscriptions.read(groupSpec, members, specs, topics,
                listed);
        List<Uuid> topicIds = subscriptions.topicIds;
        int[][] subs = subscriptions.subs;
        boolean same = sameSubscriptions(subs);
        if (same && fastPaths) {
            GroupAssignment fast = HomogeneousFastPath.assign(groupSpec, members, anyRack,
                    current, subscriptions, out, prefilled, path);
            if (fast != null) {
                return fast;
            }
        }
        int[] claimed = new int[members.length];
        // by size when the claims are disjoint (what the broker hands over): only members
        // whose counts change have their partitions read
        Problem problem = bySize && !anyRack
                ? OwnedSizes.read(groupSpec, subscriptions, current, claimed, listed) : null;
        if (problem == null) {
            Arrays.fill(claimed, 0);
            int[][][] claims = readClaims(members, subscriptions, claimed, current);
            problem = Problem.resolveSubscribed(subscriptions.counts, subs, claims);
        }
        if (anyRack) {
            problem.withRacks(racks, (t, p) -> {
                Set<String> where = topics.racksForPartition(topicIds.get(t), p);
                return where == null ? Collections.emptySet() : where;
            });
        }
        // by the usable subscriptions: members that differ only in topics that do not exist
        // still get the homogeneous builder (equal subscriptions share one array: cheap)
        int[][][] result;
        if (same) {
            Path.note(path, Path.IDENTICAL_GENERAL);
            result = new HomogeneousAssignmentBuilder(problem).build();
        } else {
            result = new HeterogeneousAssignmentBuilder(problem, fastPaths, path).build();
        }

        for (int m = 0; m < members.length; m++) {
            if (result[m] == null) { // read by size: keeps exactly what it owns
                out.put(members[m], current[m] != null ? current[m]
                        : new Assignment(Collections.emptyMap()));
                continue;
            }
            if (current[m] != null && keepsAll(problem, result, m, claimed[m])) {
                out.put(members[m], current[m]); // unchanged: hand back the broker's own object
                continue;
            }
            Map<Uuid, Set<Integer>> partitions = new HashMap<>();
            for (int t : subs[m]) {
                int[] ps = result[m][t];
                if (ps != null && ps.length > 0) {
                    partitions.put(topicIds.get(t), new PartitionSet(ps));
                }
            }
            out.put(members[m], new Assignment(Collections.unmodifiableMap(partitions)));
        }
        return new GroupAssignment(out);
    }

    /**
     * Member -> topic -> partitions its current assignment claims, only on topics it
     * subscribes to (any order, may hold junk: {@link Problem#resolve} sorts it out);
     * claimed[m] gets the size of member m's whole current assignment, current[m].
     */
    private static int[][][] readClaims(String[] members, Subscriptions subscriptions,
            int[] claimed, MemberAssignment[] current) {
        ClaimReader reader = new ClaimReader(subscriptions, members.length, claimed);
        for (int m = 0; m < members.length; m++) {
            if (current[m] != null) {
                reader.member = m;
                current[m].partitions().forEach(reader); // no iterator: a third faster
            }
        }
        return reader.claims;
    }

    /** One member's sets into {@link #claims}, for {@link #readClaims}. */
    private static final class ClaimReader implements BiConsumer<Uuid, Set<Integer>>, Consumer<Integer> {
        final Subscriptions subscriptions;
        final int[][][] claims;
        final int[] claimed;
        int member;
        // one set's partitions, as Set.forEach hands them over (a wrapper passes the action
        // on instead of wrapping an iterator; a HashSet itself still iterates)
        private int[] ps;
        private int size;

        ClaimReader(Subscriptions subscriptions, int members, int[] claimed) {
            this.subscriptions = subscriptions;
            this.claims = new int[members][subscriptions.counts.length][];
            this.claimed = claimed;
        }

        @Override
        public void accept(Uuid topicId, Set<Integer> set) {
            int n = set.size();
            claimed[member] += n;
            int t = subscriptions.topicIndex.get(topicId);
            if (t < 0 || n == 0 || !subscriptions.subscribes(member, t)) {
                return;
            }
            ps = new int[n];
            size = 0;
            set.forEach(this);
            claims[member][t] = size == ps.length ? ps : Arrays.copyOf(ps, size);
        }

        @Override
        public void accept(Integer p) {
            if (size == ps.length) {
                ps = Arrays.copyOf(ps, 2 * size + 1); // a set whose size() undercounts: be safe
            }
            ps[size++] = p;
        }
    }

    /**
     * Member m gets exactly what its current assignment holds: every claim was valid (nothing
     * dropped when resolving) and it gets as many partitions of each topic as it owns (the
     * {@link Dealer} keeps the lowest owned partitions up to the count, so the same count
     * means the same partitions).
     */
    private static boolean keepsAll(Problem problem, int[][][] result, int m, int claimed) {
        long kept = 0;
        for (int t : problem.subs[m]) {
            int[] got = result[m][t];
            int n = got == null ? 0 : got.length;
            if (n != problem.ownedCount(m, t)) {
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
    static String[] canonicalMembers(GroupSpec groupSpec) {
        return ids(canonicalKeys(groupSpec, null));
    }

    /**
     * The members in canonical order, each with its subscription and current assignment
     * (looked up once, both while the member's id is at hand); {@code out} (unless null) gets
     * each member's current assignment unless it is empty.
     */
    private static CanonicalKey[] canonicalKeys(GroupSpec groupSpec,
            Map<String, MemberAssignment> out) {
        Collection<String> ids = groupSpec.memberIds();
        CanonicalKey[] keys = new CanonicalKey[ids.size()];
        int i = 0;
        boolean dynamic = true;
        for (String member : ids) {
            keys[i] = new CanonicalKey(member, groupSpec.memberSubscription(member),
                    groupSpec.memberAssignment(member), i);
            MemberAssignment owned = keys[i].assignment;
            if (out != null && owned != null && !owned.partitions().isEmpty()) {
                out.put(member, owned);
            }
            dynamic &= keys[i++].instance == null;
        }
        if (dynamic && keys.length <= 1 << 16) {
            return byPrefix(keys);
        }
        Arrays.sort(keys);
        return keys;
    }

    /**
     * Dynamic members only, by member id: sorted on the first six characters packed into a
     * long (with the index in the low 16 bits), then runs that share those characters by the
     * whole id. The same order as comparing the ids, in a fraction of the time.
     */
    private static CanonicalKey[] byPrefix(CanonicalKey[] keys) {
        long[] packed = new long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            String id = keys[i].member;
            long prefix = 0;
            for (int c = 0; c < 6; c++) {
                char ch = c < id.length() ? id.charAt(c) : 0;
                if (ch > 0x7f) {
                    Arrays.sort(keys);
                    return keys;
                }
                prefix = prefix << 8 | ch;
            }
            packed[i] = prefix << 16 | i;
        }
        Arrays.sort(packed); // ASCII: prefixes below 2^47, the packed longs are positive
        CanonicalKey[] sorted = new CanonicalKey[keys.length];
        for (int i = 0; i < keys.length; i++) {
            sorted[i] = keys[(int) (packed[i] & 0xffff)];
        }
        for (int i = 0; i < keys.length; ) {
            int j = i + 1;
            while (j < keys.length && packed[j] >>> 16 == packed[i] >>> 16) {
                j++;
            }
            if (j - i > 1) {
                Arrays.sort(sorted, i, j); // dynamic members: by member id
            }
            i = j;
        }
        return sorted;
    }

    private static String[] ids(CanonicalKey[] keys) {
        String[] members = new String[keys.length];
        for (int i = 0; i < keys.length; i++) {
            members[i] = keys[i].member;
        }
        return members;
    }

    /** A member's sort key, computed once (a comparator looking it up cost more than the sort). */
    private static final class CanonicalKey implements Comparable<CanonicalKey> {
        final String member;
        final String instance; // null for a dynamic member
        final String rack; // null: none
        final MemberSubscription subscription;
        final MemberAssignment assignment; // null: none
        final int listed; // its position in the broker's list

        CanonicalKey(String member, MemberSubscription subscription, MemberAssignment assignment,
                int listed) {
            this.member = member;
            this.listed = listed;
            this.instance = subscription.instanceId().orElse(null);
            this.rack = subscription.rackId().orElse(null);
            this.subscription = subscription;
            this.assignment = assignment;
        }

        @Override
        public int compareTo(CanonicalKey o) {
            if ((instance == null) != (o.instance == null)) {
                return instance != null ? -1 : 1;
            }
            if (instance != null) {
                int c = instance.compareTo(o.instance);
                if (c != 0) {
                    return c;
                }
            }
            return member.compareTo(o.member);
        }
    }
}
