package io.github.kafkaassignors.broker;

import java.util.Arrays;

/**
 * The start of {@link WarmShares}, the path most rebalances end on: each member keeps what
 * it owns and the rest is dealt greedily ({@link #start}: each unit to the subscriber whose
 * load, then share of the topic, grows least; members with fewer topics still to come
 * first); {@link Levelling} then applies cheap improving moves. When that meets the lower
 * bounds ({@link Shares#meetsLowerBounds}) it is optimal without a search; otherwise
 * {@link CycleCancelling} takes it from there. Changes the {@link Shares} in place.
 */
final class WarmStart {
    private final Shares shares;
    // the Shares' fields under their own names: the same arrays, so every pass sees each
    // other's changes
    private final Problem problem;
    private final int members;
    private final int topics;
    private final int[][] subs;
    private final int[][] x;
    private final int[] load;
    private final int[][] topicMembers;
    private final int[][] topicSlots;

    WarmStart(Shares shares) {
        this.shares = shares;
        this.problem = shares.problem;
        this.members = shares.members;
        this.topics = shares.topics;
        this.subs = shares.subs;
        this.x = shares.x;
        this.load = shares.load;
        this.topicMembers = shares.topicMembers;
        this.topicSlots = shares.topicSlots;
    }

    void start() {
        int[] left = shares.unowned.clone(); // the Shares start at what members own
        int[] remaining = new int[members]; // topics still to deal a member may get units of
        Integer[] order = new Integer[topics];
        for (int t = 0; t < topics; t++) {
            order[t] = t;
            if (left[t] > 0) {
                for (int m : topicMembers[t]) {
                    remaining[m]++;
                }
            }
        }
        // the topics with the most partitions to deal per subscriber first: their subscribers
        // carry the heaviest loads, the others fill in around them
        Arrays.sort(order, (a, b) -> {
            long l = (long) left[a] * Math.max(1, topicMembers[b].length);
            long r = (long) left[b] * Math.max(1, topicMembers[a].length);
            if (l != r) {
                return Long.compare(r, l);
            }
            return topicMembers[a].length != topicMembers[b].length
                    ? Integer.compare(topicMembers[a].length, topicMembers[b].length)
                    : Integer.compare(a, b);
        });
        int[] heap = new int[members];
        long[] keys = new long[members];
        for (int t : order) {
            if (left[t] <= 0 || topicMembers[t].length == 0) {
                continue;
            }
            if (dealPacked(t, left[t], remaining, keys)) {
                for (int m : topicMembers[t]) {
                    remaining[m]--;
                }
                continue;
            }
            int size = topicMembers[t].length;
            for (int i = 0; i < size; i++) {
                heap[i] = i; // positions in topicMembers[t]
            }
            for (int i = size / 2 - 1; i >= 0; i--) {
                siftDown(heap, size, i, t, remaining);
            }
            for (int u = left[t]; u > 0; u--) {
                int i = heap[0];
                int m = topicMembers[t][i];
                x[m][topicSlots[t][i]]++;
                load[m]++;
                siftDown(heap, size, 0, t, remaining);
            }
            for (int m : topicMembers[t]) {
                remaining[m]--;
            }
        }
    }

    /**
     * Deals {@code units} of topic t as {@link #before} orders its subscribers, with the order
     * packed into one long per subscriber (load, share, topics to come, position: the position
     * in the topic's list follows canonical order); false if the numbers do not fit.
     */
    private boolean dealPacked(int t, int units, int[] remaining, long[] keys) {
        int size = topicMembers[t].length;
        if (size >= 1 << 20) {
            return false;
        }
        for (int i = 0; i < size; i++) {
            int m = topicMembers[t][i];
            long l = load[m] + (long) units;
            long v = x[m][topicSlots[t][i]] + (long) units;
            if (l >= 1 << 19 || v >= 1 << 12 || remaining[m] >= 1 << 12) {
                return false;
            }
            keys[i] = (long) load[m] << 44 | (long) x[m][topicSlots[t][i]] << 32
                    | (long) remaining[m] << 20 | i;
        }
        for (int i = size / 2 - 1; i >= 0; i--) {
            siftDownPacked(keys, size, i);
        }
        final long unit = 1L << 44 | 1L << 32;
        for (int u = 0; u < units; u++) {
            int i = (int) (keys[0] & 0xfffff);
            int m = topicMembers[t][i];
            x[m][topicSlots[t][i]]++;
            load[m]++;
            keys[0] += unit;
            siftDownPacked(keys, size, 0);
        }
        return true;
    }

    static void siftDownPacked(long[] heap, int size, int i) {
        long v = heap[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) {
                break;
            }
            if (c + 1 < size && heap[c + 1] < heap[c]) {
                c++;
            }
            if (heap[c] >= v) {
                break;
            }
            heap[i] = heap[c];
            i = c;
        }
        heap[i] = v;
    }

    /** Whether position i of topic t's subscribers should get the next unit before j. */
    private boolean before(int t, int i, int j, int[] remaining) {
        int a = topicMembers[t][i];
        int b = topicMembers[t][j];
        if (load[a] != load[b]) {
            return load[a] < load[b];
        }
        int xa = x[a][topicSlots[t][i]];
        int xb = x[b][topicSlots[t][j]];
        if (xa != xb) {
            return xa < xb;
        }
        if (remaining[a] != remaining[b]) {
            return remaining[a] < remaining[b];
        }
        return a < b;
    }

    private void siftDown(int[] heap, int size, int i, int t, int[] remaining) {
        int v = heap[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) {
                break;
            }
            if (c + 1 < size && before(t, heap[c + 1], heap[c], remaining)) {
                c++;
            }
            if (!before(t, heap[c], v, remaining)) {
                break;
            }
            heap[i] = heap[c];
            i = c;
        }
        heap[i] = v;
    }
}
