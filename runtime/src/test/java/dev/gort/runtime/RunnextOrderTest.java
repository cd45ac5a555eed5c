package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class RunnextOrderTest {
    @Test
    void goABCThenParkRunsCThenAThenB() {
        List<String> order = new CopyOnWriteArrayList<>();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            GoSema done = new GoSema(0);
            Scheduler rt = Scheduler.current();
            for (String name : new String[] {"a", "b", "c"}) {
                rt.newproc(() -> {
                    order.add(name);
                    done.release();
                });
            }
            for (int i = 0; i < 3; i++) {
                done.acquire();
            }
        });
        // A stall of more than sysmon's 10 ms slice lets sysmon preempt main at a go statement.
        assumeTrue(s.stats.preemptions.get() == 0, "sysmon preempted main (stalled machine)");
        assertEquals(List.of("c", "a", "b"), order);
    }
}
