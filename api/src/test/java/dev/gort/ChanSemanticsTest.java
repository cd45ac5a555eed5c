package dev.gort;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.G;
import dev.gort.runtime.GoPanic;
import dev.gort.runtime.Scheduler;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Go's channel panics and edge cases, as exceptions with Go's messages. */
class ChanSemanticsTest {
    static String panicOf(Runnable r) {
        try {
            r.run();
        } catch (PanicError e) {
            return e.getMessage();
        }
        return null;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void panicsWithGoMessages(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Integer> c = Chan.make(1);
            c.close();
            check("send on closed channel".equals(panicOf(() -> c.send(1))), "send");
            check("send on closed channel".equals(panicOf(() -> c.trySend(1))), "trySend");
            check("close of closed channel".equals(panicOf(c::close)), "close twice");
            check("close of nil channel".equals(panicOf(() -> Chan.nil().close())), "close nil");
            check("makechan: size out of range".equals(panicOf(() -> Chan.make(-1))), "make -1");
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void blockedSenderPanicsWhenTheChannelIsClosed(int procs) {
        GortTesting.run(procs, () -> {
            for (int cap : new int[] {0, 1}) {
                Chan<Integer> c = Chan.make(cap);
                for (int i = 0; i < cap; i++) {
                    c.send(i);
                }
                Chan<String> res = Chan.make(2);
                G g1 = Scheduler.current().newproc(() -> res.send(String.valueOf(panicOf(() -> c.send(9)))));
                G g2 = Scheduler.current()
                        .newproc(() -> res.send(String.valueOf(panicOf(() ->
                                Select.select(Select.send(c, 9, () -> {}), Select.recv(Chan.make(), () -> {}))))));
                while (g1.readgstatus() != G._Gwaiting || g2.readgstatus() != G._Gwaiting) {
                    Go.gosched();
                }
                c.close();
                check(res.recv().equals("send on closed channel"), "blocked send");
                check(res.recv().equals("send on closed channel"), "blocked select send");
                // the buffer still drains after close
                for (int i = 0; i < cap; i++) {
                    check(c.recv() == i, "drain");
                }
                check(!c.recv2().ok(), "closed after drain");
            }
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void closedBufferedChannelDrainsThenReportsNotOkForever(int procs) {
        GortTesting.run(procs, () -> {
            Chan<String> c = Chan.make(3);
            c.send("a");
            c.send("b");
            c.close();
            check(c.len() == 2, "len after close");
            check(c.tryRecv().value().equals("a"), "tryRecv drains");
            List<String> rest = new ArrayList<>();
            for (String s : c) {
                rest.add(s);
            }
            check(rest.equals(List.of("b")), "range drains: %s", rest);
            for (int i = 0; i < 3; i++) {
                Chan.Received<String> r = c.recv2();
                check(r.value() == null && !r.ok(), "not ok forever");
                Chan.Received<String> t = c.tryRecv();
                check(t != null && !t.ok(), "tryRecv closed");
            }
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void nullValuesAreValuesNotClose(int procs) {
        GortTesting.run(procs, () -> {
            Chan<String> c = Chan.make();
            Go.go(() -> c.send(null));
            Chan.Received<String> r = c.recv2();
            check(r.ok() && r.value() == null, "a sent null is ok=true");
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void uncaughtPanicEndsTheProgramLikeGo(int procs) {
        GoPanic p = assertThrows(
                GoPanic.class,
                () -> Go.run(GortTesting.config(procs), () -> {
                    Chan<Integer> c = Chan.make();
                    c.close();
                    c.close();
                }));
        assertTrue(p.goFormat().startsWith("panic: close of closed channel\n"), p.goFormat());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void selectChoosesUniformlyAmongReadyCasesIncludingDuplicates(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Integer> a = Chan.make(100_000);
            Chan<Integer> b = Chan.make(100_000);
            for (int i = 0; i < 30_000; i++) {
                a.send(0);
                b.send(1);
            }
            Select s = new Select();
            int[] idx = {s.addRecv(a), s.addRecv(b), s.addRecv(a)}; // a twice
            int[] hits = new int[3];
            for (int i = 0; i < 30_000; i++) {
                int k = s.await();
                hits[k]++;
            }
            // each case ~1/3: 10,000 +- 10 sigma (sigma ~ 81.6)
            for (int k = 0; k < 3; k++) {
                check(
                        Math.abs(hits[k] - 10_000) < 820,
                        "case %d chosen %d times of 30000 (%s)",
                        k,
                        hits[k],
                        idx.length);
            }
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void blockingOpsOutsideAGoroutineThrow(int procs) {
        Chan<Integer> c = Chan.make();
        assertThrows(IllegalStateException.class, c::recv);
        assertThrows(IllegalStateException.class, () -> c.send(1));
        assertEquals(false, c.trySend(1));
        assertEquals(null, c.tryRecv());
    }
}
