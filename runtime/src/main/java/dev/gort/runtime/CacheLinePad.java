package dev.gort.runtime;

/**
 * 64 bytes before the fields of the objects that a carrier writes on every switch (its {@link M},
 * {@link P}, {@link Found}, {@link RunQueue}), so that none of them shares a
 * cache line with whatever object lies before it in the heap. Each such class also ends in 64
 * bytes: a final {@code Padded} subclass that production code instantiates ({@code M.Padded},
 * {@code P.Padded}, {@code Found.Padded}, {@code RunQueue.Padded}, {@code M.MThread.Padded}), since
 * a class's own fields are laid out in size order, not declaration order, so only a subclass puts
 * fields after them. The carrier thread ({@link M.MThread}) cannot have fields before the JDK's
 * {@code Thread} fields: it relies on the padding at the end of every object here, and ends in its
 * own.
 *
 * <p>Why: a young collection copies the runtime's long-lived objects to new addresses, in the order
 * it finds them, at every collection until they are tenured, so every collection draws a new
 * layout. Unpadded, some layouts put one carrier's objects on a line with another's: the 10,000
 * pairs at GOMAXPROCS=2 (G1, 2 vCPUs) ran some stretches of a run at 160-360 ns per message instead
 * of about 100, the switch starting at a collection, with the same scheduler counts (no steals, no
 * wake-ups) and the extra time in loads and CASes of long-lived objects ({@code
 * Thread.getContinuation}: 0.5 % of the samples in the fast stretches, 14 % in the slow ones;
 * {@code Idle.wakep}, {@code RunQueue.casRunnext}); under ParallelGC, or with everything tenured at
 * the first collection ({@code -XX:MaxTenuringThreshold=0}), no such stretch. With this padding,
 * JMH ManyPairs P=2, four alternations of 5 + 5 + 3 + 3 forks: median 111 vs 132 ns, iterations
 * over 170 ns 8 of 80 vs 27 of 80; P=1 and the ping-pong unchanged. Slow stretches remained,
 * fewer: most of those were two carriers' JVM thread handles on one cache line, outside the heap
 * ({@link CarrierSpacers}). Go needs none of this for its
 * m and p: they are allocated in size classes that are multiples of the cache line. The int fills
 * the 4 bytes after a 12-byte object header, where the JVM would otherwise put a subclass's int
 * (RunQueue.head sat there once).
 *
 * <p>Go: internal/cpu CacheLinePad
 */
abstract class CacheLinePad {
    int h0;
    long p00, p01, p02, p03, p04, p05, p06, p07;
}
