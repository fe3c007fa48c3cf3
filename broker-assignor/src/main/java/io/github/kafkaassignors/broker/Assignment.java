package io.github.kafkaassignors.broker;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/**
 * Our own {@link MemberAssignment}: the broker's {@code MemberAssignmentImpl} lives in the
 * group-coordinator jar, not in the api jar a plugin may rely on.
 */
public final class Assignment implements MemberAssignment {
    private final Map<Uuid, Set<Integer>> partitions;

    public Assignment(Map<Uuid, Set<Integer>> partitions) {
        this.partitions = Objects.requireNonNull(partitions);
    }

    @Override
    public Map<Uuid, Set<Integer>> partitions() {
        return partitions;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Assignment && ((Assignment) o).partitions.equals(partitions);
    }

    @Override
    public int hashCode() {
        return partitions.hashCode();
    }

    @Override
    public String toString() {
        return "Assignment(partitions=" + partitions + ")";
    }
}
