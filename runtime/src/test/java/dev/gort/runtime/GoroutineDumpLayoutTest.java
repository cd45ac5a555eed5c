package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Goroutine dumps in Go's exact layout (traceback.go goroutineheader, traceback, printcreatedby,
 * showframe; runtime1.go gotraceback), read back with a parser of Go's grammar ({@link GoDumpParser}).
 */
class GoroutineDumpLayoutTest {
    @AfterEach
    void restoreTraceback() {
        Traceback.setTraceback(null);
    }

    /** The parser itself accepts what Go 1.23 prints (so the checks below test gort, not the parser). */
    @Test
    void parserReadsGosOwnDump() {
        String go = """
                panic: boom

                goroutine 18 [running]:
                main.worker(0xc000012345, 0x3)
                	/home/u/x/main.go:12 +0x45
                created by main.main in goroutine 1
                	/home/u/x/main.go:20 +0x7a

                goroutine 1 gp=0xc000002380 m=0 mp=0x5a0f00 [chan receive, 2 minutes, locked to thread]:
                runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)
                	/usr/lib/go/src/runtime/proc.go:402 +0xce fp=0xc000069f28 sp=0xc000069f08 pc=0x43a10e
                main.main()
                	/home/u/x/main.go:22 +0x90
                runtime.goexit({})
                	/usr/lib/go/src/runtime/asm_amd64.s:1695 +0x1

                goroutine 7 [running]:
                	goroutine running on other thread; stack unavailable
                created by main.main in goroutine 1
                	/home/u/x/main.go:19 +0x66
                exit status 2
                """;
        GoDumpParser.Dump d = GoDumpParser.parse(go);
        assertEquals(3, d.goroutines().size());
        GoDumpParser.Goroutine g18 = d.goroutines().get(0);
        assertEquals(18, g18.id());
        assertEquals("main.worker", g18.frames().get(0).func());
        assertEquals("main.main", g18.createdBy().func());
        assertEquals(1, g18.createdIn());
        GoDumpParser.Goroutine g1 = d.goroutines().get(1);
        assertEquals("chan receive", g1.state());
        assertEquals(2, g1.minutes());
        assertTrue(g1.locked() && g1.systemHeader());
        assertEquals(3, g1.frames().size());
        assertTrue(d.goroutines().get(2).unavailable());
        assertEquals(List.of("panic: boom", "exit status 2"), d.junk());
        assertThrows(GoDumpParser.ParseError.class, () -> GoDumpParser.parse("goroutine 1 [running]:\nnot a frame\n"));
        assertThrows(
                GoDumpParser.ParseError.class,
                () -> GoDumpParser.parse("goroutine 1 [running]:\nmain.main()\nmain.go:3\n"));
    }

    static void park(WaitReason why, Describable on) {
        Scheduler.gopark((G gp, Object x) -> true, on, why, on);
    }

    record Desc(String text) implements Describable {
        @Override
        public String describe() {
            return text;
        }
    }

    /**
     * A dump of goroutines in every state a live G can be in (running, runnable before and after
     * its first run, waiting for several reasons and for minutes, locked to thread, in a syscall)
     * parses with Go's grammar; every goroutine but main has a {@code created by ... in goroutine 1}
     * line followed by its file:line; frames are {@code Class.method(...)} and a tab with
     * {@code File.java:N}; no runtime frame is shown; gort's "waiting on" detail is the only text
     * between dumps.
     */
    @Test
    void everyStateParsesWithGosGrammar() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> dump = new AtomicReference<>();
        AtomicReference<Map<Long, String>> want = new AtomicReference<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            Map<Long, String> states = new HashMap<>();
            states.put(1L, "running");
            // waiting, several reasons, one for 3 minutes
            G recv = rt.newproc(
                    () -> park(WaitReason.CHAN_RECEIVE, new Desc("chan#1 int (len 0/cap 0, 1 waiting receiver)")));
            G sel = rt.newproc(() -> park(WaitReason.SELECT, new Desc("select on 2 channels")));
            G mu = rt.newproc(() -> park(WaitReason.SYNC_MUTEX_LOCK, new Desc("sync.Mutex@1 (locked)")));
            // locked to thread, then waiting
            G locked = rt.newproc(() -> {
                ThreadLock.LockOSThread();
                park(WaitReason.CHAN_SEND, new Desc("chan#2 int (len 0/cap 0, 1 waiting sender)"));
                ThreadLock.UnlockOSThread();
            });
            // in a syscall, blocking its carrier (its P handed off at once)
            CountDownLatch inSyscall = new CountDownLatch(1);
            CountDownLatch leave = new CountDownLatch(1);
            G sys = rt.newproc(() -> {
                G me = Syscalls.entersyscallblock();
                inSyscall.countDown();
                try {
                    leave.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                Syscalls.exitsyscall(me);
            });
            // runnable after it ran: Gosched until told to stop (at GOMAXPROCS=1 it is runnable
            // whenever main runs)
            java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            G yielded = rt.newproc(() -> {
                while (!stop.get()) {
                    ran.set(true);
                    Scheduler.gosched();
                }
            });
            // every G above runs up to its park / syscall / Gosched
            while (inSyscall.getCount() > 0
                    || !ran.get()
                    || recv.readgstatus() != G._Gwaiting
                    || sel.readgstatus() != G._Gwaiting
                    || mu.readgstatus() != G._Gwaiting
                    || locked.readgstatus() != G._Gwaiting) {
                Scheduler.gosched();
            }
            // runnable, never run: main does not yield before the dump
            G fresh = rt.newproc(() -> {});
            long now = System.nanoTime();
            mu.waitsince = now - 3 * 60_000_000_000L - 1;
            states.put(recv.goid, "chan receive");
            states.put(sel.goid, "select");
            states.put(mu.goid, "sync.Mutex.Lock");
            states.put(locked.goid, "chan send");
            states.put(sys.goid, "syscall");
            states.put(yielded.goid, "runnable");
            states.put(fresh.goid, "runnable");
            want.set(states);
            dump.set(Traceback.dumpAll(rt));
            mu.waitsince = 0;
            leave.countDown();
            stop.set(true);
            for (G g : List.of(recv, sel, mu, locked)) {
                rt.goready(g);
            }
        });
        String d = dump.get();
        GoDumpParser.Dump p = GoDumpParser.parse(d);
        Map<Long, String> states = want.get();
        assertEquals(states.size(), p.goroutines().size(), d);
        for (GoDumpParser.Goroutine g : p.goroutines()) {
            assertEquals(states.get(g.id()), g.state(), "goroutine " + g.id() + ":\n" + d);
            assertFalse(g.frames().isEmpty(), d);
            for (GoDumpParser.Frame f : g.frames()) {
                assertTrue(f.file().endsWith(".java") || f.file().equals("?"), f + "\n" + d);
                assertEquals("...", f.args(), d);
                assertFalse(
                        Traceback.isRuntimeClass(f.func().substring(0, f.func().lastIndexOf('.'))), f + "\n" + d);
            }
            if (g.id() == 1) {
                assertEquals(null, g.createdBy(), d);
            } else {
                assertEquals(1, g.createdIn(), d);
                // without -Dgort.creators=stack: the method that holds the go lambda, line unknown
                // (0); for a G that never ran, only the lambda's class is known
                assertTrue(g.createdBy().func().startsWith(GoroutineDumpLayoutTest.class.getName()), d);
                assertTrue(
                        g.createdBy().file().equals("GoroutineDumpLayoutTest.java")
                                || g.createdBy().file().equals("?"),
                        d);
                assertEquals(0, g.createdBy().line(), d);
            }
        }
        assertEquals(
                3,
                p.goroutines().stream()
                        .filter(g -> g.state().equals("sync.Mutex.Lock"))
                        .findFirst()
                        .orElseThrow()
                        .minutes(),
                d);
        assertTrue(
                p.goroutines().stream()
                        .filter(g -> g.state().equals("chan send"))
                        .findFirst()
                        .orElseThrow()
                        .locked(),
                d);
        assertEquals(4, p.junk().size(), d);
        for (String j : p.junk()) {
            assertTrue(j.startsWith("\t[waiting on ") && j.endsWith("]"), j);
        }
        assertTrue(d.contains("\t[waiting on chan#1 int (len 0/cap 0, 1 waiting receiver)]\n"), d);
        assertFalse(d.contains("dev.gort.runtime.Scheduler.") || d.contains("jdk.internal.vm"), d);
    }

    /** {@code created by F in goroutine N}, then F's file:line on the next line (Go 1.21+), exact while tracing. */
    @Test
    void createdByNamesTheGoStatementsFrame() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> dump = new AtomicReference<>();
        s.trace.start();
        s.run(() -> {
            G w = Scheduler.current().newproc(() -> park(WaitReason.CHAN_RECEIVE, new Desc("chan#9")));
            while (w.readgstatus() != G._Gwaiting) {
                Scheduler.gosched();
            }
            dump.set(Traceback.dump(w, System.nanoTime()));
            Scheduler.current().goready(w);
        });
        s.trace.stop();
        String d = dump.get();
        GoDumpParser.Goroutine g = GoDumpParser.parse(d).goroutines().get(0);
        assertTrue(
                g.createdBy()
                        .func()
                        .startsWith(GoroutineDumpLayoutTest.class.getName()
                                + ".lambda$createdByNamesTheGoStatementsFrame$"),
                d);
        assertTrue(g.createdBy().line() > 0, d);
        assertTrue(
                d.contains(" in goroutine 1\n\tGoroutineDumpLayoutTest.java:"
                        + g.createdBy().line() + "\n"),
                d);
    }

    /**
     * GOTRACEBACK=system shows the runtime's frames and Go 1.23's {@code gp= m=} header; the default
     * (single) hides them; none, all and crash set Go's level and flags; a value Go would not read
     * is a malformed setting.
     */
    @Test
    void gotracebackLevels() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> single = new AtomicReference<>();
        AtomicReference<String> system = new AtomicReference<>();
        s.run(() -> {
            G w = Scheduler.current().newproc(() -> park(WaitReason.CHAN_RECEIVE, new Desc("chan#9")));
            while (w.readgstatus() != G._Gwaiting) {
                Scheduler.gosched();
            }
            single.set(Traceback.dump(w, System.nanoTime()));
            Traceback.setTraceback("system");
            system.set(Traceback.dump(w, System.nanoTime()));
            Traceback.setTraceback(null);
            Scheduler.current().goready(w);
        });
        assertFalse(
                single.get().contains("dev.gort.runtime.Scheduler.")
                        || single.get().contains("dev.gort.runtime.G."),
                single.get());
        assertTrue(
                single.get()
                        .startsWith("goroutine 2 [chan receive]:\n" + GoroutineDumpLayoutTest.class.getName()
                                + ".park(...)\n"),
                single.get());
        GoDumpParser.Goroutine g = GoDumpParser.parse(system.get()).goroutines().get(0);
        assertTrue(g.systemHeader(), system.get());
        assertTrue(system.get().startsWith("goroutine 2 gp=0x"), system.get());
        assertTrue(system.get().contains(" m=nil [chan receive]:\n"), system.get());
        assertTrue(
                g.frames().stream().anyMatch(f -> f.func().equals("dev.gort.runtime.Scheduler.gopark")), system.get());

        Traceback.setTraceback("none");
        assertEquals(0, Traceback.level());
        Traceback.setTraceback("single");
        assertTrue(Traceback.level() == 1 && !Traceback.all() && !Traceback.crash());
        Traceback.setTraceback("all");
        assertTrue(Traceback.level() == 1 && Traceback.all() && !Traceback.crash());
        Traceback.setTraceback("crash");
        assertTrue(Traceback.level() == 2 && Traceback.all() && Traceback.crash());
        Traceback.setTraceback("2");
        assertTrue(Traceback.level() == 2 && Traceback.all());
        assertThrows(GortFatalError.class, () -> Traceback.setTraceback("loud"));
    }

    /**
     * A user fatal error under GOTRACEBACK=all dumps the failing goroutine first, then the others
     * (Go's dopanic_m: goroutineheader + traceback of the failing g, then tracebackothers), and
     * the dump ends after its last goroutine (the wait-for graph follows one blank line later).
     */
    @Test
    void aUserFatalUnderGotracebackAllDumpsTheFailingGoroutineFirst() {
        Traceback.setTraceback("all");
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        AtomicReference<Long> failing = new AtomicReference<>();
        try {
            System.setErr(new java.io.PrintStream(buf, true, java.nio.charset.StandardCharsets.UTF_8));
            Scheduler s = new Scheduler(TestSupport.config(1));
            assertThrows(
                    GortFatalError.class,
                    () -> s.run(() -> {
                        GoSema never = new GoSema("never", 0);
                        G g = Scheduler.current().newproc(() -> {
                            throw Fatal.userFatal(Scheduler.current(), "boom");
                        });
                        failing.set(g.goid);
                        never.acquire();
                    }));
        } finally {
            System.setErr(err);
        }
        String text = buf.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(text.startsWith("fatal error: boom\n\ngoroutine " + failing.get() + " [running]:\n"), text);
        GoDumpParser.Dump d = GoDumpParser.parse(text);
        assertEquals(
                List.of(failing.get(), 1L),
                d.goroutines().stream().map(GoDumpParser.Goroutine::id).toList(),
                text);
        assertFalse(text.contains("\n\n\n"), "two blank lines in a row:\n" + text);
    }

    /** Frames of the user's code, the JDK and test classes are shown; gort's runtime packages are not. */
    @Test
    void runtimeClassesAreGortsRuntimePackages() {
        assertTrue(Traceback.isRuntimeClass("dev.gort.runtime.Scheduler"));
        assertTrue(Traceback.isRuntimeClass("dev.gort.runtime.trace.Tracer"));
        assertTrue(Traceback.isRuntimeClass("dev.gort.Chan"));
        assertTrue(Traceback.isRuntimeClass("dev.gort.internal.Sema$Root"));
        assertTrue(Traceback.isRuntimeClass("jdk.internal.vm.Continuation"));
        assertFalse(Traceback.isRuntimeClass("dev.gort.sync.Mutex"));
        assertFalse(Traceback.isRuntimeClass("dev.gort.examples.PrimeSieve"));
        assertFalse(Traceback.isRuntimeClass("dev.gort.runtime.GoroutineDumpLayoutTest$1"));
        assertFalse(Traceback.isRuntimeClass("java.util.concurrent.CountDownLatch"));
        assertFalse(Traceback.isRuntimeClass("com.acme.Main"));
    }
}
