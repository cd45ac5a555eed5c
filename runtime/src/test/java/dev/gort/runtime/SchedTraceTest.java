package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * schedtrace / scheddetail lines against Go 1.25's format (proc.go schedtrace): each regex below is
 * Go's print statement with the values replaced by their shapes.
 */
class SchedTraceTest {
    // print("SCHED ", ms, "ms: gomaxprocs=", .., " idleprocs=", .., " threads=", .., " spinningthreads=", ..,
    //       " needspinning=", .., " idlethreads=", .., " runqueue=", ..) then " [ " len ... " ]" " schedticks=[ " (tick
    // " ")* "]\n"
    static final String HEAD =
            "SCHED (\\d+)ms: gomaxprocs=(\\d+) idleprocs=(\\d+) threads=(\\d+) spinningthreads=(\\d+)"
                    + " needspinning=([01]) idlethreads=(\\d+) runqueue=(\\d+)";
    static final Pattern SHORT =
            Pattern.compile("^" + HEAD + " \\[ ((?:\\d+ )*\\d+) \\] schedticks=\\[ ((?:\\d+ )*)\\]$");
    // detailed: print(" gcwaiting=", .., " nmidlelocked=", .., " stopwait=", .., " sysmonwait=", .., "\n").
    // nmidlelocked may read -1, in Go as here: sysmon pretends one more M runs (incidlelocked(-1))
    // around a retake and around its injectglist, and the trace may be printed in between.
    static final Pattern LONG = Pattern.compile(
            "^" + HEAD + " gcwaiting=(true|false) nmidlelocked=(-?\\d+) stopwait=(-?\\d+) sysmonwait=(true|false)$");
    // print("  P", i, ": status=", .., " schedtick=", .., " syscalltick=", .., " m=", id|nil, " runqsize=", .., "
    // gfreecnt=", .., " timerslen=", .., "\n")
    static final Pattern PLINE = Pattern.compile(
            "^  P(\\d+): status=([0-4]) schedtick=(\\d+) syscalltick=(\\d+) m=(\\d+|nil) runqsize=(\\d+) gfreecnt=(\\d+) timerslen=(\\d+)$");
    // print("  M", id, ": p=", id|nil, " curg=", goid|nil, " mallocing=", .., " throwing=", .., " preemptoff=", .., "
    // locks=", ..,
    //       " dying=", .., " spinning=", .., " blocked=", .., " lockedg=", goid|nil, "\n")
    static final Pattern MLINE = Pattern.compile(
            "^  M(\\d+): p=(\\d+|nil) curg=(\\d+|nil) mallocing=(\\d+) throwing=(\\d+)"
                    + " preemptoff=(\\S*) locks=(\\d+) dying=(\\d+) spinning=(true|false) blocked=(true|false) lockedg=(\\d+|nil)$");
    // print("  G", goid, ": status=", status, "(", waitreason, ") m=", id|nil, " lockedm=", id|nil, "\n")
    static final Pattern GLINE =
            Pattern.compile("^  G(\\d+): status=(\\d+)\\(([^)]*(?:\\([^)]*\\))?)\\) m=(\\d+|nil) lockedm=(\\d+|nil)$");

    /**
     * scheddetail does not stall the Ms it reports on: sched.lock is held while the header, P and
     * M fields are read (as Go reads them), and released before allgs is walked and before any text
     * is formatted, so the time under it does not grow with the number of goroutines (Go holds it
     * for the whole print, G lines included). Phases seen through SchedTrace's test seam.
     */
    @Test
    void detailWalksAndFormatsTheGoroutinesWithoutSchedLock() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicReference<String> out = new AtomicReference<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema never = new GoSema(0);
            GoSema started = new GoSema(0);
            int n = 200;
            for (int i = 0; i < n; i++) {
                rt.newproc(() -> {
                    started.release();
                    never.acquire();
                });
            }
            for (int i = 0; i < n; i++) {
                started.acquire();
            }
            SchedTrace.phaseForTest = ph -> seen.add(ph + "=" + Thread.holdsLock(rt.sched.lock));
            try {
                out.set(SchedTrace.format(rt, 0, true));
            } finally {
                SchedTrace.phaseForTest = null;
            }
            for (int i = 0; i < n; i++) {
                never.release();
            }
        });
        assertEquals(List.of("header=true", "ps=true", "ms=true", "gs=false", "text=false"), seen);
        // the same text: one G line per goroutine (200 + main at least), P and M lines as before
        long glines = out.get().lines().filter(l -> GLINE.matcher(l).matches()).count();
        long plines = out.get().lines().filter(l -> PLINE.matcher(l).matches()).count();
        assertTrue(glines >= 201, "G lines: " + glines);
        assertEquals(2, plines);
        String head = out.get().lines().findFirst().orElseThrow();
        assertTrue(LONG.matcher(head).matches(), head);
    }

    @Test
    void shortLineOnOnePIsGoShapedAndCountsTheRingNotRunnext() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> line = new AtomicReference<>();
        AtomicReference<String> expectHead = new AtomicReference<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            // unpreemptible from the spawns to the look: a preemption honoured at a newproc would
            // queue main and run the others first
            Unpreemptible.run(() -> {
                for (int i = 0; i < 3; i++) {
                    rt.newproc(done::release);
                }
                // one P: the last go sits in runnext, the other two in the ring
                line.set(SchedTrace.format(rt, 7, false));
                expectHead.set("SCHED 7ms: gomaxprocs=1 idleprocs=0 threads=" + rt.mcountPublic() + " spinningthreads="
                        + rt.nmspinning() + " needspinning=" + rt.needspinning() + " idlethreads=" + rt.nmidle()
                        + " runqueue=0"
                        // main came from runnext at boot, so it inherited a slice: schedtick is still 0 (as in Go)
                        + " [ 2 ] schedticks=[ " + rt.allp()[0].schedtickOpaque() + " ]\n");
            });
            for (int i = 0; i < 3; i++) {
                done.acquire();
            }
        });
        String l = line.get();
        assertTrue(l.endsWith("\n"));
        Matcher m = SHORT.matcher(l.strip());
        assertTrue(m.matches(), l);
        assertEquals(expectHead.get(), l);
    }

    @Test
    void detailedLinesAreGoShaped() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        AtomicReference<String> out = new AtomicReference<>();
        AtomicReference<Long> parked = new AtomicReference<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema never = new GoSema(0);
            GoSema started = new GoSema(0);
            G w = rt.newproc(() -> {
                started.release();
                never.acquire();
            });
            parked.set(w.goid);
            started.acquire();
            // park_m drops the G's M (dropg) after its CAS to _Gwaiting: at GOMAXPROCS=2 main may run
            // on the other P (stolen from w's runnext) between the two, and print m=<id>
            long deadline = System.nanoTime() + 10_000_000_000L; // a hang guard: the lines below then fail
            while ((w.readgstatus() != G._Gwaiting || w.m != null) && System.nanoTime() < deadline) {
                Scheduler.gosched();
            }
            out.set(SchedTrace.format(rt, 0, true));
            never.release();
        });
        List<String> lines = out.get().lines().toList();
        Matcher h = LONG.matcher(lines.get(0));
        assertTrue(h.matches(), lines.get(0));
        assertEquals("2", h.group(2));
        int ps = 0;
        int ms = 0;
        int gs = 0;
        long lastM = Long.MAX_VALUE;
        boolean sawSysmon = false;
        boolean sawMain = false;
        boolean sawParked = false;
        for (String l : lines.subList(1, lines.size())) {
            Matcher pm = PLINE.matcher(l);
            Matcher mm = MLINE.matcher(l);
            Matcher gm = GLINE.matcher(l);
            if (pm.matches()) {
                assertEquals(ps, Integer.parseInt(pm.group(1)), "P lines in allp order");
                assertEquals(0, gs + ms, "P lines come first");
                ps++;
            } else if (mm.matches()) {
                assertEquals(0, gs, "M lines before G lines");
                assertEquals("", mm.group(6), "empty preemptoff prints as 'preemptoff= locks='");
                long id = Long.parseLong(mm.group(1));
                assertTrue(id < lastM, "M lines newest first, as Go walks allm: " + out.get());
                lastM = id;
                if (id == s.idle.synced.sysmonM) {
                    sawSysmon = true;
                    assertTrue(l.startsWith("  M" + id + ": p=nil curg=nil "), l);
                }
                ms++;
            } else if (gm.matches()) {
                long goid = Long.parseLong(gm.group(1));
                if (goid == 1) {
                    sawMain = true;
                    assertEquals("2", gm.group(2), l); // _Grunning
                    assertEquals("", gm.group(3), l); // status=2()
                    assertTrue(!gm.group(4).equals("nil"), l);
                } else if (goid == parked.get()) {
                    sawParked = true;
                    assertEquals("4(semacquire) m=nil lockedm=nil", l.substring(l.indexOf("status=") + 7));
                }
                gs++;
            } else {
                throw new AssertionError("line not in Go's format: '" + l + "'");
            }
        }
        assertEquals(2, ps);
        // The M lines are the allm snapshot taken under sched.lock with the header, so they match the
        // header's threads= (mcount: no M has exited here), sysmon's M included as Go's allm holds it.
        int threads = Integer.parseInt(h.group(4));
        assertEquals(threads, ms, out.get());
        assertTrue(sawSysmon && sawMain && sawParked, out.get());
    }

    @Test
    void periodicPrintBySysmonStartsAtZeroAndGoesOnWhileIdle() {
        String old = System.getProperty("gort.godebug");
        PrintStream oldErr = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setProperty("gort.godebug", "schedtrace=10");
        Scheduler s;
        try {
            System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
            s = new Scheduler(TestSupport.config(2));
            assertEquals(10, s.schedtrace.periodMs);
            // Every P idle while main sleeps: sysmon must keep printing instead of deep-sleeping.
            // Main sleeps in 100 ms rounds until two lines were printed with every P idle (bounded:
            // 300 rounds). A single 100 ms sleep raced the Ms' way to idle on the wall clock: on a
            // loaded machine both Ms were still on their way (idleprocs=0) for the whole sleep.
            s.run(() -> {
                for (int round = 0; round < 300 && idleLines(buf) < 2; round++) {
                    Timer.timeSleep(100_000_000L);
                }
            });
        } finally {
            System.setErr(oldErr);
            if (old == null) {
                System.clearProperty("gort.godebug");
            } else {
                System.setProperty("gort.godebug", old);
            }
        }
        List<String> lines = buf.toString(StandardCharsets.UTF_8)
                .lines()
                .filter(l -> l.startsWith("SCHED"))
                .toList();
        // a line every 10 ms (fewer on a loaded machine), printed while every P was idle too
        assertTrue(idleLines(buf) >= 2, "expected lines printed while every P was idle: " + lines);
        assertEquals(0, s.sysmon.deepSleeps(), "sysmon deep-slept while schedtrace was on");
        assertTrue(lines.get(0).startsWith("SCHED 0ms: gomaxprocs=2 "), lines.get(0));
        for (String l : lines) {
            assertTrue(SHORT.matcher(l).matches(), l);
        }
    }

    /** How many SCHED lines in buf were printed with both Ps idle. */
    private static long idleLines(ByteArrayOutputStream buf) {
        return buf.toString(StandardCharsets.UTF_8)
                .lines()
                .filter(l -> l.startsWith("SCHED") && l.contains(" idleprocs=2 "))
                .count();
    }

    @Test
    void fatalErrorPrintsADetailedTraceWhenEitherFlagIsSet() {
        String old = System.getProperty("gort.godebug");
        PrintStream oldErr = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setProperty("gort.godebug", "scheddetail=1");
        try {
            System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
            Scheduler s = new Scheduler(TestSupport.config(1));
            assertThrows(GortFatalError.class, () -> s.run(() -> new GoSema(0).acquire()));
        } finally {
            System.setErr(oldErr);
            if (old == null) {
                System.clearProperty("gort.godebug");
            } else {
                System.setProperty("gort.godebug", old);
            }
        }
        String err = buf.toString(StandardCharsets.UTF_8);
        assertTrue(err.contains("fatal error: all goroutines are asleep - deadlock!"), err);
        String sched =
                err.lines().filter(l -> l.startsWith("SCHED ")).findFirst().orElseThrow(() -> new AssertionError(err));
        assertTrue(LONG.matcher(sched).matches(), sched);
        assertTrue(err.lines().anyMatch(l -> l.equals("  G1: status=4(semacquire) m=nil lockedm=nil")), err);
    }
}
