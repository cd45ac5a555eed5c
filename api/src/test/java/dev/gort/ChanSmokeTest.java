package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ChanSmokeTest {
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void pingPong(int procs) {
        AtomicLong sum = new AtomicLong();
        GortTesting.run(procs, () -> {
            Chan<Integer> ping = Chan.make();
            Chan<Integer> pong = Chan.make();
            Go.go(() -> {
                for (Integer v : ping) {
                    pong.send(v + 1);
                }
                pong.close();
            });
            long s = 0;
            for (int i = 0; i < 100_000; i++) {
                ping.send(i);
                s += pong.recv();
            }
            ping.close();
            GortTesting.check(!pong.recv2().ok(), "pong not closed");
            sum.set(s);
        });
        assertEquals(100_000L * 99_999 / 2 + 100_000, sum.get());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void selectTwo(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Integer> a = Chan.make();
            Chan<Integer> b = Chan.make(3);
            Go.go(() -> {
                for (int i = 0; i < 10000; i++) a.send(i);
                a.close();
            });
            Go.go(() -> {
                for (int i = 0; i < 10000; i++) b.send(i);
                b.close();
            });
            int[] n = new int[2];
            Select s = new Select();
            int ra = s.addRecv(a), rb = s.addRecv(b);
            int open = 2;
            while (open > 0) {
                int i = s.await();
                if (!s.ok()) {
                    s.setChan(i, null);
                    open--;
                    continue;
                }
                n[i == ra ? 0 : 1]++;
            }
            GortTesting.check(n[0] == 10000 && n[1] == 10000, "counts %d %d", n[0], n[1]);
        });
    }
}
