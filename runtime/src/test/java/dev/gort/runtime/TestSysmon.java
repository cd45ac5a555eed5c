package dev.gort.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * A stand-in for sysmon in tests: a daemon thread that runs {@link Retake#retake} every ~20 µs
 * and, optionally, Go's time-slice check (preemptone after 10 ms on the same schedtick; for a P in
 * a syscall, retake it at once: Go 1.25's sysretake).
 */
final class TestSysmon implements AutoCloseable {
    private final Scheduler s;
    private final boolean slices;
    private final Thread thread;
    private volatile boolean stop;
    /** Retakes so far (syscall + blocked-carrier). */
    volatile long retakes;
    volatile long sliceExpiries;

    TestSysmon(Scheduler s, boolean slices) {
        this.s = s;
        this.slices = slices;
        this.thread = new Thread(this::loop, "test-sysmon");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        while (!stop && !s.exiting()) {
            long now = System.nanoTime();
            int n = 0;
            for (P pp : s.allp) {
                int st = pp.status();
                boolean sysretake = false;
                if (slices && (st == P._Prunning || st == P._Psyscall)) {
                    int t = pp.schedtick();
                    if (pp.sysmonSchedtick != t) {
                        pp.sysmonSchedtick = t;
                        pp.sysmonSchedwhen = now;
                    } else if (pp.sysmonSchedwhen + 10_000_000L <= now) {
                        sliceExpiries++;
                        s.preemptone(pp);
                        sysretake = true;
                    }
                }
                if (st == P._Psyscall) {
                    if (Retake.retakeSyscall(s, pp, now, sysretake)) {
                        n++;
                    }
                } else if (st == P._Prunning) {
                    if (Retake.retakeBlocked(s, pp, now)) {
                        n++;
                    }
                }
            }
            retakes += n;
            LockSupport.parkNanos(20_000);
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop = true;
        thread.join(5_000);
    }
}
