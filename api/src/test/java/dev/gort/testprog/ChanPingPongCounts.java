package dev.gort.testprog;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.runtime.SchedCounts;
import java.util.Map;

/**
 * A child-JVM program for {@code ChanSwitchCountTest}: the bench's unbuffered ping-pong (two
 * unbuffered channels) under {@code -Dgort.debug.counts=true}; prints the scheduler's event counts
 * ({@link SchedCounts}) for the second of two runs of {@code args[0]} round trips, one
 * {@code name=value} a line after {@code COUNTS}. GOMAXPROCS from {@code -Dgort.gomaxprocs}.
 */
public final class ChanPingPongCounts {
    private ChanPingPongCounts() {}

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        @SuppressWarnings("unchecked")
        Map<String, Long>[] result = new Map[1];
        Go.run(() -> {
            roundTrips(rounds); // warm-up: JIT, carriers started
            SchedCounts.reset();
            roundTrips(rounds);
            result[0] = SchedCounts.snapshot();
        });
        System.out.println("COUNTS");
        result[0].forEach((k, v) -> System.out.println(k + "=" + v));
    }

    static void roundTrips(int n) {
        Chan<Integer> ping = Chan.make();
        Chan<Integer> pong = Chan.make();
        Chan<Boolean> done = Chan.make();
        Go.go(() -> {
            for (Integer v : ping) {
                pong.send(v);
            }
            done.send(true);
        });
        Integer one = 1;
        for (int i = 0; i < n; i++) {
            ping.send(one);
            pong.recv();
        }
        ping.close();
        done.recv();
    }
}
