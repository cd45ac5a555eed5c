package dev.gort.runtime;

/**
 * Starts a carrier thread and, right after it, {@link Config#carrierSpacers} parked "spacer"
 * threads that live as long as the carrier: so that no two carriers' JVM thread handles share a
 * cache line. The one place carrier threads are started ({@link Idle#CARRIERS}).
 *
 * <p>Why. HotSpot gives every Java thread four 8-byte handles in one JVM-wide table (its
 * {@code OopStorage} for thread handles, javaThread.cpp {@code set_threadOopHandles}): the thread
 * object, the mounted virtual thread, the JVMTI one and the scoped-value cache, taken one after the
 * other from the lowest free slots when the thread starts. So two threads started one after the
 * other usually hold adjacent slots, two threads to a 64-byte line. A carrier uses its own every
 * switch: {@code Continuation.run} writes the scoped-value cache slot twice per run (JDK 25 sets it
 * on mount and clears it on unmount, whatever {@code jdk.preserveScopedValueCache} says), and
 * every {@code currentCarrierThread()}/{@code currentThread()} reads the first two. Two carriers on
 * one line make each other's loads and stores miss on every switch: the line travels between the
 * CPUs (about 430 ns for a round trip on this project's 2-vCPU host, bench/probes/c2c.c).
 *
 * <p>Measured with nothing of gort's (the benchmark jar's {@code CarrierSlots}, bench/README.md:
 * two platform threads each running a continuation's run and yield in a loop, at the same time):
 * median 263 ns per run+yield when the two were started one after the other, 93 ns (as one thread
 * alone) with two spacer threads started between them. In gort it was the 10,000 pairs at
 * GOMAXPROCS=2 running at 180-200 ns per message for exactly as long as the two Ms that held the Ps
 * were the two started one after the other (M2 and M3), and about 100 ns with any other pair: most
 * of the "two modes" of the P=2 benchmarks, which the {@link CacheLinePad} heap padding had not
 * removed. Virtual threads' carriers (the JDK's ForkJoinPool workers) share the hazard.
 *
 * <p>How. Two spacers put 8 slots (64 bytes) between one carrier's slots and the next thread's,
 * whatever the alignment, so the next carrier's handles are on another line. Carrier starts are
 * serialised JVM-wide (the table is the JVM's, shared by every runtime), so two runtimes or two Ms
 * starting at once cannot interleave their slots. Not a guarantee: a thread the JVM or the program
 * starts between a carrier and its spacers (a JIT compiler thread, a user's thread), or slots freed
 * by threads that ended, can still put a carrier next to another; and the slot layout is HotSpot's
 * implementation, not a specification. The cost: two parked threads per M (about 30 KiB of native
 * memory each, none of the JVM heap), which end when their carrier ends. {@code
 * -Dgort.carrier.spacers=0} turns it off.
 *
 * <p>Go: none. Go's Ms keep their hot state in the m and g structures, which are allocated in
 * size classes that are multiples of the cache line; there is no table shared by every thread.
 */
final class CarrierSpacers {
    /** The default number of spacers per carrier: two make 64 bytes of slots, a line at any alignment. */
    static final int DEFAULT = 2;
    /** The most {@code -Dgort.carrier.spacers} accepts. */
    static final int MAX = 8;
    /** A spacer parks for its whole life: the JVM's smallest stack is enough. */
    private static final long SPACER_STACK = 64 << 10;

    /** Serialises carrier starts across every runtime of the JVM (the handle table is the JVM's). */
    private static final Object STARTS = new Object();

    private CarrierSpacers() {}

    /**
     * Starts {@code carrier}, then {@code spacers} daemon threads named {@code <name>-spacer<id>.<i>}
     * that wait for it to end. Called by whichever thread starts an M (a carrier, sysmon, the thread
     * that calls {@code Go.run}); never holds a runtime lock. A spacer that cannot be started
     * (the OS refused a thread) is left out: the carrier runs without it, as with spacers=0.
     */
    static void start(Thread carrier, String name, long id, int spacers) {
        synchronized (STARTS) {
            carrier.start();
            for (int i = 0; i < spacers; i++) {
                Thread sp = new Thread(
                        carrier.getThreadGroup(),
                        () -> awaitEnd(carrier),
                        name + "-spacer" + id + "." + i,
                        SPACER_STACK,
                        false);
                sp.setDaemon(true);
                try {
                    sp.start();
                } catch (OutOfMemoryError e) { // "unable to create native thread": the next newm reports it
                    return;
                }
            }
        }
    }

    /** A spacer's life: hold its handles until the carrier ends. */
    private static void awaitEnd(Thread carrier) {
        while (carrier.isAlive()) {
            try {
                carrier.join();
            } catch (InterruptedException e) {
                // nothing to stop early for: ending now would free the slots under a live carrier
            }
        }
    }
}
