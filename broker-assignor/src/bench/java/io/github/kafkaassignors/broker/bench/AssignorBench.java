package io.github.kafkaassignors.broker.bench;

import java.util.concurrent.TimeUnit;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Time per assignment, balanced-sticky beside Kafka's {@code uniform}, on the groups of
 * {@link Scenario}: a new group ({@code fresh}) and the same group after its first member
 * leaves ({@code leave}: the others own what the same assignor gave them). The quality of
 * each result is {@link QualityReport}'s; benchmarks/broker_assignor.py runs both.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 2)
public class AssignorBench {
    @Param({"homogeneous-1000x10000", "homogeneous-5000x50000", "random-1000x10000", "random-5000x50000",
            "few-1000"})
    public String scenario;

    @Param({"balanced-sticky", "uniform"})
    public String assignor;

    @Param({"fresh", "leave"})
    public String phase;

    private ConsumerGroupPartitionAssignor under;
    private GroupSpec group;
    private SubscribedTopicDescriber topics;

    @Setup(Level.Trial)
    public void setUp() {
        Scenario s = Scenario.of(scenario);
        under = Scenario.assignor(assignor);
        topics = s.describer();
        Scenario.Group fresh = s.fresh();
        group = phase.equals("fresh") ? fresh : s.afterLeave(under.assign(fresh, topics));
    }

    @Benchmark
    public GroupAssignment assign() {
        return under.assign(group, topics);
    }
}
