package dev.gort.agent.work;

import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/** Nasty shapes around blocking call sites (review of the agent's hookBlockingCall). */
public final class BlockingShapes {
    private final Object lock = new Object();
    private long field;

    /** -1 outside a goroutine, else the status. */
    public static int status() {
        G gp = Scheduler.getg();
        return gp == null ? -1 : gp.readgstatus();
    }

    /** Nested try/catch whose handlers see different locals; long/double live at the call. */
    public static long nested(BlockingQueue<Object> q, int k) {
        Object o = null;
        long acc = 3L;
        try {
            String s = "abc";
            double d = 1.5;
            try {
                long l = k * 7L;
                o = q.poll(1, TimeUnit.MILLISECONDS);
                if (o == null) {
                    throw new IllegalStateException("empty " + l + d);
                }
                acc += l;
            } catch (IllegalStateException e) {
                Integer boxed = s.length();
                acc += boxed + (long) d + status() * 1000L;
            }
        } catch (InterruptedException e) {
            double x = 2.0;
            acc = (long) x;
        } catch (RuntimeException e) {
            acc = -1;
        }
        return acc;
    }

    /** Two handlers that disagree on a slot's type (a reused slot). */
    public static String conflicting(Future<String> f, boolean which) throws Exception {
        if (which) {
            String a = "a";
            try {
                return f.get(1, TimeUnit.MILLISECONDS) + a;
            } catch (TimeoutException e) {
                return "timeout-" + a + status();
            }
        } else {
            Integer a = 4;
            try {
                return f.get(1, TimeUnit.MILLISECONDS) + a;
            } catch (TimeoutException e) {
                return "timeout-" + a + status();
            }
        }
    }

    /** Handlers whose frames disagree for the same blocking call. */
    public static String disagree(Future<String> f, int k) throws Exception {
        Object x;
        if (k > 0) {
            x = "s";
        } else {
            x = Integer.valueOf(k);
        }
        try {
            String y = String.valueOf(x);
            try {
                return f.get(1, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                return "inner-" + y + status();
            }
        } catch (ExecutionException e) {
            return "outer-" + x;
        }
    }

    /** A synchronized method: its catch-all, javac's none, the hook's handler inside it. */
    public static synchronized long syncMethod(BlockingQueue<Object> q, double d, long l) throws InterruptedException {
        long r = l;
        for (int i = 0; i < 3; i++) {
            try {
                Object o = q.poll(1, TimeUnit.MILLISECONDS);
                r += o == null ? (long) d : o.hashCode();
            } finally {
                r++;
            }
        }
        return r + status() * 1000L;
    }

    /** A synchronized block in a loop, Object.wait with a timeout, a catch that continues. */
    public long syncBlockWait(int n) {
        long waited = 0;
        for (int i = 0; i < n; i++) {
            synchronized (lock) {
                try {
                    long t0 = System.nanoTime();
                    lock.wait(1);
                    waited += System.nanoTime() - t0 > 0 ? 1 : 0;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    continue;
                }
                field += waited;
            }
        }
        return waited + status() * 1000L;
    }

    /** The call's operands below it on the stack: a long, an uninitialised object. */
    public static String stackBelow(BlockingQueue<Object> q, long l) throws InterruptedException {
        q.put("x");
        long r = l + q.take().hashCode();
        q.put("y");
        StringBuilder sb = new StringBuilder(String.valueOf(q.take()));
        q.put("z");
        return sb.append(r).append(Math.max(1.0d, (double) q.take().hashCode())).toString();
    }

    /** A lambda's body. */
    public static Callable<Object> lambda(BlockingQueue<Object> q) {
        return () -> {
            long t = 5;
            try {
                return q.poll(1, TimeUnit.MILLISECONDS) + "-" + t + status();
            } catch (InterruptedException e) {
                return null;
            }
        };
    }

    /** try-with-resources, multi-catch, finally duplicated by javac, a blocking call in a catch. */
    public static String resources(CompletableFuture<String> f, BlockingQueue<Object> q) {
        StringBuilder sb = new StringBuilder();
        try (AutoCloseable c = () -> sb.append("closed")) {
            try {
                sb.append(f.get(1, TimeUnit.MILLISECONDS));
            } catch (TimeoutException | ExecutionException e) {
                sb.append("t").append(status());
                Object o = q.poll(1, TimeUnit.MILLISECONDS); // a blocking call in a handler
                sb.append(o);
            } finally {
                sb.append(q.poll(1, TimeUnit.MILLISECONDS)); // copied by javac
            }
        } catch (Exception e) {
            sb.append("e");
        }
        return sb.append(status()).toString();
    }

    /** Lock, Condition.await in a loop, unlock in finally. */
    public static int condition(ReentrantLock l, Condition c, int n) throws InterruptedException {
        int hits = 0;
        l.lock();
        try {
            for (int i = 0; i < n; i++) {
                if (!c.await(1, TimeUnit.MILLISECONDS)) {
                    hits++;
                }
            }
        } finally {
            l.unlock();
        }
        return hits * 10 + (status() == -1 ? 0 : 1);
    }

    /** A parker method (its catch-all) with a blocking park in a loop and a double live across it. */
    public static double parker(int n) {
        double d = 0.5;
        long sum = 0;
        for (int i = 0; i < n; i++) {
            LockSupport.parkNanos(1000);
            d *= 2;
            sum += i;
        }
        return d + sum + status();
    }

    /** A blocking call that throws, in a synchronized block in a loop, caught outside the block. */
    public String throwing(CompletableFuture<String> f, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            try {
                synchronized (lock) {
                    sb.append(f.get());
                }
            } catch (ExecutionException | InterruptedException e) {
                sb.append(status()).append(',');
            }
        }
        return sb.toString();
    }
}
