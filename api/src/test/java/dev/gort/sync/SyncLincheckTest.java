package dev.gort.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.internal.ThreadParker;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * Model checking of the sync primitives' blocking paths (the sema.go-style semaphore, the mutex
 * state machine, the notify list) over real threads ({@link ThreadParker}). A lost wake-up shows as
 * a hang; a broken exclusion as a failed assertion.
 */
class SyncLincheckTest {
    static final int INVOCATIONS = Integer.getInteger("gort.lincheck.invocations", 300);

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

    @Test
    void mutexExcludesAndWakesEveryWaiter() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Mutex m = new Mutex(ThreadParker.INSTANCE);
            int[] count = new int[1];
            boolean[] inside = new boolean[1];
            Runnable body = () -> {
                m.lock();
                assertTrue(!inside[0], "two holders");
                inside[0] = true;
                count[0]++;
                inside[0] = false;
                m.unlock();
            };
            Thread a = start(body);
            Thread b = start(body);
            Thread c = start(body);
            join(a, b, c);
            assertEquals(3, count[0]);
            assertEquals(0, m.state());
        });
    }

    @Test
    void mutexUnlockedByAnotherThread() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Mutex m = new Mutex(ThreadParker.INSTANCE);
            m.lock();
            boolean[] got = new boolean[1];
            Thread waiter = start(() -> {
                m.lock();
                got[0] = true;
                m.unlock();
            });
            Thread unlocker = start(m::unlock);
            join(waiter, unlocker);
            assertTrue(got[0]);
            assertEquals(0, m.state());
        });
    }

    @Test
    void rwmutexWriterExcludesReaders() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            RWMutex rw = new RWMutex(ThreadParker.INSTANCE);
            int[] readers = new int[1];
            boolean[] writing = new boolean[1];
            int[] value = new int[1];
            Runnable reader = () -> {
                rw.rlock();
                assertTrue(!writing[0], "reader inside a write");
                rw.runlock();
            };
            Thread r1 = start(reader);
            Thread r2 = start(reader);
            Thread w = start(() -> {
                rw.lock();
                writing[0] = true;
                value[0]++;
                writing[0] = false;
                rw.unlock();
            });
            join(r1, r2, w);
            assertEquals(1, value[0]);
            assertEquals(0, readers[0]);
        });
    }

    @Test
    void waitGroupReleasesTheWaiterAfterEveryDone() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            WaitGroup wg = new WaitGroup(ThreadParker.INSTANCE);
            boolean[] done = new boolean[2];
            boolean[] seen = new boolean[1];
            wg.add(2);
            Thread a = start(() -> {
                done[0] = true;
                wg.done();
            });
            Thread b = start(() -> {
                done[1] = true;
                wg.done();
            });
            Thread w = start(() -> {
                wg.await();
                seen[0] = done[0] && done[1];
            });
            join(a, b, w);
            assertTrue(seen[0], "Wait returned before every Done");
        });
    }

    @Test
    void condSignalIsNotLost() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Mutex m = new Mutex(ThreadParker.INSTANCE);
            Cond c = new Cond(m, ThreadParker.INSTANCE);
            boolean[] ready = new boolean[1];
            Thread waiter = start(() -> {
                m.lock();
                while (!ready[0]) {
                    c.await();
                }
                m.unlock();
            });
            Thread signaler = start(() -> {
                m.lock();
                ready[0] = true;
                c.signal();
                m.unlock();
            });
            join(waiter, signaler);
        });
    }

    @Test
    void condBroadcastWakesAll() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Mutex m = new Mutex(ThreadParker.INSTANCE);
            Cond c = new Cond(m, ThreadParker.INSTANCE);
            boolean[] ready = new boolean[1];
            Runnable w = () -> {
                m.lock();
                while (!ready[0]) {
                    c.await();
                }
                m.unlock();
            };
            Thread w1 = start(w);
            Thread w2 = start(w);
            Thread b = start(() -> {
                m.lock();
                ready[0] = true;
                m.unlock();
                c.broadcast();
            });
            join(w1, w2, b);
        });
    }
}
