package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Vector;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * Which receivers make a counted call of a JDK callback method ({@code LockFrames.callbackLocks},
 * used by {@code Poll.jdkCallbackEnter}): the implementation a call reaches, by name and arity,
 * holds a lock around the callback. And {@code goyield}, like {@code Gosched}, never yields inside
 * a counted lock.
 */
class JdkCallbackLocksTest {
    private static boolean locks(Object receiver, String method, int args) {
        int bit = LockFrames.callbackBit(LockFrames.CALLBACKS.indexOf(method), args);
        return (LockFrames.callbackLocks(receiver.getClass()) & (1 << bit)) != 0;
    }

    /** A user subclass that adds a one-argument {@code compute}: the two-argument one is still the JDK's. */
    static final class Cache extends ConcurrentHashMap<String, Integer> {
        int compute(String key) {
            return key.length();
        }
    }

    @Test
    void theImplementationReachedDecidesByNameAndArity() {
        assertTrue(locks(new ConcurrentHashMap<>(), "computeIfAbsent", 2));
        assertTrue(locks(new ConcurrentHashMap<>(), "merge", 3));
        assertFalse(locks(new ConcurrentHashMap<>(), "forEach", 1), "CHM.forEach reads without a lock");
        assertTrue(locks(new Cache(), "compute", 2), "a subclass's own compute(String) hides nothing");
        assertTrue(locks(Collections.synchronizedList(new ArrayList<>()), "forEach", 1));
        assertTrue(locks(Collections.synchronizedMap(new HashMap<>()), "computeIfAbsent", 2));
        assertTrue(locks(new Hashtable<>(), "computeIfAbsent", 2));
        assertTrue(locks(new Vector<>(), "removeIf", 1), "not synchronized itself: its bulkRemove is");
        assertTrue(locks(new Vector<>(), "forEach", 1));
        assertTrue(locks(new CopyOnWriteArrayList<>(), "removeIf", 1));
        assertTrue(locks(new CopyOnWriteArraySet<>(), "removeIf", 1), "delegates to its list's");
        assertTrue(locks(new CopyOnWriteArrayList<>(List.of(1, 2)).subList(0, 1), "sort", 1));
        assertFalse(locks(new CopyOnWriteArrayList<>(), "forEach", 1), "a snapshot, no lock");
        assertTrue(locks(new ArrayBlockingQueue<>(1), "forEach", 1), "under its lock");
        assertTrue(locks(new PriorityBlockingQueue<>(), "removeIf", 1), "under its lock");
        assertFalse(locks(new LinkedBlockingQueue<>(), "forEach", 1), "a batch copied under the lock, run unlocked");
        assertFalse(locks(new LinkedBlockingQueue<>(), "removeIf", 1), "the filter runs unlocked");
        assertFalse(locks(new LinkedBlockingDeque<>(), "forEach", 1), "a batch copied under the lock, run unlocked");
        assertFalse(locks(new LinkedBlockingDeque<>(), "removeIf", 1), "the filter runs unlocked");
        assertTrue(LockFrames.lockingMethods(LinkedBlockingQueue.class).contains("drainTo"), "c.add under the lock");
        assertFalse(LockFrames.lockingMethods(LinkedBlockingQueue.class).contains("bulkRemove"));
        assertFalse(locks(new HashMap<>(), "computeIfAbsent", 2));
        assertFalse(locks(new ArrayList<>(), "forEach", 1));
        BiFunction<Object, Object, Object> none = (a, b) -> a;
        assertFalse(locks(none, "compute", 2), "not a collection at all");
    }

    /**
     * {@code goyield} (a semaphore's hand-off to a waiter) inside a counted lock does nothing, as
     * {@code Gosched}: on one P, the goroutine readied just before it does not run until the lock
     * is released.
     */
    @Test
    void goyieldInsideACountedLockDoesNotYield() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicInteger order = new AtomicInteger();
        int[] ranAt = new int[1];
        int[] yieldedAt = new int[1];
        s.run(() -> {
            GoSema done = new GoSema(0);
            Scheduler.current().newproc(() -> {
                ranAt[0] = order.incrementAndGet();
                done.release();
            });
            Poll.monitorEnter(); // as instrumented code inside a synchronized block
            try {
                Scheduler.goyield();
                yieldedAt[0] = order.incrementAndGet();
            } finally {
                Poll.monitorExit();
            }
            done.acquire();
        });
        assertEquals(1, yieldedAt[0], "the other goroutine ran inside the lock");
        assertEquals(2, ranAt[0]);
    }
}
