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
 * median 250 ns per run+yield when the two were started one after the other, 94 ns with two spacer
 * threads started between them (bench/results/spacers-2026-12-04). In gort: the 10,000 pairs at
 * GOMAXPROCS=2 ran at 181-230 ns per message whenever the two Ms holding the Ps were the two
 * started one after the other (M2 and M3), and at 108-162 ns with any other pair, the two modes
 * that the {@link CacheLinePad} heap padding had made rarer but not removed. Virtual threads'
 * carriers (the JDK's ForkJoinPool workers) share the hazard.
 *
 * <p>How. Two spacers put 8 slots (64 bytes) between one carrier's slots and the next thread's,
 * whatever the alignment, so the next carrier's handles are on another line. Carrier starts are
 * serialised across every runtime of this copy of gort (the table is the JVM's), so two runtimes or
 * two Ms starting at once cannot interleave their slots. Not a guarantee, and the slot layout is
 * HotSpot's implementation, not a specification: a new thread takes the lowest free slots, and
 * threads that end free theirs at different times (HotSpot releases them later, from its service
 * thread): the JVM's compiler threads, a runtime's carriers and spacers when it ends, an M that
 * exits with its locked goroutine. A later carrier can land in such a hole next to a live carrier.
 * The cost: two more OS threads per M, parked (each a {@code Thread} object on the heap, a
 * HotSpot thread and its stack), which end when their carrier ends; a program near the OS's thread
 * limit reaches it at a third of the Ms. {@code -Dgort.carrier.spacers=0} turns it off.
 *
 * <p>Go: none. Go's Ms keep their hot state in the m and g structures, which are allocated in
 * size classes that are multiples of the cache line; there is no table shared by every thread.
 */
final class CarrierSpacers {
    /** The default number of spacers per carrier: two make 64 bytes of slots, a line at any alignment. */
    static final int DEFAULT = 2;
    /** The most {@code -Dgort.carrier.spacers} accepts. */
    static final int MAX = 8;
    /** A spacer only parks: a small stack (HotSpot raises it to its own minimum). */
    private static final long SPACER_STACK = 64 << 10;

    /**
     * Immutable: the monitor that serialises carrier starts across every runtime (held while one
     * carrier and its spacers start; tests take it to wait for a start to finish).
     */
    static final Object STARTS = new Object();

    private CarrierSpacers() {}

    /**
     * Starts {@code mp}'s carrier thread, then its runtime's {@link Config#carrierSpacers} daemon
     * threads named {@code <name>-spacer<id>.<i>} that wait for it to end. Called by whichever
     * thread starts an M (a carrier, sysmon, the thread that calls {@code Go.run}, an outside thread
     * that readies a goroutine); never with a runtime lock held. If the OS refuses a spacer's
     * thread, that spacer and the carrier's remaining ones are left out, silently: the carrier runs
     * as with spacers=0, and only its cache line is at stake (the next M's carrier start then fails
     * with the same error, out of its caller).
     */
    static void start(M mp) {
        Thread carrier = mp.thread;
        String name = mp.sched.config.name();
        long id = mp.id;
        int spacers = mp.sched.config.carrierSpacers();
        ThreadGroup group = carrier.getThreadGroup(); // before start: a thread that has ended has none
        synchronized (STARTS) {
            carrier.start();
            for (int i = 0; i < spacers; i++) {
                Thread sp = new Thread(
                        group, () -> awaitEnd(carrier), name + "-spacer" + id + "." + i, SPACER_STACK, false);
                sp.setDaemon(true);
                sp.setContextClassLoader(null); // runs none of the program's code: pins no class loader
                try {
                    sp.start();
                } catch (OutOfMemoryError e) { // "unable to create native thread"
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
