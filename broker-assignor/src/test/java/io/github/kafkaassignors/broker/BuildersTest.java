package io.github.kafkaassignors.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The homogeneous builder's shortcut (place only the extras) loses nothing against the full flow. */
class BuildersTest {
    private static long[] objectives(Problem problem, int[][][] out) {
        long loads = 0;
        long shares = 0;
        long kept = 0;
        for (int m = 0; m < problem.members(); m++) {
            long load = 0;
            for (int t = 0; t < problem.topics(); t++) {
                int[] ps = out[m][t];
                int n = ps == null ? 0 : ps.length;
                load += n;
                shares += (long) n * n;
                int[] owned = problem.owned[m][t];
                if (owned != null && ps != null) {
                    kept += Arrays.stream(owned).filter(p -> Arrays.binarySearch(ps, p) >= 0).count();
                }
            }
            loads += load * load;
        }
        return new long[] {loads, shares, -kept};
    }

    @Test
    void testHomogeneousBuilderMatchesTheFullFlow() {
        Random random = new Random(4);
        for (int round = 0; round < 300; round++) {
            int topics = 1 + random.nextInt(4);
            int members = 1 + random.nextInt(9);
            int[] counts = new int[topics];
            int[] all = new int[topics];
            for (int t = 0; t < topics; t++) {
                counts[t] = 1 + random.nextInt(25);
                all[t] = t;
            }
            int[][] subs = new int[members][];
            List<List<int[]>> claims = new ArrayList<>();
            for (int m = 0; m < members; m++) {
                subs[m] = all;
                List<int[]> mine = new ArrayList<>();
                for (int t = 0; t < topics; t++) {
                    // random, possibly overlapping claims: resolve() sorts them out
                    int n = random.nextInt(counts[t] + 1);
                    int[] ps = new int[n];
                    for (int i = 0; i < n; i++) {
                        ps[i] = random.nextInt(counts[t]);
                    }
                    mine.add(random.nextInt(3) == 0 ? null : ps);
                }
                claims.add(mine);
            }
            Problem problem = Problem.resolve(counts, subs, claims);
            long[] fast = objectives(problem, new HomogeneousAssignmentBuilder(problem).build());
            long[] full = objectives(problem, new HeterogeneousAssignmentBuilder(problem).build());
            assertEquals(Arrays.toString(full), Arrays.toString(fast), "round " + round);
        }
    }
}
