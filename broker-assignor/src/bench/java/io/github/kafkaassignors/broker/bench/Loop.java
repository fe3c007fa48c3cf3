package io.github.kafkaassignors.broker.bench;

import org.apache.kafka.coordinator.group.api.assignor.*;

public final class Loop {
    public static void main(String[] args) {
        Scenario s = Scenario.of(args[0]);
        ConsumerGroupPartitionAssignor a = Scenario.assignor(args.length > 3 ? args[3] : "balanced-sticky");
        GroupSpec g = s.fresh();
        SubscribedTopicDescriber d = s.describer();
        Scenario after = s;
        if (!args[1].equals("fresh")) {
            after = s.after(args[1]);
            g = after.owning(a.assign(g, d));
            d = after.describer();
        }
        long end = System.nanoTime() + Long.parseLong(args[2]) * 1_000_000_000L;
        int n = 0; long t0 = System.nanoTime();
        while (System.nanoTime() < end) { a.assign(g, d); n++; }
        System.out.printf("%d calls, %.3f ms each%n", n, (System.nanoTime() - t0) / 1e6 / n);
    }
}
