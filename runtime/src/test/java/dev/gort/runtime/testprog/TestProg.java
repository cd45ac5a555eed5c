package dev.gort.runtime.testprog;

import dev.gort.runtime.Config;
import dev.gort.runtime.Fatal;
import dev.gort.runtime.G;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Syscalls;
import dev.gort.runtime.WaitReason;

/**
 * Programs that end the process, run in a child JVM by {@code CrashTest} (Go's
 * runtime/testdata/testprog). The first argument names the program.
 */
public final class TestProg {
    private TestProg() {}

    public static void main(String[] args) {
        String name = args.length == 0 ? "" : args[0];
        Runnable prog = switch (name) {
            case "SimpleDeadlock" -> TestProg::simpleDeadlock;
            case "GoexitDeadlock" -> TestProg::goexitDeadlock;
            case "Panic" -> TestProg::panicInGoroutine;
            case "Exit" -> () -> System.out.println("main done");
            case "TracedPanic" -> TestProg::tracedPanic;
            case "TracedDeadlock" -> TestProg::tracedDeadlock;
            case "TracedFatalInterrupted" -> TestProg::tracedFatalInterrupted;
            case "Observers" -> TestProg::observers;
            default -> {
                System.out.println("unknown function: " + name);
                System.exit(2);
                yield null;
            }
        };
        new Scheduler(Config.fromEnvironment()).run(prog);
    }

    /** Go: select {} with nothing else alive. */
    static void simpleDeadlock() {
        blockForever();
    }

    /** Go: testprog/deadlock.go GoexitDeadlock: two trivial goroutines, then main calls Goexit. */
    static void goexitDeadlock() {
        Scheduler rt = Scheduler.current();
        Runnable f = () -> {
            for (int i = 0; i < 10; i++) {
                Thread.onSpinWait();
            }
        };
        rt.newproc(f);
        rt.newproc(f);
        Scheduler.goexit();
    }

    static void panicInGoroutine() {
        Scheduler.current().newproc(() -> {
            throw new IllegalStateException("child exploded");
        });
        blockForever();
    }

    /**
     * Traced work before a crash: goroutines that yield and enter syscalls, a GOMAXPROCS shrink and
     * grow while they run, then all of them finish (main waits on a semaphore).
     */
    static void tracedWork() {
        Scheduler rt = Scheduler.current();
        int n = 4;
        GoSema done = new GoSema("done", 0);
        for (int i = 0; i < n; i++) {
            rt.newproc(() -> {
                for (int k = 0; k < 200; k++) {
                    if (k % 10 == 0) {
                        G g = Syscalls.entersyscall();
                        Thread.onSpinWait();
                        Syscalls.exitsyscall(g);
                    }
                    Scheduler.gosched();
                }
                done.release();
            });
        }
        rt.gomaxprocs(1);
        rt.gomaxprocs(2);
        for (int i = 0; i < n; i++) {
            done.acquire();
        }
    }

    /** -Dgort.trace: traced work, then a goroutine panics (the JVM halts with status 2). */
    static void tracedPanic() {
        tracedWork();
        Scheduler.current().newproc(() -> {
            throw new IllegalStateException("child exploded");
        });
        blockForever();
    }

    /** -Dgort.trace: traced work, then main blocks forever: fatal error, all goroutines are asleep. */
    static void tracedDeadlock() {
        tracedWork();
        blockForever();
    }

    /**
     * -Dgort.trace: traced work, then a fatal error raised in main, on a carrier whose interrupt
     * is already set, as the shutdown that the error starts sets it (racing with the report).
     */
    static void tracedFatalInterrupted() {
        tracedWork();
        Thread.currentThread().interrupt(); // the carrier's: main is not a virtual thread
        throw Fatal.fatal(Scheduler.current(), "test: fatal error in a goroutine");
    }

    /**
     * -Dgort.jmx=true and -Dgort.debug.http: the program reads its own MXBean and fetches its own
     * /debug/sched and /debug/metrics, and prints what it got.
     */
    static void observers() {
        Scheduler rt = Scheduler.current();
        // some scheduling first, so that the latency histogram has samples (1 in 8 waits is timed)
        GoSema done = new GoSema("done", 0);
        for (int i = 0; i < 8; i++) {
            rt.newproc(() -> {
                for (int k = 0; k < 100; k++) {
                    Scheduler.gosched();
                }
                done.release();
            });
        }
        for (int i = 0; i < 8; i++) {
            done.acquire();
        }
        G g = Syscalls.entersyscall(); // JMX and HTTP calls below block this carrier
        try {
            javax.management.MBeanServer mbs = java.lang.management.ManagementFactory.getPlatformMBeanServer();
            java.util.Set<javax.management.ObjectName> names =
                    mbs.queryNames(new javax.management.ObjectName("gort:type=Scheduler,*"), null);
            System.out.println("mxbeans " + names.size());
            for (javax.management.ObjectName on : names) {
                System.out.println("mxbean Gomaxprocs=" + mbs.getAttribute(on, "Gomaxprocs")
                        + " Goroutines=" + mbs.getAttribute(on, "Goroutines")
                        + " GoroutinesCreated=" + mbs.getAttribute(on, "GoroutinesCreated")
                        + " Threads=" + mbs.getAttribute(on, "Threads")
                        + " SchedLatencyP50Seconds=" + mbs.getAttribute(on, "SchedLatencyP50Seconds"));
            }
            int port = rt.trace.debugPort();
            System.out.println("debug port " + (port > 0 ? "bound" : port));
            if (port > 0) {
                for (String path : new String[] {"/debug/sched", "/debug/metrics"}) {
                    java.net.HttpURLConnection c = (java.net.HttpURLConnection) java.net
                            .URI
                            .create("http://127.0.0.1:" + port + path)
                            .toURL()
                            .openConnection();
                    String body =
                            new String(c.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                    System.out.println("GET " + path + " " + c.getResponseCode() + " "
                            + body.lines().findFirst().orElse(""));
                }
            }
        } catch (Exception e) {
            System.out.println("observers: " + e);
        } finally {
            Syscalls.exitsyscall(g);
        }
        System.out.println("main done");
    }

    /** Go: block(), i.e. select {}: park with no way to be woken. */
    static void blockForever() {
        Scheduler.gopark((G gp, Object l) -> true, null, WaitReason.SELECT_NO_CASES, null);
        throw new AssertionError("unreachable: woken from select {}");
    }
}
