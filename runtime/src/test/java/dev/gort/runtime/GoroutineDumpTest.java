package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Goroutine dumps in Go's format (traceback.go goroutineheader, printcreatedby) and TestNumGoroutine. */
class GoroutineDumpTest {
    /** Go: "goroutine " goid " [" status (", " N " minutes")? (", locked to thread")? "]:" */
    static final Pattern HEADER = Pattern.compile(
            "^goroutine (\\d+) \\[([^\\],]+)(, (\\d+) minutes)?(, locked to thread)?\\]:$", Pattern.MULTILINE);

    /** A semaphore goroutines park on, describing itself like a channel would. */
    static final class Gate implements Describable {
        final GoSema sema = new GoSema(0);

        @Override
        public String describe() {
            return "gate#1 (closed, 1 waiting)";
        }
    }

    static void parkOn(Gate g) {
        Scheduler.gopark(
                (G gp, Gate x) -> {
                    synchronized (x) {
                        x.notifyAll();
                    }
                    return true;
                },
                g,
                WaitReason.CHAN_RECEIVE,
                g);
    }

    @Test
    void parkedGoroutineHeaderFramesCreatorAndObject() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> dump = new AtomicReference<>();
        AtomicReference<String> dump3 = new AtomicReference<>();
        s.run(() -> {
            Gate gate = new Gate();
            G w = Scheduler.current().newproc(() -> parkOn(gate));
            while (w.readgstatus() != G._Gwaiting) {
                Scheduler.gosched(); // let w run and park
            }
            long now = System.nanoTime();
            dump.set(Traceback.dump(w, now));
            w.waitsince = now - 3 * 60_000_000_000L - 1_000_000_000L;
            dump3.set(Traceback.dump(w, now));
            w.waitsince = now;
            s.goready(w);
        });
        String d = dump.get();
        String[] lines = d.split("\n");
        Matcher h = HEADER.matcher(lines[0]);
        assertTrue(h.matches(), d);
        assertEquals("chan receive", h.group(2));
        assertTrue(lines[1].endsWith("(...)"), d); // func(...)
        assertTrue(lines[2].startsWith("\t") && lines[2].contains(".java:"), d); // \tfile:line
        assertTrue(d.contains("GoroutineDumpTest.parkOn(...)\n\tGoroutineDumpTest.java:"), d);
        assertTrue(d.contains("\ncreated by ") && d.contains(" in goroutine 1\n"), d);
        assertTrue(d.endsWith("\t[waiting on gate#1 (closed, 1 waiting)]\n"), d);
        assertFalse(
                d.contains("dev.gort.runtime.M.") || d.contains("Continuation.enter"), "runtime frames leaked: " + d);
        assertTrue(dump3.get().startsWith("goroutine " + h.group(1) + " [chan receive, 3 minutes]:\n"), dump3.get());
    }

    @Test
    void jsonDumpIsShapedLikeJcmds() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> json = new AtomicReference<>();
        s.run(() -> {
            Gate gate = new Gate();
            G w = Scheduler.current().newproc(() -> parkOn(gate));
            while (w.readgstatus() != G._Gwaiting) {
                Scheduler.gosched();
            }
            json.set(Traceback.dumpJson(Scheduler.current()));
            s.goready(w);
        });
        String j = json.get();
        assertTrue(
                j.startsWith("{\"goroutineDump\":{\"processId\":"
                        + ProcessHandle.current().pid() + ","),
                j);
        assertTrue(j.contains("{\"goid\":1,\"state\":\"running\""), j);
        assertTrue(
                j.contains(
                        "{\"goid\":2,\"state\":\"waiting\",\"waitReason\":\"chan receive\",\"waitingOn\":{\"object\":\"gate#1 (closed, 1 waiting)\"}"),
                j);
        assertTrue(j.contains("\"createdBy\":{\"goid\":1"), j);
        assertTrue(j.contains("GoroutineDumpTest.parkOn(GoroutineDumpTest.java:"), j);
        assertTrue(j.endsWith("]}}\n"), j);
    }

    @Test
    void runningGoroutineDumpsItsOwnFrames() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        AtomicReference<String> dump = new AtomicReference<>();
        s.run(() -> dump.set(Traceback.dump(Scheduler.currentG(), System.nanoTime())));
        String d = dump.get();
        assertTrue(d.startsWith("goroutine 1 [running]:\n"), d);
        assertTrue(d.contains("GoroutineDumpTest.lambda$runningGoroutineDumpsItsOwnFrames$"), d);
        assertFalse(d.contains("M.schedule") || d.contains("Thread.getStackTrace") || d.contains("Traceback.dump"), d);
    }

    /**
     * Go's runtime.Stack(buf, true) (what pprof's goroutine debug=2 writes): the calling goroutine
     * first, then the others in goid order, one blank line between two goroutines and none after
     * the last (Go's tracebackothers prints "\n" before each header, never after a stack).
     */
    @Test
    void anAllGoroutinesDumpStartsWithTheCallerAndEndsAfterItsLastLine() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> dump = new AtomicReference<>();
        AtomicReference<Long> caller = new AtomicReference<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            Gate gate = new Gate();
            G parked = rt.newproc(() -> parkOn(gate));
            while (parked.readgstatus() != G._Gwaiting) {
                Scheduler.gosched(); // let it run and park
            }
            GoSema done = new GoSema(0);
            G dumper = rt.newproc(() -> {
                dump.set(Traceback.dumpAll(rt));
                done.release();
            });
            caller.set(dumper.goid);
            done.acquire();
            s.goready(parked);
        });
        String d = dump.get();
        List<String> goids = new java.util.ArrayList<>();
        Matcher h = HEADER.matcher(d);
        while (h.find()) {
            goids.add(h.group(1));
        }
        assertEquals(List.of(Long.toString(caller.get()), "1", "2"), goids, d);
        assertTrue(d.startsWith("goroutine " + caller.get() + " [running]:\n"), d);
        assertFalse(d.endsWith("\n\n"), "a blank line after the last goroutine:\n" + d);
        assertTrue(d.endsWith("\t[waiting on gate#1 (closed, 1 waiting)]\n"), d);
        assertEquals(2, d.split("\n\n", -1).length - 1, "one blank line between two goroutines:\n" + d);
    }

    /**
     * Go's TestNumGoroutine (proc_test.go), in-process part: NumGoroutine equals the number of
     * "goroutine " headers in a full dump ("in goroutine" of created-by lines not counted), up to 10
     * tries; runtime-internal threads (sysmon, the schedtrace printer) are not goroutines.
     */
    @Test
    void numGoroutineEqualsHeadersInAFullDump() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        AtomicReference<String> failure = new AtomicReference<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema stop = new GoSema(0);
            GoSema done = new GoSema(0);
            for (int i = 0; i < 7; i++) {
                rt.newproc(() -> {
                    stop.acquire();
                    done.release();
                });
            }
            String last = "";
            int n = -1;
            int headers = -2;
            for (int i = 0; i < 10; i++) {
                String buf = Traceback.dumpAll(rt);
                n = rt.numGoroutine();
                headers = 0;
                Matcher m = HEADER.matcher(buf);
                while (m.find()) {
                    headers++;
                }
                last = buf;
                if (n == headers) {
                    break;
                }
            }
            if (n != headers || n != 8) {
                failure.set("NumGoroutine=" + n + ", but found " + headers + " goroutines in stack dump:\n" + last);
            }
            for (int i = 0; i < 7; i++) {
                stop.release();
            }
            for (int i = 0; i < 7; i++) {
                done.acquire();
            }
        });
        assertEquals(null, failure.get());
    }

    /**
     * The _Gscan guard: one goroutine dumps two others over and over while they ping-pong (park,
     * ready, run on both Ps); their continuations are never mounted while being walked, so the run
     * ends cleanly (a mount during getStackTrace would corrupt or crash).
     */
    @Test
    void dumpingWhileGoroutinesSwitchIsSafe() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        AtomicInteger dumps = new AtomicInteger();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema a = new GoSema(0);
            GoSema b = new GoSema(0);
            GoSema done = new GoSema(0);
            int rounds = 20_000;
            G g1 = rt.newproc(() -> {
                for (int i = 0; i < rounds; i++) {
                    a.acquire();
                    b.release();
                }
                done.release();
            });
            G g2 = rt.newproc(() -> {
                for (int i = 0; i < rounds; i++) {
                    a.release();
                    b.acquire();
                }
                done.release();
            });
            G dumper = rt.newproc(() -> {
                while (g1.readgstatus() != G._Gdead || g2.readgstatus() != G._Gdead) {
                    String d1 = Traceback.dump(g1, System.nanoTime());
                    String d2 = Traceback.dump(g2, System.nanoTime());
                    if (!HEADER.matcher(d1.lines().findFirst().orElse("")).matches()
                            || !HEADER.matcher(d2.lines().findFirst().orElse(""))
                                    .matches()) {
                        throw new AssertionError("bad dump:\n" + d1 + d2);
                    }
                    dumps.incrementAndGet();
                    Scheduler.gosched();
                }
                done.release();
            });
            for (int i = 0; i < 3; i++) {
                done.acquire();
            }
        });
        assertTrue(dumps.get() > 0);
    }

    /**
     * The dump signal prints every runtime's goroutines: as between two goroutines of one dump, a
     * blank line comes before each goroutine, the first of the next runtime included (a dump ends
     * after its last line, as Go's).
     */
    @Test
    void aSignalDumpOfTwoRuntimesHasABlankLineBeforeEveryGoroutine() throws Exception {
        String old = System.getProperty("gort.godebug");
        PrintStream oldErr = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setProperty("gort.godebug", "sigdump=URG");
        Scheduler other = new Scheduler(TestSupport.config(1));
        GoSema parked = new GoSema("parked", 0);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch otherParked = new java.util.concurrent.CountDownLatch(1);
        Thread t = new Thread(() -> other.run(() -> {
            // In a syscall, not parked: with every goroutine parked, checkdead would find the
            // runtime deadlocked and print its own dump into the one this test reads.
            G w = Scheduler.current().newproc(() -> {
                Syscalls.entersyscall();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                } finally {
                    Syscalls.exitsyscall();
                }
            });
            while (w.readgstatus() != G._Gsyscall) {
                Scheduler.gosched();
            }
            otherParked.countDown();
            parked.acquire();
        }));
        try {
            DumpSignal.register(other);
            t.start();
            otherParked.await();
            Scheduler s = new Scheduler(TestSupport.config(1));
            DumpSignal.register(s);
            s.run(() -> {
                Gate gate = new Gate();
                G w = Scheduler.current().newproc(() -> parkOn(gate));
                while (w.readgstatus() != G._Gwaiting) {
                    Scheduler.gosched();
                }
                System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
                try {
                    DumpSignal.dumpAllRuntimes();
                } finally {
                    System.setErr(oldErr);
                }
                s.goready(w);
            });
        } finally {
            System.setErr(oldErr);
            parked.release(); // main first: with G2 out of its syscall, main alone parked is a deadlock
            release.countDown();
            t.join();
            if (old == null) {
                System.clearProperty("gort.godebug");
            } else {
                System.setProperty("gort.godebug", old);
            }
        }
        String err = buf.toString(StandardCharsets.UTF_8);
        String[] lines = err.split("\n", -1);
        int headers = 0;
        for (int i = 0; i < lines.length; i++) {
            if (HEADER.matcher(lines[i]).matches()) {
                headers++;
                assertTrue(i == 0 || lines[i - 1].isEmpty(), "no blank line before line " + i + ":\n" + err);
            }
        }
        assertTrue(headers >= 4, err); // two runtimes of two goroutines (at least)
    }

    @Test
    void signalDumpsEveryGoroutine() throws Exception {
        String old = System.getProperty("gort.godebug");
        PrintStream oldErr = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setProperty("gort.godebug", "sigdump=URG");
        try {
            System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
            Scheduler s = new Scheduler(TestSupport.config(1));
            assertEquals("URG", DumpSignal.register(s));
            s.run(() -> {
                Gate gate = new Gate();
                G w = Scheduler.current().newproc(() -> parkOn(gate));
                while (w.readgstatus() != G._Gwaiting) {
                    Scheduler.gosched();
                }
                sun.misc.Signal.raise(new sun.misc.Signal("URG"));
                // the handler runs on the JVM's signal thread: wait (bounded) for its output
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!buf.toString(StandardCharsets.UTF_8).contains("waiting on gate#1")
                        && System.nanoTime() < deadline) {
                    Scheduler.gosched();
                }
                s.goready(w);
            });
        } finally {
            System.setErr(oldErr);
            if (old == null) {
                System.clearProperty("gort.godebug");
            } else {
                System.setProperty("gort.godebug", old);
            }
        }
        String err = buf.toString(StandardCharsets.UTF_8);
        assertTrue(err.contains("goroutine 1 [running]:") || err.contains("goroutine 1 [runnable]:"), err);
        assertTrue(err.contains("goroutine 2 [chan receive]:"), err);
        assertTrue(err.contains("waiting on gate#1 (closed, 1 waiting)"), err);
    }
}
