package dev.gort.runtime;

import java.util.concurrent.locks.ReentrantLock;

/**
 * A child JVM's program for {@link JitDirectivesTest}: 200,000 goroutines at GOMAXPROCS=2 share one
 * goroutine body that takes a {@code ReentrantLock}, yields, and takes it again. The body is the
 * continuation's target, so C2 inlines it into {@code Continuation.enter} (a JDK method); with the
 * lock's code inlined too, the thread read for the first {@code lock()} may serve the second, on
 * another carrier. Prints {@code ok <count>} or what failed, then {@code directive: installed} or why
 * not ({@link JitDirectives#install()}); exit status 2 on a goroutine's panic.
 */
public final class LockAcrossYieldProg {
    private LockAcrossYieldProg() {}

    static long counter;

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        ReentrantLock lock = new ReentrantLock();
        Scheduler s = new Scheduler(Config.fromEnvironment().withGomaxprocs(2));
        s.run(() -> {
            GoSema done = new GoSema(0);
            Runnable body = () -> {
                lock.lock();
                counter++;
                lock.unlock();
                Scheduler.gosched();
                lock.lock();
                counter++;
                lock.unlock();
                done.release();
            };
            int batch = 1000;
            for (int i = 0; i < n; i += batch) {
                for (int j = 0; j < batch; j++) {
                    Scheduler.current().newproc(body);
                }
                for (int j = 0; j < batch; j++) {
                    done.acquire();
                }
            }
        });
        System.out.println(counter == 2L * n && !lock.isLocked() ? "ok " + counter : "wrong " + counter);
        String why = JitDirectives.install();
        System.out.println("directive: " + (why == null ? "installed" : why));
    }
}
