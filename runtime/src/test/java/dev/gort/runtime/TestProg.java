package dev.gort.runtime;

import java.util.Map;

/**
 * Go's testprog: small gort programs run in a child JVM by crash tests ({@link GoCrashSyscallTest}),
 * selected by name on the command line. Configured from the environment (GOMAXPROCS...), with
 * fatal errors halting the JVM with status 2, as a real gort program would.
 *
 * <p>Go: src/runtime/testdata/testprog (main.go, lockosthread.go, deadlock.go)
 */
public final class TestProg {
    private TestProg() {}

    private static final Map<String, Runnable> CMDS = Map.of(
            "ThreadExhaustion", TestProg::threadExhaustion,
            "LockedDeadlock", TestProg::lockedDeadlock,
            "ManyGoroutines", TestProg::manyGoroutines,
            "ThreadLocalMode", TestProg::threadLocalMode);

    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: TestProg name-of-test");
            return;
        }
        Scheduler s = new Scheduler(Config.fromEnvironment());
        s.run(() -> {
            Runnable f = CMDS.get(args[0]);
            if (f == null) {
                System.err.println("unknown function: " + args[0]);
                return;
            }
            f.run();
        });
    }

    /** Go: testprog ThreadExhaustion (deadlock.go... in fact misc: SetMaxThreads(10), 100 locked Gs). */
    static void threadExhaustion() {
        Scheduler s = Scheduler.current();
        s.setMaxThreads(10);
        GoSema c = new GoSema(0);
        for (int i = 0; i < 100; i++) {
            s.newproc(() -> {
                ThreadLock.LockOSThread();
                c.release();
                Scheduler.gopark(null, null, WaitReason.SELECT_NO_CASES, null); // select {}
            });
            c.acquire();
        }
    }

    /** Prints the runtime's ThreadLocal mode ({@code -Dgort.threadlocals}). */
    static void threadLocalMode() {
        System.out.println(
                "ThreadLocal mode: " + Scheduler.current().config().settings().threadLocals());
    }

    /** Every goroutine blocked, two of them locked to their threads: still a deadlock. */
    static void lockedDeadlock() {
        Scheduler s = Scheduler.current();
        s.newproc(() -> {
            ThreadLock.LockOSThread();
            Scheduler.gopark(null, null, WaitReason.SELECT_NO_CASES, null);
        });
        ThreadLock.LockOSThread();
        Scheduler.gopark(null, null, WaitReason.SELECT_NO_CASES, null);
    }

    /** Starts one goroutine per P and waits for them (a smoke test for big GOMAXPROCS). */
    static void manyGoroutines() {
        Scheduler s = Scheduler.current();
        int n = s.gomaxprocs();
        GoSema done = new GoSema(0);
        for (int i = 0; i < n; i++) {
            s.newproc(done::release);
        }
        for (int i = 0; i < n; i++) {
            done.acquire();
        }
        System.out.println("ran " + n + " goroutines on " + n + " Ps");
    }
}
