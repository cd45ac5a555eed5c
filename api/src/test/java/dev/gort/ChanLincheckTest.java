package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.internal.ThreadParker;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * Model checking of the channel and select blocking paths with lincheck, over real threads
 * ({@link ThreadParker}): the same Chan/Select code as production, parked with LockSupport instead
 * of gopark. Lincheck explores the interleavings of the spin-lock sections, the park/commit and the
 * ready, and reports a hang when every thread is parked: a lost wake-up.
 */
class ChanLincheckTest {
    static final int INVOCATIONS = Integer.getInteger("gort.lincheck.invocations", 300);

    static <T> Chan<T> chan(int cap) {
        return Chan.make(cap, ThreadParker.INSTANCE);
    }

    static Thread start(Runnable r) {
        Thread t = new Thread(r);
        t.start();
        return t;
    }

    static void join(Thread... ts) {
        for (Thread t : ts) {
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** Unbuffered ping-pong: every send meets its receive; a lost wake-up hangs. */
    @Test
    void pingPongNoLostWakeup() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Chan<Integer> ping = chan(0);
            Chan<Integer> pong = chan(0);
            int[] got = new int[1];
            Thread a = start(() -> {
                ping.send(1);
                got[0] = pong.recv();
            });
            Thread b = start(() -> pong.send(ping.recv() + 1));
            join(a, b);
            assertEquals(2, got[0]);
        });
    }

    /** Two senders, one receiver, buffer of 1: every value arrives once, per-sender FIFO. */
    @Test
    void bufferedFifoNoLossNoDuplicate() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Chan<Integer> c = chan(1);
            List<Integer> got = new ArrayList<>();
            Thread s1 = start(() -> {
                c.send(1);
                c.send(2);
            });
            Thread s2 = start(() -> c.send(10));
            Thread r = start(() -> {
                for (int i = 0; i < 3; i++) {
                    got.add(c.recv());
                }
            });
            join(s1, s2, r);
            assertEquals(3, got.size());
            assertTrue(got.containsAll(List.of(1, 2, 10)), got.toString());
            assertTrue(got.indexOf(1) < got.indexOf(2), "per-sender FIFO: " + got);
        });
    }

    /** Close racing a blocked or arriving send: the value is delivered, or the send panics; never both, never lost. */
    @Test
    void closeRacingSendDeliversOrPanics() {
        for (int cap : new int[] {0, 1}) {
            Lincheck.runConcurrentTest(INVOCATIONS, () -> {
                Chan<Integer> c = chan(cap);
                boolean[] sent = new boolean[1];
                boolean[] panicked = new boolean[1];
                Chan.Received<?>[] got = new Chan.Received<?>[1];
                Thread s = start(() -> {
                    try {
                        c.send(7);
                        sent[0] = true;
                    } catch (PanicError e) {
                        panicked[0] = "send on closed channel".equals(e.getMessage());
                    }
                });
                Thread k = start(c::close);
                Thread r = start(() -> got[0] = c.recv2());
                join(s, k, r);
                assertTrue(sent[0] ^ panicked[0], "exactly one of delivered/panicked");
                if (sent[0]) {
                    assertTrue(
                            got[0].ok() && Integer.valueOf(7).equals(got[0].value()),
                            "delivered value received: " + got[0]);
                } else {
                    assertTrue(!got[0].ok() && got[0].value() == null, "panicked send delivered nothing: " + got[0]);
                }
            });
        }
    }

    /** Close wakes every blocked receiver (not ok) and every blocked sender (panic). */
    @Test
    void closeWakesAllWaiters() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Chan<Integer> c = chan(0);
            boolean[] r1 = new boolean[1];
            boolean[] r2 = new boolean[1];
            Thread a = start(() -> r1[0] = c.recv2().ok());
            Thread b = start(() -> r2[0] = c.recv2().ok());
            Thread k = start(c::close);
            join(a, b, k);
            assertTrue(!r1[0] && !r2[0]);
        });
    }

    /**
     * A select over two channels, each with a blocked or arriving sender: the select takes exactly
     * one value (wake-once), and the other sender's value is still there for a plain receive. If
     * both wakers woke the select, one sender would believe it delivered while its value was lost:
     * the second receive would hang.
     */
    @Test
    void selectFiresExactlyOneCase() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Chan<Integer> c1 = chan(0);
            Chan<Integer> c2 = chan(0);
            int[] got = new int[2];
            Thread s1 = start(() -> c1.send(1));
            Thread s2 = start(() -> c2.send(2));
            Thread sel = start(() -> {
                Select s = new Select();
                int i1 = s.addRecv(c1);
                s.addRecv(c2);
                int k = s.await();
                got[0] = s.value();
                got[1] = (k == i1 ? c2 : c1).recv();
            });
            join(s1, s2, sel);
            assertEquals(3, got[0] + got[1]);
            assertTrue(got[0] != got[1]);
        });
    }

    /** A select with a send and a receive case racing a receiver and a sender: exactly one case fires. */
    @Test
    void selectSendOrRecvExactlyOne() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Chan<Integer> in = chan(0);
            Chan<Integer> out = chan(0);
            Chan<Integer> tick = chan(1); // "timeout": a timer channel's non-blocking send
            int[] chosen = {-1};
            Thread t = start(() -> tick.trySend(0));
            Thread sel = start(() -> {
                Select s = new Select();
                s.addRecv(in);
                s.addSend(out, 5);
                s.addRecv(tick);
                chosen[0] = s.await();
            });
            Thread r = start(() -> {
                Chan.Received<Integer> v = out.tryRecv();
                if (v != null) {
                    assertEquals(5, v.value());
                }
            });
            join(t, sel, r);
            assertTrue(chosen[0] == 1 || chosen[0] == 2, "chosen " + chosen[0]);
            // the timer value is consumed exactly when its case was chosen
            assertEquals(chosen[0] == 2 ? 0 : 1, tick.len());
        });
    }

    /** Select woken by close of one of its channels: recv case reports !ok, no other case fires. */
    @Test
    void selectWokenByClose() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Chan<Integer> a = chan(0);
            Chan<Integer> b = chan(0);
            boolean[] ok = {true};
            int[] chosen = {-1};
            Thread sel = start(() -> {
                Select s = new Select();
                s.addRecv(a);
                s.addRecv(b);
                chosen[0] = s.await();
                ok[0] = s.ok();
            });
            Thread k = start(a::close);
            join(sel, k);
            assertEquals(0, chosen[0]);
            assertTrue(!ok[0]);
            assertEquals(null, b.tryRecv()); // nothing left queued on b
        });
    }
}
