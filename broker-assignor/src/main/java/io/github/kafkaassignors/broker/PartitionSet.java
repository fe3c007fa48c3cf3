package io.github.kafkaassignors.broker;

import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * An unmodifiable set of partition numbers over a sorted {@code int[]}. A HashSet would cost
 * a hash node (and often a boxed Integer) per partition: at 50,000 partitions that
 * allocation was a large share of an assignment's time.
 */
final class PartitionSet extends AbstractSet<Integer> {
    private final int[] sorted;

    /** @param sorted ascending, without duplicates; the set keeps (does not copy) it */
    PartitionSet(int[] sorted) {
        this.sorted = sorted;
    }

    @Override
    public int size() {
        return sorted.length;
    }

    @Override
    public boolean contains(Object o) {
        return o instanceof Integer && Arrays.binarySearch(sorted, (Integer) o) >= 0;
    }

    @Override
    public Iterator<Integer> iterator() {
        return new Iterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
                return next < sorted.length;
            }

            @Override
            public Integer next() {
                if (next >= sorted.length) {
                    throw new NoSuchElementException();
                }
                return sorted[next++];
            }
        };
    }

    @Override
    public boolean equals(Object o) {
        if (o instanceof PartitionSet) {
            return Arrays.equals(sorted, ((PartitionSet) o).sorted);
        }
        return o instanceof Set && super.equals(o);
    }

    /** As {@link Set#hashCode()} defines it (the sum of the elements), without boxing. */
    @Override
    public int hashCode() {
        int h = 0;
        for (int p : sorted) {
            h += p;
        }
        return h;
    }
}
