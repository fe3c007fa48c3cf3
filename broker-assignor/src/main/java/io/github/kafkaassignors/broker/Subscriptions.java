package io.github.kafkaassignors.broker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
    /**
     * With at most 64 topics, member -> its topics as bits: {@link #subscribes} reads one long
     * from one array instead of each member's own (every owned set of every member is
     * checked); null with more topics.
     */
    private final long[] bits;

    private Subscriptions(List<Uuid> topicIds, UuidIndex topicIndex, int[] counts,
            int[][] subs, long[] bits) {
        this.topicIds = topicIds;
        this.topicIndex = topicIndex;
        this.counts = counts;
        this.subs = subs;
        this.bits = bits;
    }

    /** @param members in canonical order */
    static Subscriptions read(GroupSpec groupSpec, String[] members,
            SubscribedTopicDescriber describer) {
        MemberSubscription[] specs = new MemberSubscription[members.length];
        for (int m = 0; m < members.length; m++) {
            specs[m] = groupSpec.memberSubscription(members[m]);
        }
        return read(groupSpec, members, specs, describer, null);
    }

    /**
     * @param specs each member's subscription, in the order of {@code members}
     * @param visit the order to read them in (null: theirs): the result is the same in any
     *     order, and the order the broker lists its members in reads its sets in about the
     *     order they lie in memory (a third faster on 10,000 members than canonical order)
     */
    static Subscriptions read(GroupSpec groupSpec, String[] members, MemberSubscription[] specs,
            SubscribedTopicDescriber describer, int[] visit) {
        // every topic id once, numbered as met (renumbered in id order below); each distinct
        // subscription once, as provisional topic numbers
        Numbering met = new Numbering();
        List<Uuid> seen = met.seen;
        List<int[]> distinct = new ArrayList<>();
        int[] kind = new int[members.length];
        if (groupSpec.subscriptionType() == SubscriptionType.HOMOGENEOUS) {
            // the broker counts subscribers per topic: trusted as Kafka's own assignors do
            // (comparing 5,000 sets of 100 topics cost more than the whole assignment)
            distinct.add(met.copy(met.number(specs[0].subscribedTopicIds())));
        } else {
            // the broker hands each member a new set object (its TopicIds), so equal
            // subscriptions are found by content: members that share one share its array,
            // and it is renumbered and sorted once. A subscription of a few topics is also
            // packed into one long, compared in the table itself (thousands of small arrays
            // read back to compare missed the cache)
            int[] table = new int[Integer.highestOneBit(Math.max(4, members.length) * 2 - 1) << 1];
            long[] packed = new long[table.length];
            Arrays.fill(table, -1);
            int mask = table.length - 1;
            for (int r = 0; r < members.length; r++) {
                int m = visit == null ? r : visit[r];
                int n = met.number(specs[m].subscribedTopicIds());
                long key = met.pack(n);
                int i = met.hash(n) & mask;
                while (table[i] >= 0 && (key != packed[i]
                        || key < 0 && !met.equalsScratch(distinct.get(table[i]), n))) {
                    i = (i + 1) & mask;
                }
                if (table[i] < 0) {
                    table[i] = distinct.size();
                    packed[i] = key;
                    distinct.add(met.copy(n));
                }
                kind[m] = table[i];
            }
        }
        int[][] provisional = distinct.toArray(new int[0][]);

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
        long[] scratch = new long[(counts.length + 63) >>> 6];
        for (int k = 0; k < numbered.length; k++) {
            int[] ts = provisional[k];
            int kept = 0;
            for (int t : ts) {
                if (renumber[t] >= 0) {
                    ts[kept++] = renumber[t];
                }
            }
            int[] mine = kept == ts.length ? ts : Arrays.copyOf(ts, kept);
            sort(mine, scratch);
            numbered[k] = mine;
        }
        int[][] subs = new int[members.length][];
        long[] kindBits = counts.length <= 64 ? new long[numbered.length] : null;
        for (int k = 0; kindBits != null && k < numbered.length; k++) {
            for (int t : numbered[k]) {
                kindBits[k] |= 1L << t;
            }
        }
        long[] bits = kindBits != null ? new long[members.length] : null;
        for (int m = 0; m < members.length; m++) {
            subs[m] = numbered[kind[m]];
            if (bits != null) {
                bits[m] = kindBits[kind[m]];
            }
        }
        return new Subscriptions(topicIds, topicIndex, counts, subs, bits);
    }

    /**
     * Ascending, in place: a subscription of a few topics by
     * insertion (thousands of distinct small subscriptions; Arrays.sort's dispatch cost more
     * than the sorting), others as the bits of {@code scratch} (one bit per topic, left all
     * zero), read back in order: linear, where sorting each of a thousand subscriptions of
     * fifty topics cost a sixth of an assignment.
     */
    private static void sort(int[] ts, long[] scratch) {
        if (ts.length > 16) {
            for (int t : ts) {
                if ((scratch[t >>> 6] & 1L << t) != 0) { // a set that lists a topic twice
                    Arrays.fill(scratch, 0);
                    Arrays.sort(ts);
                    return;
                }
                scratch[t >>> 6] |= 1L << t;
            }
            int i = 0;
            for (int w = 0; w < scratch.length; w++) {
                for (long b = scratch[w]; b != 0; b &= b - 1) {
                    ts[i++] = w << 6 | Long.numberOfTrailingZeros(b);
                }
                scratch[w] = 0;
            }
            return;
        }
        for (int i = 1; i < ts.length; i++) {
            int v = ts[i];
            int j = i - 1;
            while (j >= 0 && ts[j] > v) {
                ts[j + 1] = ts[j];
                j--;
            }
            ts[j + 1] = v;
        }
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
        private int[] ts = new int[16]; // the last set's numbers (scratch)
        private int size;

        /** Numbers the set's ids into the scratch; returns how many. */
        int number(Set<Uuid> set) {
            if (ts.length < set.size()) {
                ts = new int[set.size()];
            }
            size = 0;
            set.forEach(this);
            return size;
        }

        int[] copy(int n) {
            return Arrays.copyOf(ts, n);
        }

        int hash(int n) {
            int h = n;
            for (int i = 0; i < n; i++) {
                h = 31 * h + ts[i];
            }
            return h * 0x9E3779B9 >>> 7;
        }

        /**
         * The scratch's n numbers in one long (its length in the low 3 bits, then 12 bits
         * each): equal longs, equal subscriptions; -1 when they do not fit (compare arrays).
         */
        long pack(int n) {
            if (n > 5) {
                return -1;
            }
            long key = n;
            for (int i = 0; i < n; i++) {
                if (ts[i] >= 1 << 12) {
                    return -1;
                }
                key |= (long) ts[i] << (3 + 12 * i);
            }
            return key;
        }

        boolean equalsScratch(int[] a, int n) {
            return Arrays.equals(a, 0, a.length, ts, 0, n);
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

    /** Whether member m subscribes to topic t: its bit, or a look through its (few or sorted) topics. */
    boolean subscribes(int m, int t) {
        if (bits != null) {
            return t >= 0 && t < counts.length && (bits[m] & 1L << t) != 0;
        }
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
