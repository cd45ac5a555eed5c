package dev.gort.sync;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.runtime.Scheduler;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's sync.Pool (pool_test.go): the private slot then the shared chain on one P, the victim cache
 * across one cleanup and its loss at the second, New, concurrent Put/Get, and the lock-free
 * dequeue and chain (one producer, many consumers: every value taken exactly once). The cleanups
 * that Go triggers with runtime.GC() are called directly on pools kept out of the GC hook, so that a
 * real GC during the test cannot add one; {@link #theGcReleasesPooledObjects} checks the hook
 * itself.
 */
class PoolTest {
    /**
     * Go: TestPool. Pinned to one P: "a" goes to the private slot, "b" to the shared chain; Get
     * returns them in that order, then nothing. 100 objects survive one cleanup (the victim cache)
     * and are gone after the second.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void privateThenSharedThenVictimThenGone(int procs) {
        GortTesting.run(procs, () -> {
            Pool<String> p = new Pool<>(null, false);
            check(p.get() == null, "expected empty");
            // Make sure that the goroutine does not migrate to another P between Put and Get.
            Scheduler.procPin();
            try {
                p.put("a");
                p.put("b");
                check("a".equals(p.get()), "want a");
                check("b".equals(p.get()), "want b");
                check(p.get() == null, "want null");
            } finally {
                Scheduler.procUnpin();
            }
            // Put in a large number of objects so that they spill into stealable space.
            for (int i = 0; i < 100; i++) {
                p.put("c");
            }
            // After one cleanup (Go: GC) the victim cache keeps them alive.
            p.cleanup();
            String g = p.get();
            check("c".equals(g), "got %s; want c after one cleanup", g);
            // A second cleanup drops the victim cache.
            p.cleanup();
            g = p.get();
            check(g == null, "got %s; want null after the second cleanup", g);
        });
    }

    /** Go: TestPoolNew. New is called whenever the pool is empty, and only then. */
    @Test
    void newIsCalledWhenEmpty() {
        GortTesting.run(2, () -> {
            int[] i = {0};
            Pool<Integer> p = new Pool<>(() -> ++i[0], false);
            check(p.get() == 1, "want 1");
            check(p.get() == 2, "want 2");
            Scheduler.procPin();
            try {
                p.put(42);
                check(p.get() == 42, "want 42");
            } finally {
                Scheduler.procUnpin();
            }
            check(p.get() == 3, "want 3");
        });
    }

    /** Put(null) is ignored (Go: Put(nil) returns at once). */
    @Test
    void putNullIsIgnored() {
        GortTesting.run(1, () -> {
            Pool<String> p = new Pool<>(() -> "new", false);
            p.put(null);
            check("new".equals(p.get()), "Put(null) was stored");
        });
    }

    /**
     * Go: TestPoolStress. Ten goroutines put and get at once: Get returns only what was put (0) or
     * nothing.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void stress(int procs) {
        GortTesting.run(procs, () -> {
            final int goroutines = 10;
            final int n = 10_000;
            Pool<Integer> p = new Pool<>();
            Chan<Boolean> done = Chan.make();
            for (int i = 0; i < goroutines; i++) {
                Go.go(() -> {
                    Integer v = 0;
                    for (int j = 0; j < n; j++) {
                        if (v == null) {
                            v = 0;
                        }
                        p.put(v);
                        v = p.get();
                        check(v == null || v == 0, "expect 0, got %s", v);
                        if (j % 100 == 0) {
                            Go.gosched();
                        }
                    }
                    done.send(true);
                });
            }
            for (int i = 0; i < goroutines; i++) {
                done.recv();
            }
        });
    }

    /**
     * Objects put on one P are stolen by a caller with no P (here a thread outside the runtime,
     * which steals from the shared chains only); its own Put drops the object.
     */
    @Test
    void aCallerWithoutAPStealsFromTheSharedChains() {
        GortTesting.run(2, () -> {
            Pool<String> p = new Pool<>(() -> "new", false);
            Scheduler.procPin();
            try {
                p.put("private"); // the private slot: never stolen
                p.put("shared"); // the shared chain
            } finally {
                Scheduler.procUnpin();
            }
            AtomicReference<List<String>> got = new AtomicReference<>();
            Thread t = new Thread(() -> {
                List<String> l = new ArrayList<>();
                l.add(p.get());
                l.add(p.get());
                p.put("outside");
                l.add(p.get());
                got.set(l);
            });
            t.start();
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertEquals(List.of("shared", "new", "new"), got.get());
            Scheduler.procPin();
            try {
                check("private".equals(p.get()), "the private slot was taken");
            } finally {
                Scheduler.procUnpin();
            }
        });
    }

    /**
     * Go: TestPoolGC / TestPoolRelease (testPool). A pool releases what it holds after GCs (the
     * cleaner's two cleanups): drained or not, at least N-1 of N pooled objects are collected. A
     * real GC, retried a bounded number of times (Go retries too).
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void theGcReleasesPooledObjects(boolean drain) {
        GortTesting.run(1, () -> {
            Pool<Object> p = new Pool<>();
            final int n = 100;
            List<WeakReference<Object>> refs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Object v = new Object();
                refs.add(new WeakReference<>(v));
                p.put(v);
            }
            if (drain) {
                for (int i = 0; i < n; i++) {
                    p.get();
                }
            }
            int collected = 0;
            for (int i = 0; i < 200 && collected < n - 1; i++) {
                System.gc();
                Thread.onSpinWait();
                collected = (int) refs.stream().filter(r -> r.refersTo(null)).count();
            }
            check(collected >= n - 1, "only %d out of %d resources are collected", collected, n);
        });
    }

    /** Go: TestPoolDequeue. */
    @Test
    void dequeueGivesEachValueOnce() {
        PoolDequeue d = new PoolDequeue(16);
        testPoolDequeue(new Queue() {
            public boolean pushHead(int v) {
                return d.pushHead(v);
            }

            public Object popHead() {
                return d.popHead();
            }

            public Object popTail() {
                return d.popTail();
            }
        });
    }

    /** Go: TestPoolChain. */
    @Test
    void chainGivesEachValueOnce() {
        PoolChain c = new PoolChain();
        testPoolDequeue(new Queue() {
            public boolean pushHead(int v) {
                c.pushHead(v);
                return true;
            }

            public Object popHead() {
                return c.popHead();
            }

            public Object popTail() {
                return c.popTail();
            }
        });
    }

    interface Queue {
        boolean pushHead(int v);

        Object popHead();

        Object popTail();
    }

    /**
     * Go: testPoolDequeue. One producer pushes 0..N-1 (and pops its head every tenth push),
     * P-1 consumers pop the tail until N-1 is seen: every value is taken exactly once. N-1 is not a
     * multiple of ten, so that the producer never pops it itself.
     */
    static void testPoolDequeue(Queue d) {
        GortTesting.run(4, () -> {
            final int consumers = 9;
            final int n = 100_000;
            AtomicIntegerArray have = new AtomicIntegerArray(n);
            AtomicBoolean stop = new AtomicBoolean();
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < consumers; i++) {
                wg.go(() -> {
                    int fail = 0;
                    while (!stop.get()) {
                        Object val = d.popTail();
                        if (val != null) {
                            fail = 0;
                            record(have, stop, n, (Integer) val);
                        } else if (++fail % 100 == 0) {
                            Go.gosched(); // let the pusher run
                        }
                    }
                });
            }
            int[] nPopHead = {0};
            wg.go(() -> {
                for (int j = 0; j < n; j++) {
                    while (!d.pushHead(j)) {
                        Go.gosched(); // full: let a popper run
                    }
                    if (j % 10 == 0) {
                        Object val = d.popHead();
                        if (val != null) {
                            nPopHead[0]++;
                            record(have, stop, n, (Integer) val);
                        }
                    }
                }
            });
            wg.await();
            for (int i = 0; i < n; i++) {
                check(have.get(i) == 1, "expected have[%d] = 1, got %d", i, have.get(i));
            }
        });
    }

    static void record(AtomicIntegerArray have, AtomicBoolean stop, int n, int val) {
        have.incrementAndGet(val);
        if (val == n - 1) {
            stop.set(true);
        }
    }

    /** PoolChain grows past its first dequeue and gives values back LIFO at the head, FIFO at the tail. */
    @Test
    void chainGrowsAndKeepsOrder() {
        PoolChain c = new PoolChain();
        for (int i = 0; i < 100; i++) {
            c.pushHead(i);
        }
        assertEquals(99, c.popHead());
        assertEquals(0, c.popTail());
        assertEquals(1, c.popTail());
        for (int i = 98; i >= 2; i--) {
            assertEquals(i, c.popHead());
        }
        assertNull(c.popHead());
        assertNull(c.popTail());
        PoolDequeue d = new PoolDequeue(4);
        for (int i = 0; i < 4; i++) {
            assertTrue(d.pushHead(i));
        }
        assertTrue(!d.pushHead(4), "a full dequeue accepted a push");
        assertEquals(0, d.popTail());
        assertTrue(d.pushHead(4), "a slot freed by popTail was not reused");
    }

    /** Supplier-typed New: Get's value is New's when the pool is empty (a generic check). */
    @Test
    void getReturnsNewsValue() {
        GortTesting.run(1, () -> {
            Supplier<StringBuilder> mk = StringBuilder::new;
            Pool<StringBuilder> p = new Pool<>(mk, false);
            StringBuilder b = p.get();
            b.append("x");
            p.put(b);
            check(p.get() == b, "the pooled builder was not reused on the same P");
        });
    }
}
