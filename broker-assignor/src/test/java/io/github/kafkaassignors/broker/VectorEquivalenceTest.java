package io.github.kafkaassignors.broker;

import static io.github.kafkaassignors.broker.AssignmentTestUtil.assertValidAndBalanced;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.moved;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.spread;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicId;
import static io.github.kafkaassignors.broker.AssignmentTestUtil.topicSpread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.kafkaassignors.broker.AssignmentTestUtil.FakeGroup;
import io.github.kafkaassignors.broker.AssignmentTestUtil.FakeTopics;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The Python core is the reference: every case of {@code vectors.json} (written by
 * {@code broker-assignor/vectors.py} from {@code kafka_assignors.core.balanced_sticky}) must
 * give the same total spread, the same worst per-topic spread and the same number of moved
 * partitions here. Topics get ids in name order ({@link AssignmentTestUtil#topicId}), so both
 * sides order topics alike; a topic the case does not list gets an id the broker does not know.
 */
class VectorEquivalenceTest {
    /**
     * Cases where both sides reach the same optimum (same sum of squared loads, same sum of
     * squared per-topic shares, same moves) but break a tie differently, so that the worst
     * per-topic spread is wider here (by 1). Objective 2 is a sum of squares, which does not
     * pin the worst spread down with unequal subscriptions; such cases must stay rare (at
     * most 1 in 40) and are listed when they are not. A narrower worst spread than Python's
     * is allowed (by any amount): {@link WarmShares} narrows the widest topic with cycles of
     * zero cost, Python does not. With the committed vectors: 1 of 420 wider (h19-2-join 5
     * vs 4, Java vs Python), 2 narrower (h02-0-first 2 vs 3, h29-0-first 6 vs 7).
     */
    private static final List<String> TIES = new ArrayList<>();

    /** The committed vectors, or the file named by {@code -Dvectors=PATH} (another seed, scale). */
    private static JsonNode load() throws IOException {
        String path = System.getProperty("vectors");
        if (path != null && !path.isEmpty()) {
            return new ObjectMapper().readTree(new java.io.File(path));
        }
        try (InputStream in = VectorEquivalenceTest.class.getResourceAsStream("/vectors.json")) {
            return new ObjectMapper().readTree(in);
        }
    }

    @TestFactory
    Stream<DynamicTest> testSameBalanceAndMovesAsThePythonCore() throws IOException {
        JsonNode cases = load().get("cases");
        assertTrue(cases.size() >= 300, "hundreds of cases");
        List<DynamicTest> tests = new ArrayList<>();
        TIES.clear();
        for (JsonNode c : cases) {
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> check(c)));
        }
        // dynamic tests run in order: this one sees every case's tie
        tests.add(DynamicTest.dynamicTest("ties in the worst per-topic spread are rare",
                () -> assertTrue(TIES.size() * 40 <= cases.size(),
                        TIES.size() + " of " + cases.size() + " cases: " + TIES)));
        return tests.stream();
    }

    private static long squares(GroupAssignment result, boolean perTopic) {
        long sum = 0;
        for (var a : result.members().values()) {
            long load = 0;
            for (Set<Integer> ps : a.partitions().values()) {
                sum += perTopic ? (long) ps.size() * ps.size() : 0;
                load += ps.size();
            }
            sum += perTopic ? 0 : load * load;
        }
        return sum;
    }

    private static void check(JsonNode c) {
        FakeTopics topics = new FakeTopics();
        Map<String, Uuid> ids = new HashMap<>();
        TreeSet<String> names = new TreeSet<>();
        c.get("topics").fieldNames().forEachRemaining(names::add);
        int index = 0;
        for (String name : names) {
            ids.put(name, topicId(index++));
            topics.put(ids.get(name), c.get("topics").get(name).asInt());
        }
        FakeGroup group = new FakeGroup();
        for (JsonNode m : c.get("members")) {
            Set<Uuid> subs = new HashSet<>();
            for (JsonNode t : m.get("topics")) {
                subs.add(ids.computeIfAbsent(t.asText(), n -> topicId(1000 + ids.size())));
            }
            Map<Uuid, Set<Integer>> owned = new HashMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = m.get("owned").fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                Set<Integer> ps = new HashSet<>();
                e.getValue().forEach(p -> ps.add(p.asInt()));
                owned.put(ids.get(e.getKey()), ps);
            }
            JsonNode instance = m.get("instance_id");
            group.add(m.get("id").asText(), instance.isNull() ? null : instance.asText(), subs, owned);
        }
        GroupAssignment result = new BalancedStickyAssignor().assign(group, topics);
        assertValidAndBalanced(group, topics, result);
        JsonNode expected = c.get("expected");
        String name = c.get("name").asText();
        assertEquals(expected.get("load_squares").asLong(), squares(result, false),
                name + ": objective 1, the sum of squared loads");
        assertEquals(expected.get("topic_squares").asLong(), squares(result, true),
                name + ": objective 2, the sum over topics of squared shares");
        assertEquals(expected.get("spread").asInt(), spread(result), name + ": total spread");
        int topicSpread = topicSpread(group, result);
        int want = expected.get("topic_spread").asInt();
        if (topicSpread > want) {
            assertEquals(want + 1, topicSpread, name + ": worst per-topic spread");
            TIES.add(name + " (" + topicSpread + " vs " + want + ")");
        }
        assertEquals(expected.get("moved").asInt(), moved(group, result, topics), name + ": moved");
        assertEquals(result, new BalancedStickyAssignor().assign(group.next(result), topics),
                name + ": a rerun on its own output changes nothing");
    }
}
