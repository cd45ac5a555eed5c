package dev.gort.agent.work;

import java.util.concurrent.locks.LockSupport;

/**
 * Methods that park their carrier, for the shape of the agent's parker hooks
 * ({@code PollInjector.parksCarrier}): a plain one, a synchronized one, one through a library's
 * wrapper of {@code LockSupport} (as Guava's {@code OverflowAvoidingLockSupport}), a constructor
 * (left alone: a catch-all before its {@code super()} call would not verify) and one that does not
 * park.
 */
public final class Parkers {
    /** A constructor that parks its carrier. */
    public Parkers(long nanos) {
        LockSupport.parkNanos(this, nanos);
    }

    public static void plain(long nanos) {
        LockSupport.parkNanos(nanos);
    }

    public static synchronized void syncParker(long nanos) {
        LockSupport.parkNanos(nanos);
    }

    public static void viaWrapper(long nanos) {
        OverflowAvoidingLockSupport.parkNanos(Parkers.class, nanos);
    }

    public static int noPark(int x) {
        return x * 31;
    }

    /** A library's own wrapper, named as Guava names its one. */
    static final class OverflowAvoidingLockSupport {
        private OverflowAvoidingLockSupport() {}

        static void parkNanos(Object blocker, long nanos) {
            LockSupport.parkNanos(blocker, Math.min(nanos, 2_147_483_647_999_999_999L));
        }
    }
}
