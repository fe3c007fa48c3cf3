package io.github.kafkaassignors.broker.bench;

import org.apache.kafka.coordinator.group.api.assignor.*;

public final class Loop {
    public static void main(String[] args) {
        Scenario s = Scenario.of(args[0]);
        ConsumerGroupPartitionAssignor a = Scenario.assignor("balanced-sticky");
        GroupSpec g = s.fresh();
        SubscribedTopicDescriber d = s.describer();
        Scenario after = s.after(args[1]);
        g = after.owning(a.assign(g, d));
        d = after.describer();
        GroupAssignment r = a.assign(g, d);
        int same = 0;
        for (String m : g.memberIds()) if (r.members().get(m) == g.memberAssignment(m)) same++;
        System.out.println(same + " of " + g.memberIds().size() + " unchanged objects");
    }
}
