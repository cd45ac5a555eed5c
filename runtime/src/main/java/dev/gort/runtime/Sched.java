package dev.gort.runtime;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The scheduler's global state: the global run queue, idle Ps and idle Ms, the spinning count.
 * {@link #lock} is Go's {@code sched.lock}; every field says whether it is guarded by it.
 *
 * <p>Go: runtime2.go type schedt
 */
final class Sched {
    /** sched.lock: a plain monitor; never held across a continuation yield. */
    final Object lock = new Object();

    /** Guarded by lock (size readable lock-free). */
    final GlobalRunQueue runq = new GlobalRunQueue(lock);

    /** Idle Ps, LIFO through p.link: under lock. Go: sched.pidle. */
    P pidle;
    /** Number of idle Ps: written under lock, read lock-free. Go: sched.npidle (atomic). */
    final AtomicInteger npidle = new AtomicInteger();

    /** Idle Ms, LIFO through m.schedlink: under lock. Go: sched.midle. */
    M midle;
    /** Under lock. Go: sched.nmidle. */
    int nmidle;
    /** Idle Ms locked to a G (waiting for it): under lock. Go: sched.nmidlelocked. */
    int nmidlelocked;
    /** Ms created so far (ids); under lock. Go: sched.mnext. */
    long mnext;
    /** Ms that exited; under lock. Go: sched.nmfreed. */
    long nmfreed;
    /** System Ms not counted by checkdead (sysmon). Under lock. Go: sched.nmsys. */
    int nmsys;
    /** Thread limit; under lock. Go: sched.maxmcount. */
    int maxmcount = 10_000;

    /** Spinning Ms: CAS / atomic add from any M. Go: sched.nmspinning. */
    final AtomicInteger nmspinning = new AtomicInteger();
    /** Go: sched.needspinning (atomic). */
    final AtomicInteger needspinning = new AtomicInteger();

    /** Goroutine ids. Go: sched.goidgen. */
    final AtomicLong goidgen = new AtomicLong();

    /** A stop-the-world is under way (Go: sched.gcwaiting). Written under lock, read volatile. */
    volatile boolean gcwaiting;
    /** Ps still to stop; under lock. Go: sched.stopwait. */
    int stopwait;
    /** The STW initiator waits here. Go: sched.stopnote. */
    final Note stopnote = new Note();

    /** sysmon is deep-sleeping: written under lock, read volatile (lock-free pre-check). Go: sched.sysmonwait. */
    volatile boolean sysmonwait;

    /** lastpoll != 0 means nobody blocks in netpoll; else when the last poll ended (nanotime). Go: sched.lastpoll. */
    final AtomicLong lastpoll = new AtomicLong(1);
    /** When the M blocked in netpoll will wake; Go: sched.pollUntil. */
    final AtomicLong pollUntil = new AtomicLong();
}
