package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ThreadLocals belong to the goroutine ({@code -Dgort.threadlocals=goroutine}, the default when
 * {@code java.lang} is open to gort, as it is in the test forks): the code that set one reads it
 * back whichever carrier it resumes on, two goroutines that share a carrier never see each other's
 * values, a new goroutine starts with none, a {@code Thread} started in a goroutine inherits the
 * goroutine's {@link InheritableThreadLocal}s and so does a goroutine started by {@code go}. Under
 * {@code carrier} they stay the carrier's (docs/adr/0004).
 */
@Timeout(60)
class GoroutineThreadLocalsTest {
    /** How long a test waits for the scheduler to move a goroutine to another carrier (a bound, not a timing). */
    private static final long MOVE_DEADLINE_NS = 20_000_000_000L;

    /**
     * The carrier running the caller, read afresh ({@link M#current()} is out of line: an inlined
     * {@code Thread.currentThread()} may be kept by C2 across a yield).
     */
    private static Thread carrier() {
        return M.current().thread();
    }

    private static Config goroutineMode(int procs) {
        Config c = TestSupport.config(procs);
        assertEquals("goroutine", c.settings().threadLocals(), "the test forks open java.lang (pom: gort.exports)");
        return c;
    }

    private static Config carrierMode(int procs) {
        Config c = TestSupport.config(procs);
        return c.withSettings(c.settings().withThreadLocals("carrier"));
    }

    /**
     * Two goroutines ping-pong through two semaphores at GOMAXPROCS=2, each parked between rounds
     * and readied by the other (into the waker's P), every fourth round also through a Gosched (the
     * global queue), beside a third goroutine that Goscheds: each reads back its own value after
     * every park, until each has resumed on a carrier other than the one it set its value on and
     * both have run on one carrier (bounded).
     */
    @Test
    void aThreadLocalFollowsItsGoroutineAcrossParksOntoOtherCarriers() {
        ThreadLocal<String> tl = new ThreadLocal<>();
        Scheduler s = new Scheduler(goroutineMode(2));
        List<String> wrong = new ArrayList<>();
        boolean[] moved = new boolean[2];
        List<Set<Thread>> seen = List.of(ConcurrentHashMap.newKeySet(), ConcurrentHashMap.newKeySet());
        s.run(() -> {
            GoSema[] turn = {new GoSema(1), new GoSema(0)};
            GoSema done = new GoSema(0);
            GoSema stopShaker = new GoSema(0);
            // keeps both Ps busy with Gosched (through the global queue), so that the two move
            s.newproc(() -> {
                while (!stopShaker.tryAcquire()) {
                    Scheduler.gosched();
                }
            });
            long deadline = System.nanoTime() + MOVE_DEADLINE_NS;
            boolean[] stop = new boolean[1]; // written and read under turn's hand-off
            for (int k = 0; k < 2; k++) {
                int me = k;
                s.newproc(() -> {
                    String mine = "goroutine-" + me;
                    tl.set(mine);
                    Thread first = carrier();
                    for (int round = 0; ; round++) {
                        turn[me].acquire(); // parks until the other one hands over
                        if ((round & 3) == me) {
                            // through the global queue, where either M may take it (a readied G
                            // goes to its waker's runnext, so the pair alone would stay on one M)
                            Scheduler.gosched();
                        }
                        Thread now = carrier();
                        seen.get(me).add(now);
                        if (now != first) {
                            moved[me] = true;
                        }
                        String got = tl.get();
                        if (!mine.equals(got)) {
                            wrong.add(mine + " read " + got + " in round " + round + " on " + now.getName()
                                    + " (set on " + first.getName() + ")");
                        }
                        boolean shared = !Collections.disjoint(seen.get(0), seen.get(1));
                        if (stop[0]
                                || (moved[0] && moved[1] && shared)
                                || !wrong.isEmpty()
                                || System.nanoTime() > deadline) {
                            stop[0] = true;
                            turn[1 - me].release();
                            done.release();
                            return;
                        }
                        turn[1 - me].release();
                    }
                });
            }
            done.acquire();
            done.acquire();
            stopShaker.release();
        });
        assertEquals(List.of(), wrong, "a goroutine read another's (or its carrier's) ThreadLocal");
        assertTrue(moved[0] && moved[1], "a goroutine never changed carriers: nothing was tested");
    }

    /** GOMAXPROCS=1: two goroutines take turns on one carrier, each with its own value, neither sees the other's. */
    @Test
    void twoGoroutinesOnOneCarrierDoNotSeeEachOthersValues() {
        ThreadLocal<String> tl = new ThreadLocal<>();
        Scheduler s = new Scheduler(goroutineMode(1));
        List<String> wrong = new ArrayList<>();
        int[] sameCarrier = new int[1];
        s.run(() -> {
            GoSema[] turn = {new GoSema(1), new GoSema(0)};
            GoSema done = new GoSema(0);
            Thread[] last = new Thread[1];
            for (int k = 0; k < 2; k++) {
                int me = k;
                s.newproc(() -> {
                    for (int round = 0; round < 50; round++) {
                        turn[me].acquire();
                        Thread now = carrier();
                        if (now == last[0]) {
                            sameCarrier[0]++;
                        }
                        last[0] = now;
                        String expected = round == 0 ? null : "goroutine-" + me + "/" + (round - 1);
                        String got = tl.get();
                        if (!java.util.Objects.equals(expected, got)) {
                            wrong.add(
                                    "goroutine-" + me + " round " + round + ": expected " + expected + ", read " + got);
                        }
                        tl.set("goroutine-" + me + "/" + round);
                        turn[1 - me].release();
                    }
                    done.release();
                });
            }
            done.acquire();
            done.acquire();
        });
        assertEquals(List.of(), wrong, "goroutines sharing a carrier saw each other's ThreadLocals");
        assertTrue(sameCarrier[0] > 0, "the goroutines never shared a carrier: nothing was tested");
    }

    /**
     * A goroutine started after one that set a ThreadLocal and an InheritableThreadLocal ended, on the
     * same carrier (GOMAXPROCS=1), sees neither: gort does not reuse Gs, and a G's maps leave with it.
     */
    @Test
    void aNewGoroutineStartsWithNoThreadLocals() {
        ThreadLocal<String> tl = new ThreadLocal<>();
        InheritableThreadLocal<String> itl = new InheritableThreadLocal<>();
        Scheduler s = new Scheduler(goroutineMode(1));
        List<String> wrong = new ArrayList<>();
        int[] sameCarrier = new int[1];
        s.run(() -> {
            for (int i = 0; i < 20; i++) {
                GoSema done = new GoSema(0);
                Thread[] ranOn = new Thread[2];
                s.newproc(() -> {
                    ranOn[0] = carrier();
                    tl.set("dead goroutine's");
                    itl.set("dead goroutine's inheritable");
                    done.release();
                });
                done.acquire();
                s.newproc(() -> {
                    ranOn[1] = carrier();
                    if (tl.get() != null || itl.get() != null) {
                        wrong.add("a new goroutine read " + tl.get() + " / " + itl.get());
                    }
                    done.release();
                });
                done.acquire();
                if (ranOn[0] == ranOn[1]) {
                    sameCarrier[0]++;
                }
            }
        });
        assertEquals(List.of(), wrong);
        assertTrue(sameCarrier[0] > 0, "never on the same carrier: nothing was tested");
    }

    /**
     * A Thread started by a goroutine after it moved to another carrier inherits the value the
     * goroutine set before it moved (Thread's constructor copies the current thread's inheritable
     * map: the goroutine's while it is mounted).
     */
    @Test
    void aThreadStartedInAGoroutineInheritsItsInheritableThreadLocals() throws Exception {
        InheritableThreadLocal<String> itl = new InheritableThreadLocal<>();
        Scheduler s = new Scheduler(goroutineMode(2));
        AtomicReference<String> inThread = new AtomicReference<>("not run");
        boolean[] moved = new boolean[1];
        s.run(() -> {
            GoSema done = new GoSema(0);
            s.newproc(() -> {
                itl.set("the goroutine's");
                Thread first = carrier();
                long deadline = System.nanoTime() + MOVE_DEADLINE_NS;
                while (carrier() == first && System.nanoTime() < deadline) {
                    Scheduler.gosched(); // to the global queue: either M may resume it
                }
                moved[0] = carrier() != first;
                Thread t = new Thread(() -> inThread.set(itl.get()));
                t.start();
                try {
                    t.join();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                done.release();
            });
            // a second goroutine keeps the other P busy now and then, so that the first one moves
            GoSema stop = new GoSema(0);
            s.newproc(() -> {
                while (!stop.tryAcquire()) {
                    Scheduler.gosched();
                }
            });
            done.acquire();
            stop.release();
        });
        assertTrue(moved[0], "the goroutine never changed carriers: nothing was tested");
        assertEquals("the goroutine's", inThread.get());
    }

    /**
     * {@code go} copies the creator's inheritable values into the new goroutine, as a virtual
     * thread gets its creator's: a copy, so that a change in the child is not the parent's.
     */
    @Test
    void aGoroutineInheritsItsCreatorsInheritableThreadLocalsAsACopy() {
        InheritableThreadLocal<String> itl = new InheritableThreadLocal<>();
        ThreadLocal<String> tl = new ThreadLocal<>();
        Scheduler s = new Scheduler(goroutineMode(1));
        ConcurrentLinkedQueue<String> got = new ConcurrentLinkedQueue<>();
        s.run(() -> {
            itl.set("parent's");
            tl.set("parent's plain");
            GoSema done = new GoSema(0);
            s.newproc(() -> {
                got.add("child read " + itl.get() + " / " + tl.get());
                itl.set("child's");
                s.newproc(() -> {
                    got.add("grandchild read " + itl.get());
                    done.release();
                });
                done.release();
            });
            done.acquire();
            done.acquire();
            got.add("parent read " + itl.get());
        });
        assertEquals(
                List.of("child read parent's / null", "grandchild read child's", "parent read parent's"),
                new ArrayList<>(got));
    }

    /** {@code -Dgort.threadlocals=carrier}: today's behaviour, a ThreadLocal is the carrier's (GOMAXPROCS=1). */
    @Test
    void carrierModeKeepsThreadLocalsWithTheCarrier() {
        ThreadLocal<String> tl = new ThreadLocal<>();
        Scheduler s = new Scheduler(carrierMode(1));
        assertEquals("carrier", s.config().settings().threadLocals());
        List<String> got = new ArrayList<>();
        int[] sameCarrier = new int[1];
        s.run(() -> {
            for (int i = 0; i < 20; i++) {
                GoSema done = new GoSema(0);
                Thread[] ranOn = new Thread[2];
                String v = "set by goroutine " + i;
                s.newproc(() -> {
                    ranOn[0] = carrier();
                    tl.set(v);
                    done.release();
                });
                done.acquire();
                s.newproc(() -> {
                    ranOn[1] = carrier();
                    if (ranOn[0] == ranOn[1]) {
                        sameCarrier[0]++;
                        got.add(tl.get());
                    }
                    tl.remove();
                    done.release();
                });
                done.acquire();
                if (ranOn[0] == ranOn[1]) {
                    assertEquals(v, got.getLast(), "a carrier's ThreadLocal seen by the next goroutine on it");
                }
            }
        });
        assertTrue(sameCarrier[0] > 0, "never on the same carrier: nothing was tested");
        assertNull(tl.get(), "the test thread's own value is untouched");
    }
}
