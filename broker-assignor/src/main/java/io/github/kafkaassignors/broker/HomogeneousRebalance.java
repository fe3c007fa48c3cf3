package io.github.kafkaassignors.broker;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/**
 * The small-change path for identical subscriptions without racks: a stable group where a
 * member left, crashed or joined, or partitions were added. Worked from the sizes of the
 * members' sets: every member keeps what it owns up to floor(n/M) + 1 of each topic (members
 * over the new quota give up the excess, {@link #dropExcess}); the free partitions are found
 * with {@link GroupSpec#isPartitionAssigned} (their number checked against what the sizes
 * leave); only the sets of members that shed or gain are read. Returns null whenever an
 * assumption fails, and the general path decides. Single use: construct, call {@link #run}.
 */
final class HomogeneousRebalance {
    final GroupSpec spec;
    final String[] members;
    final Subscriptions s;
    final MemberAssignment[] current;
    final Map<String, MemberAssignment> out;
    final boolean prefilled; // out holds each member's current assignment already (unless empty)
    final int size;
    final int topics;
    final int[] base;
    final int[] need; // extras of each topic still to place
    final int[] deg; // extras a member holds
    // the members' non-empty sets on our topics: entries start[m]..start[m+1]-1
    int[] start;
    int[] entryTopic;
    int[] entrySize;
    Map<Uuid, Set<Integer>>[] maps;
    int entries;

    HomogeneousRebalance(GroupSpec spec, String[] members, Subscriptions s,
            MemberAssignment[] current, Map<String, MemberAssignment> out, boolean prefilled) {
        this.spec = spec;
        this.out = out;
        this.prefilled = prefilled;
        this.members = members;
        this.s = s;
        this.current = current;
        this.size = members.length;
        this.topics = s.counts.length;
        this.base = new int[topics];
        this.need = new int[topics];
        this.deg = new int[size];
    }

    @SuppressWarnings("unchecked")
    GroupAssignment run() {
        long total = 0;
        int withBase = 0;
        for (int t = 0; t < topics; t++) {
            base[t] = s.counts[t] / size;
            need[t] = s.counts[t] % size;
            total += need[t];
            if (base[t] > 0) {
                withBase++;
            }
        }
        int quota = (int) (total / size);
        int bonus = (int) (total % size);
        // sizes only: which extras members hold, who sheds, who lacks a topic's floor
        // (every stored entry holds a partition of ours: at most min(P, M x T) of them)
        start = new int[size + 1];
        maps = new Map[size];
        long all = 0;
        for (int n : s.counts) {
            all += n;
        }
        int most = (int) Math.min(all, (long) size * topics);
        entryTopic = new int[most];
        entrySize = new int[most];
        claimed = new long[topics];
        holders = new int[topics];
        sheds = new boolean[size];
        listed = new boolean[size];
        short_ = new boolean[size];
        BiConsumer<Uuid, Set<Integer>> visit = this::visit;
        for (int m = 0; m < size; m++) {
            start[m] = entries;
            member = m;
            atBase = 0;
            if (current[m] != null) {
                maps[m] = current[m].partitions();
                listed[m] = !maps[m].isEmpty(); // while the map is in cache
                maps[m].forEach(visit); // no iterator: a third faster on 50,000 small sets
                if (bad) {
                    return null;
                }
            }
            short_[m] |= atBase < withBase;
        }
        start[size] = entries;
        for (int t = 0; t < topics; t++) {
            if (need[t] < 0 || claimed[t] > s.counts[t]) {
                return null;
            }
        }
        dropExcess(quota, bonus);
        // the free partitions: exactly as many as the sizes leave, or claims are not disjoint
        int[][] pool = new int[topics][];
        int[] poolSize = new int[topics];
        for (int t = 0; t < topics; t++) {
            int free = (int) (s.counts[t] - claimed[t]);
            pool[t] = new int[free];
            if (free == 0) {
                continue; // fully claimed (the broker's target assignment is disjoint)
            }
            if (claimed[t] == 0) {
                for (int p = 0; p < free; p++) {
                    pool[t][p] = p;
                }
                poolSize[t] = free;
                continue;
            }
            Uuid id = s.topicIds.get(t);
            for (int p = 0; p < s.counts[t]; p++) {
                if (!spec.isPartitionAssigned(id, p)) {
                    if (poolSize[t] == free) {
                        return null;
                    }
                    pool[t][poolSize[t]++] = p;
                }
            }
            if (poolSize[t] != free) {
                return null;
            }
        }
        // shedders keep their lowest partitions up to floor + 1 of each topic
        int[][] keptOf = null; // entry -> the partitions a shedder keeps
        for (int m = 0; m < size; m++) {
            if (!sheds[m]) {
                continue;
            }
            for (int i = start[m]; i < start[m + 1]; i++) {
                int t = entryTopic[i];
                int keep = base[t] + (dropped != null && dropped[i] ? 0 : 1);
                if (entrySize[i] <= keep) {
                    continue;
                }
                int[] ps = sorted(setOf(m, t), s.counts[t]);
                if (ps == null) {
                    return null;
                }
                if (keptOf == null) {
                    keptOf = new int[entries][];
                }
                keptOf[i] = Arrays.copyOf(ps, keep);
                int shed = ps.length - keep;
                if (pool[t].length < poolSize[t] + shed) {
                    pool[t] = Arrays.copyOf(pool[t], poolSize[t] + shed);
                }
                System.arraycopy(ps, keep, pool[t], poolSize[t], shed);
                poolSize[t] += shed;
            }
        }
        for (int t = 0; t < topics; t++) {
            if (poolSize[t] != pool[t].length) {
                pool[t] = Arrays.copyOf(pool[t], poolSize[t]);
            }
            if (!Problem.isSorted(pool[t])) {
                Arrays.sort(pool[t]);
            }
            for (int i = 1; i < pool[t].length; i++) {
                if (pool[t][i] == pool[t][i - 1]) {
                    return null; // a shed partition the broker calls free
                }
            }
        }
        // complete the shape: extras still to place go to members without one of the topic
        int[][] gained = fill(quota, bonus, holders);
        if (gained == null) {
            return null;
        }
        // who changes, canonical order: shedders, members that gain an extra or lack a floor
        int[] taken = new int[topics];
        int[] ownSize = new int[topics];
        int[] ownEntry = new int[topics];
        Arrays.fill(ownEntry, -1);
        for (int m = 0; m < size; m++) {
            if (!sheds[m] && !short_[m] && gained[m] == null) {
                if (current[m] == null) {
                    out.put(members[m], new Assignment(Collections.emptyMap()));
                } else if (!prefilled || !listed[m]) {
                    out.put(members[m], current[m]);
                }
                continue;
            }
            for (int i = start[m]; i < start[m + 1]; i++) {
                ownSize[entryTopic[i]] = entrySize[i];
                ownEntry[entryTopic[i]] = i;
            }
            if (gained[m] != null) {
                for (int t : gained[m]) {
                    ownSize[t] = -1 - ownSize[t]; // marks a new extra
                }
            }
            Map<Uuid, Set<Integer>> partitions = new HashMap<>();
            for (int t = 0; t < topics; t++) {
                boolean extra = ownSize[t] < 0;
                int own = extra ? -1 - ownSize[t] : ownSize[t];
                int i = ownEntry[t];
                boolean keepsExtra = own > base[t] && (dropped == null || !dropped[i]);
                int target = base[t] + (extra || keepsExtra ? 1 : 0);
                Set<Integer> set;
                if (own == target) {
                    set = own == 0 ? null : setOf(m, t);
                } else if (own > target) {
                    set = target == 0 ? null : new PartitionSet(keptOf[i]);
                } else {
                    int[] ps = new int[target];
                    int k = 0;
                    if (own > 0) {
                        for (int p : setOf(m, t)) {
                            ps[k++] = p;
                        }
                    }
                    int want = target - own;
                    if (taken[t] + want > pool[t].length) {
                        return null;
                    }
                    System.arraycopy(pool[t], taken[t], ps, k, want);
                    taken[t] += want;
                    Arrays.sort(ps);
                    set = new PartitionSet(ps);
                }
                if (set != null) {
                    partitions.put(s.topicIds.get(t), set);
                }
                ownSize[t] = 0;
                ownEntry[t] = -1;
            }
            out.put(members[m], new Assignment(Collections.unmodifiableMap(partitions)));
        }
        for (int t = 0; t < topics; t++) {
            if (taken[t] != pool[t].length) {
                return null;
            }
        }
        return new GroupAssignment(out);
    }

    /** Entries whose extra their member gives up ({@link #dropExcess}); null if none. */
    boolean[] dropped;

    /**
     * A member holding more extras than the shape allows (after a join the quota can
     * fall, or more members hold quota + 1 than there are such places) gives up the
     * excess: the first members in canonical order keep quota + 1, each other keeps
     * quota. The most extras are kept that any assignment of this shape keeps, so the
     * moves are the fewest if {@link #fill} then completes the shape. A member gives up
     * the extras of the topics given up least so far (then the lowest topic): spread over
     * topics, they find members that lack them.
     */
    private void dropExcess(int quota, int bonus) {
        int over = 0;
        for (int m = 0; m < size; m++) {
            if (deg[m] > quota) {
                over++;
            }
        }
        if (over <= bonus) {
            boolean any = false;
            for (int m = 0; m < size && !any; m++) {
                any = deg[m] > quota + 1;
            }
            if (!any) {
                return;
            }
        }
        int[] freed = new int[topics];
        int bonusLeft = bonus;
        for (int m = 0; m < size; m++) {
            if (deg[m] <= quota) {
                continue;
            }
            int cap = quota;
            if (bonusLeft > 0) {
                bonusLeft--;
                cap = quota + 1;
            }
            while (deg[m] > cap) {
                int best = -1;
                for (int i = start[m]; i < start[m + 1]; i++) {
                    int t = entryTopic[i];
                    if (entrySize[i] > base[t] && (dropped == null || !dropped[i])
                            && (best < 0 || freed[t] < freed[entryTopic[best]]
                                    || freed[t] == freed[entryTopic[best]] && t < entryTopic[best])) {
                        best = i;
                    }
                }
                if (dropped == null) {
                    dropped = new boolean[entries];
                }
                dropped[best] = true;
                int t = entryTopic[best];
                freed[t]++;
                need[t]++;
                deg[m]--;
                sheds[m] = true;
            }
        }
    }

    private Set<Integer> setOf(int m, int t) {
        return maps[m].get(s.topicIds.get(t));
    }

    // one member's sets, read by visit
    long[] claimed;
    int[] holders;
    boolean[] sheds;
    boolean[] short_;
    boolean[] listed; // the member's map is not empty (out has it already when prefilled)
    int member;
    int atBase;
    boolean bad;

    private void visit(Uuid topicId, Set<Integer> ps) {
        int n = ps.size();
        if (n == 0 || bad) {
            return;
        }
        int t = s.topicIndex.get(topicId);
        if (t < 0 || entries == entryTopic.length) {
            bad = true; // a claim to drop, or more claims than partitions: the general path
            return;
        }
        entryTopic[entries] = t;
        entrySize[entries++] = n;
        claimed[t] += n;
        if (n > base[t]) {
            deg[member]++;
            need[t]--;
            holders[t]++;
            sheds[member] |= n > base[t] + 1;
        }
        if (base[t] > 0) {
            if (n >= base[t]) {
                atBase++;
            } else {
                short_[member] = true;
            }
        }
    }

    /**
     * Topic by topic (the most wanted first), to members that hold no extra of it: those
     * below the quota first (the fewest extras first, then canonical order), then those
     * at the quota while places with one more are left. Member -> new extras' topics
     * (null where none), or null when the greedy gets stuck.
     */
    private int[][] fill(int quota, int bonus, int[] holders) {
        int bonusLeft = bonus;
        for (int m = 0; m < size; m++) {
            if (deg[m] == quota + 1) {
                bonusLeft--;
            }
        }
        Integer[] order = new Integer[topics];
        int wanted = 0;
        for (int t = 0; t < topics; t++) {
            if (need[t] > 0) {
                order[wanted++] = t;
            }
        }
        int[][] gained = new int[size][];
        if (wanted == 0) {
            for (int m = 0; m < size; m++) {
                if (deg[m] < quota) {
                    return null;
                }
            }
            return gained;
        }
        Arrays.sort(order, 0, wanted, (a, b) -> need[a] != need[b] ? need[b] - need[a] : a - b);
        // wanted topic -> members holding an extra of it
        int[][] holding = new int[topics][];
        for (int w = 0; w < wanted; w++) {
            holding[order[w]] = new int[holders[order[w]]];
            holders[order[w]] = 0;
        }
        for (int m = 0; m < size; m++) {
            for (int i = start[m]; i < start[m + 1]; i++) {
                int t = entryTopic[i];
                if (holding[t] != null && entrySize[i] > base[t]) {
                    holding[t][holders[t]++] = m;
                }
            }
        }
        // buckets by extras held, 0..quota, canonical order; stale entries skipped
        int[][] bucket = new int[quota + 1][];
        int[] bucketSize = new int[quota + 1];
        int[] head = new int[quota + 1];
        for (int m = 0; m < size; m++) {
            if (deg[m] <= quota) {
                bucketSize[deg[m]]++;
            }
        }
        for (int d = 0; d <= quota; d++) {
            bucket[d] = new int[Math.max(4, bucketSize[d])];
            bucketSize[d] = 0;
        }
        for (int m = 0; m < size; m++) {
            if (deg[m] <= quota) {
                bucket[deg[m]][bucketSize[deg[m]]++] = m;
            }
        }
        boolean[] holds = new boolean[size];
        int[] got = new int[size];
        int[] picked = new int[size];
        for (int w = 0; w < wanted; w++) {
            int t = order[w];
            for (int m : holding[t]) {
                holds[m] = true;
            }
            int picks = 0;
            for (int d = 0; d <= quota && picks < need[t]; d++) {
                while (head[d] < bucketSize[d] && deg[bucket[d][head[d]]] != d) {
                    head[d]++;
                }
                for (int i = head[d]; i < bucketSize[d] && picks < need[t]; i++) {
                    int m = bucket[d][i];
                    if (deg[m] != d || holds[m]) {
                        continue;
                    }
                    if (d == quota) {
                        if (bonusLeft == 0) {
                            break;
                        }
                        bonusLeft--;
                    }
                    holds[m] = true; // taken once per topic
                    picked[picks++] = m;
                }
            }
            if (picks < need[t]) {
                return null;
            }
            for (int m : holding[t]) {
                holds[m] = false;
            }
            for (int i = 0; i < picks; i++) {
                int m = picked[i];
                holds[m] = false;
                if (gained[m] == null) {
                    gained[m] = new int[Math.max(1, quota + 1 - deg[m])];
                }
                gained[m][got[m]++] = t;
                int d = ++deg[m];
                if (d <= quota) {
                    if (bucketSize[d] == bucket[d].length) {
                        bucket[d] = Arrays.copyOf(bucket[d], bucketSize[d] * 2);
                    }
                    bucket[d][bucketSize[d]++] = m;
                }
            }
            need[t] = 0;
        }
        for (int m = 0; m < size; m++) {
            if (deg[m] < quota) {
                return null;
            }
            if (gained[m] != null && gained[m].length != got[m]) {
                gained[m] = Arrays.copyOf(gained[m], got[m]);
            }
        }
        return gained;
    }

    /** A set's partitions ascending, or null if one lies outside 0..count-1. */
    private static int[] sorted(Set<Integer> set, int count) {
        int[] ps = new int[set.size()];
        int i = 0;
        for (int p : set) {
            if (p < 0 || p >= count) {
                return null;
            }
            ps[i++] = p;
        }
        Arrays.sort(ps);
        return ps;
    }
}
