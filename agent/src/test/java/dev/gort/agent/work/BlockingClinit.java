package dev.gort.agent.work;

import java.util.concurrent.PriorityBlockingQueue;

/**
 * A class initialiser reached inside a hooked blocking call: PriorityBlockingQueue.put (blockingEnter:
 * a HOOK syscall) calls back compareTo, which initialises {@link Init}, whose initialiser sleeps
 * (R_CLINIT: the carrier's sleep, in blockingEnter/blockingExit).
 */
public final class BlockingClinit {
    private BlockingClinit() {}

    static final java.util.concurrent.atomic.AtomicBoolean STARTED = new java.util.concurrent.atomic.AtomicBoolean();

    public static final class Init {
        public static final int VALUE = compute();

        private static int compute() {
            STARTED.set(true);
            try {
                Thread.sleep(5); // in an initialiser: the carrier sleeps
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            return 42;
        }
    }

    static final class E implements Comparable<E> {
        @Override
        public int compareTo(E o) {
            return Init.VALUE - 42;
        }
    }

    /** Initialises Init inside a hooked put; returns Init.VALUE. */
    public static int putInitialising() throws InterruptedException {
        PriorityBlockingQueue<E> q = new PriorityBlockingQueue<>();
        q.put(new E());
        q.put(new E()); // compareTo inside the hooked put
        return Init.VALUE;
    }

    /** Another goroutine waits for Init's initialisation (its carrier blocks in the JVM). */
    public static int readInit() {
        while (!STARTED.get()) {
            Thread.yield(); // Gosched: the initialising goroutine runs first
        }
        return Init.VALUE;
    }
}
