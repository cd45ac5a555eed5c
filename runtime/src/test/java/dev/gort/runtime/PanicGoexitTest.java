package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** An unrecovered panic ends the program; runtime.Goexit ends only the goroutine that calls it. */
class PanicGoexitTest {

    static final class Boom extends RuntimeException {
        Boom(String m) {
            super(m);
        }
    }

    /** A panic in a non-main goroutine ends the program even though main is still blocked. */
    @Test
    void panicInAGoroutineSurfacesFromRun() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        GoPanic p = assertThrows(
                GoPanic.class,
                () -> s.run(() -> {
                    Scheduler rt = Scheduler.current();
                    rt.newproc(() -> {
                        throw new Boom("boom");
                    });
                    new GoSema(0).acquire(); // main blocks forever
                }));
        assertInstanceOf(Boom.class, p.getCause());
        long childId = 2; // main is goroutine 1, the child the first one it creates
        assertEquals(childId, p.goid());
        String text = p.goFormat();
        assertTrue(
                text.startsWith("panic: " + Boom.class.getName() + ": boom\n\ngoroutine " + childId + " [running]:\n"),
                text);
        assertTrue(text.contains("created by ") && text.contains(" in goroutine 1\n"), text);
        assertTrue(s.exiting());
    }

    /**
     * A goroutine's {@code finally} wakes main while the goroutine's panic is still unwinding, and
     * main returns: the panic still ends the program (Go: runtime.main waits for a panic in flight
     * before exit(0), issues 3934 and 20018). The finally goes on until main's function has ended,
     * then for 1 ms more; without the wait main's end won, and the panic was dropped in silence
     * (the tester's program exited 0 in 3 of 12 runs).
     */
    @Test
    void aPanicInFlightWhenMainReturnsStillEndsTheProgram() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        GoPanic p = assertThrows(
                GoPanic.class,
                () -> s.run(() -> {
                    Scheduler rt = Scheduler.current();
                    GoSema woken = new GoSema(0);
                    rt.newproc(() -> {
                        try {
                            throw new Boom("in flight");
                        } finally {
                            woken.release();
                            long deadline = System.nanoTime() + 20_000_000_000L;
                            G main = s.mainG();
                            while (main.readgstatus() != G._Gdead && System.nanoTime() < deadline) {
                                Thread.onSpinWait();
                            }
                            long more = System.nanoTime() + 1_000_000L;
                            while (System.nanoTime() < more) {
                                Thread.onSpinWait();
                            }
                        }
                    });
                    woken.acquire(); // then main returns
                }));
        assertEquals("in flight", p.getCause().getMessage());
    }

    /**
     * A panic value of several lines: its later lines are indented by a tab (Go 1.23+), and the
     * text ends with the goroutine's trace: no {@code exit status 2}, a line only {@code go run}
     * prints about its child.
     */
    @Test
    void aMultiLinePanicValueIsIndentedAndNoExitStatusIsPrinted() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        GoPanic p = assertThrows(
                GoPanic.class,
                () -> s.run(() -> {
                    throw new Boom("a problem\nhoge");
                }));
        String text = p.goFormat();
        assertTrue(
                text.startsWith("panic: " + Boom.class.getName() + ": a problem\n\thoge\n\ngoroutine 1 [running]:\n"),
                text);
        assertFalse(text.contains("exit status"), text);
    }

    private static void recurse(int n) {
        if (n == 0) {
            throw new Boom("deep");
        }
        recurse(n - 1);
    }

    /**
     * A deep stack's trace shows its 50 innermost and 50 outermost frames and counts those between
     * (Go 1.21: "...N frames elided..."); a stack overflow printed about 1,024 frames.
     */
    @Test
    void aDeepStackIsElidedInTheMiddle() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        GoPanic p = assertThrows(GoPanic.class, () -> s.run(() -> recurse(300)));
        String text = p.goFormat();
        long frames = text.lines().filter(l -> l.startsWith("\t")).count();
        assertEquals(Traceback.INNER_FRAMES + Traceback.OUTER_FRAMES, frames, text);
        assertTrue(text.contains("\n...") && text.contains(" frames elided...\n"), text);
        assertTrue(text.lines().anyMatch(l -> l.endsWith("PanicGoexitTest.recurse(...)")), text);
    }

    /** {@code go} of a null function fails at the call, in the caller (Go: "go of nil func value"). */
    @Test
    void goOfANilFunctionFailsAtTheCall() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        GoPanic p = assertThrows(
                GoPanic.class, () -> s.run(() -> Scheduler.current().newproc(null)));
        assertInstanceOf(NullPointerException.class, p.getCause());
        assertEquals("go of nil func value", p.getCause().getMessage());
        assertEquals(1, p.goid());
    }

    @Test
    void panicInMainSurfacesFromRun() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        GoPanic p = assertThrows(
                GoPanic.class,
                () -> s.run(() -> {
                    throw new Boom("main boom");
                }));
        assertEquals(1, p.goid());
        assertEquals("main boom", p.getCause().getMessage());
    }

    /**
     * A runtime whose panic does not end the JVM ({@code withPanicExits(false)}: tests, Synctest's
     * rethrow) prints Go's panic text without {@code exit status 2}: the process does not exit.
     */
    @Test
    void aPanicThatDoesNotEndTheJvmPrintsNoExitStatus() {
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        Scheduler s = new Scheduler(TestSupport.config(1));
        try {
            System.setErr(new java.io.PrintStream(buf, true, java.nio.charset.StandardCharsets.UTF_8));
            assertThrows(
                    GoPanic.class,
                    () -> s.run(() -> {
                        throw new Boom("quiet boom");
                    }));
        } finally {
            System.setErr(err);
        }
        String text = buf.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(text.contains("panic: " + Boom.class.getName() + ": quiet boom\n"), text);
        assertFalse(text.contains("exit status 2"), text);
    }

    /**
     * Goexit unwinds the calling goroutine (its finally blocks run, the code after the call does not)
     * and ends only it; main and the other goroutines carry on, and the program ends normally.
     */
    @Test
    void goexitInAGoroutineEndsOnlyIt() {
        List<String> events = new CopyOnWriteArrayList<>();
        AtomicInteger numAfter = new AtomicInteger();
        Scheduler s = new Scheduler(TestSupport.config(2));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            rt.newproc(() -> {
                try {
                    events.add("exiting");
                    Scheduler.goexit();
                    events.add("after goexit"); // never
                } finally {
                    events.add("finally");
                    done.release();
                }
            });
            done.acquire();
            rt.newproc(() -> {
                events.add("other");
                done.release();
            });
            done.acquire();
            while (rt.numGoroutine() > 1) {
                Scheduler.gosched();
            }
            numAfter.set(rt.numGoroutine());
            events.add("main");
        });
        assertEquals(List.of("exiting", "finally", "other", "main"), events);
        assertEquals(1, numAfter.get());
    }

    /**
     * Go's recover cannot stop a Goexit. Java code cannot be kept from catching what is thrown, but
     * the handlers programs write for failures ({@code catch (Exception)}, {@code catch
     * (RuntimeException)}) must not: Goexit is an {@link Error}, as {@code ThreadDeath} was.
     */
    @Test
    void goexitPassesHandlersForExceptions() {
        List<String> events = new CopyOnWriteArrayList<>();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            GoSema done = new GoSema(0);
            Scheduler.current().newproc(() -> {
                try {
                    try {
                        Scheduler.goexit();
                    } catch (RuntimeException e) {
                        events.add("caught as a RuntimeException");
                    }
                    try {
                        Scheduler.goexit();
                    } catch (Exception e) {
                        events.add("caught as an Exception");
                    }
                    events.add("ran on");
                } finally {
                    done.release();
                }
            });
            done.acquire();
        });
        assertEquals(List.of(), events);
    }

    @Test
    void goexitOutsideAGoroutineIsRefused() {
        assertThrows(IllegalStateException.class, Scheduler::goexit);
    }
}
