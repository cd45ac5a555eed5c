package dev.gort.runtime;

import java.util.concurrent.CountDownLatch;

/**
 * Child-JVM programs for {@link CarrierExitTest}: what keeps the JVM alive once main returns. Run
 * with the caller (the JVM's main thread) non-daemon, as a user's program is.
 */
public final class CarrierExitProg {
    private CarrierExitProg() {}

    public static void main(String[] args) {
        Scheduler s = new Scheduler(Config.fromEnvironment());
        switch (args[0]) {
            case "ThreadStartedByGoroutine" -> threadStartedByGoroutine(s);
            case "MainReturnsWithBlockedGoroutines" -> mainReturnsWithBlockedGoroutines(s);
            default -> throw new IllegalArgumentException("unknown function: " + args[0]);
        }
        System.out.println("main returned");
    }

    /**
     * A goroutine starts a thread and ends; main returns at once. The thread works only after the
     * JVM's main thread has ended: the JVM must wait for it (it is non-daemon, as its creator's
     * carrier is, as the caller of run is).
     */
    static void threadStartedByGoroutine(Scheduler s) {
        Thread mainThread = Thread.currentThread();
        s.run(() -> {
            GoSema started = new GoSema(0);
            s.newproc(() -> {
                Thread t = new Thread(
                        () -> {
                            try {
                                mainThread.join();
                            } catch (InterruptedException e) {
                                throw new AssertionError(e);
                            }
                            for (int i = 0; i < 3; i++) {
                                System.out.println("work " + i);
                            }
                            System.out.println("thread finished");
                        },
                        "user-thread");
                System.out.println("user thread daemon=" + t.isDaemon());
                t.start();
                started.release();
            });
            started.acquire();
        });
    }

    /**
     * Main returns while goroutines are parked (one on a semaphore, one locked to its thread, one
     * in an interruptible Java call that blocks its carrier, and panics when shutdown interrupts it):
     * the non-daemon carriers must not keep the JVM alive, and the late panic is not reported.
     */
    static void mainReturnsWithBlockedGoroutines(Scheduler s) {
        s.run(() -> {
            GoSema ready = new GoSema(0);
            s.newproc(() -> {
                ready.release();
                new GoSema(0).acquire(); // parked forever
            });
            s.newproc(() -> {
                ThreadLock.LockOSThread();
                ready.release();
                new GoSema(0).acquire(); // parked forever, its M waits for it
            });
            s.newproc(() -> {
                ready.release();
                try {
                    new CountDownLatch(1).await(); // blocks the carrier forever
                } catch (InterruptedException e) {
                    // shutdown interrupted the carrier; a panic now must not change the exit
                    throw new IllegalStateException("interrupted after main returned", e);
                }
            });
            for (int i = 0; i < 3; i++) {
                ready.acquire();
            }
        });
    }
}
