package io.github.kafkaassignors.broker;

import java.util.Arrays;
import org.apache.kafka.common.Uuid;

/**
 * Topic id -> number, open addressing on the id's two longs. Every member's subscription and
 * every set it owns is looked up here, once per (member, topic): a {@code HashMap<Uuid,
 * Integer>} chased a node, a key and a boxed value each time (a fifth of an assignment of
 * 5,000 members on the stable path); here the id is read once and the table stays in cache.
 */
final class UuidIndex {
    private long[] high;
    private long[] low;
    private int[] value; // -1: empty slot
    private int size;
    // the id objects last looked up, by their hash: on a running broker the sets a group
    // owns share each topic's id object (the ids the assignor returned), so most lookups
    // end at one comparison of references (1,024 slots: with 100 topics a quarter of 256
    // slots were shared by two ids, which then missed in turn)
    private final Uuid[] recent = new Uuid[RECENT];
    private final int[] recentValue = new int[RECENT];
    private static final int RECENT = 1024;

    UuidIndex(int expected) {
        int capacity = Integer.highestOneBit(Math.max(4, expected * 2 - 1)) << 1;
        high = new long[capacity];
        low = new long[capacity];
        value = new int[capacity];
        Arrays.fill(value, -1);
    }

    int size() {
        return size;
    }

    /** The number of id, or -1 if it has none. */
    int get(Uuid id) {
        int r = id.hashCode() & (RECENT - 1);
        if (recent[r] == id) {
            return recentValue[r];
        }
        int v = find(id);
        recent[r] = id;
        recentValue[r] = v;
        return v;
    }

    private int find(Uuid id) {
        long h = id.getMostSignificantBits();
        long l = id.getLeastSignificantBits();
        int mask = value.length - 1;
        for (int i = slot(h, l) & mask; ; i = (i + 1) & mask) {
            int v = value[i];
            if (v < 0 || high[i] == h && low[i] == l) {
                return v;
            }
        }
    }

    /** Numbers id {@code number} unless it has a number already; returns its number. */
    int putIfAbsent(Uuid id, int number) {
        if (2 * (size + 1) > value.length) {
            grow();
        }
        long h = id.getMostSignificantBits();
        long l = id.getLeastSignificantBits();
        int mask = value.length - 1;
        for (int i = slot(h, l) & mask; ; i = (i + 1) & mask) {
            if (value[i] < 0) {
                recent[id.hashCode() & (RECENT - 1)] = null; // may have cached "none" for id
                high[i] = h;
                low[i] = l;
                value[i] = number;
                size++;
                return number;
            }
            if (high[i] == h && low[i] == l) {
                return value[i];
            }
        }
    }

    private static int slot(long h, long l) {
        long x = (h ^ l) * 0x9E3779B97F4A7C15L;
        return (int) (x >>> 32);
    }

    private void grow() {
        long[] oldHigh = high;
        long[] oldLow = low;
        int[] oldValue = value;
        high = new long[oldValue.length * 2];
        low = new long[oldValue.length * 2];
        value = new int[oldValue.length * 2];
        Arrays.fill(value, -1);
        size = 0;
        int mask = value.length - 1;
        for (int j = 0; j < oldValue.length; j++) {
            if (oldValue[j] >= 0) {
                int i = slot(oldHigh[j], oldLow[j]) & mask;
                while (value[i] >= 0) {
                    i = (i + 1) & mask;
                }
                high[i] = oldHigh[j];
                low[i] = oldLow[j];
                value[i] = oldValue[j];
                size++;
            }
        }
    }
}
