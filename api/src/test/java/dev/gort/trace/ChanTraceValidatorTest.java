package dev.gort.trace;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Select;
import dev.gort.runtime.Config;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.trace.Ev;
import dev.gort.runtime.trace.Trace;
import dev.gort.runtime.trace.TraceValidator;
import dev.gort.runtime.trace.Tracer;
import dev.gort.sync.WaitGroup;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The trace validator on real channel programs (the chan layer's gopark/goready paths): ping-pong
 * over unbuffered channels, a producer/consumer pipeline through a buffered channel with a
 * WaitGroup, and a select fan-in; GOMAXPROCS 1..4, stealing on and off. Every goroutine ends, no
 * goroutine is ever in two places, P lanes never overlap, and parks name the channel they wait on.
 */
class ChanTraceValidatorTest {
    static Trace traced(int procs, boolean stealing, String name, Runnable main) {
        Scheduler s = new Scheduler(Config.fromEnvironment()
                .withGomaxprocs(procs)
                .withStealing(stealing)
                .withPanicExits(false));
        s.trace.start(new Tracer.Options().workload(name));
        s.run(main);
        return s.trace.stop();
    }

    static void check(Trace t) {
        TraceValidator.Result r = TraceValidator.validate(t, true, Map.of());
        assertTrue(r.ok(), () -> t.workload + ": " + r);
        assertTrue(
                r.count(6) == r.goroutines.size(), () -> t.workload + ": not every goroutine ended: " + r.goroutines);
    }

    /**
     * The simulator's blocking-syscalls workload: six goroutines each block their carrier twice
     * (Syscall.block around a 3 ms sleep) between bits of work; sysmon hands the Ps of blocked
     * carriers to other Ms, so threads climb past GOMAXPROCS.
     */
    @ParameterizedTest(name = "syscalls GOMAXPROCS={0} stealing={1}")
    @CsvSource({"1,true", "2,true", "3,true", "4,true", "1,false", "2,false", "3,false", "4,false"})
    void syscallWorkload(int procs, boolean stealing) {
        Trace t = traced(procs, stealing, "blocking syscalls", () -> {
            WaitGroup wg = new WaitGroup();
            // A hand-off that no timing can miss: a goroutine blocks its carrier in a syscall until
            // a goroutine it started has run. At GOMAXPROCS=1 that one can only run on the P that
            // sysmon (or the syscall's own exit) handed to another M. The six 3 ms sleeps below
            // need not see one: sysmon's sleep grows to 10 ms while nothing is blocked, so on a
            // loaded machine every sleep could end before sysmon looks (seen: "no handoff").
            java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(1);
            wg.add(1);
            Go.go(() -> {
                Go.go(ran::countDown);
                try {
                    dev.gort.Syscall.block(() -> {
                        if (!ran.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                            throw new AssertionError("the goroutine started before the syscall never ran");
                        }
                    });
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                wg.done();
            });
            for (int g = 0; g < 6; g++) {
                wg.add(1);
                Go.go(() -> {
                    for (int k = 0; k < 2; k++) {
                        spin(300_000);
                        try {
                            dev.gort.Syscall.block(() -> Thread.sleep(3));
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                    }
                    wg.done();
                });
            }
            wg.await();
        });
        check(t);
        assertTrue(t.count(Ev.SYSCALL_ENTER) >= 13, () -> "syscall enters: " + t.count(Ev.SYSCALL_ENTER));
        assertTrue(t.count(Ev.SYSCALL_EXIT) >= 13);
        if (procs == 1) {
            // one P, six carriers blocked in turn: sysmon must have handed the P on, on new threads
            assertTrue(t.count(Ev.HANDOFF) >= 1, "no handoff");
            java.util.Set<Long> ms = new java.util.HashSet<>();
            for (int i = 0; i < t.size(); i++) {
                if (t.m(i) >= 0) {
                    ms.add(t.m(i));
                }
            }
            assertTrue(ms.size() > procs, "threads did not climb past GOMAXPROCS: " + ms);
        }
    }

    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    @ParameterizedTest(name = "GOMAXPROCS={0} stealing={1}")
    @CsvSource({"1,true", "2,true", "3,true", "4,true", "1,false", "2,false", "3,false", "4,false"})
    void channelWorkloads(int procs, boolean stealing) {
        Trace pp = traced(procs, stealing, "chan ping-pong", () -> {
            Chan<Integer> ping = Chan.make();
            Chan<Integer> pong = Chan.make();
            Chan<Boolean> done = Chan.make(1); // buffered: the partner's last send never waits on main
            Go.go(() -> {
                for (int i = 0; i < 1000; i++) {
                    pong.send(ping.recv() + 1);
                }
                done.send(true);
            });
            for (int i = 0; i < 1000; i++) {
                ping.send(i);
                pong.recv();
            }
            done.recv();
        });
        check(pp);
        assertTrue(pp.count(Ev.GO_UNBLOCK) >= 1000);
        assertTrue(pp.objects.values().stream().anyMatch(d -> d.startsWith("chan")), pp.objects::toString);

        Trace pipe = traced(procs, stealing, "pipeline", () -> {
            Chan<Integer> c = Chan.make(8);
            WaitGroup wg = new WaitGroup();
            for (int w = 0; w < 4; w++) {
                wg.add(1);
                Go.go(() -> {
                    for (Integer v : c) {
                        if (v < 0) {
                            throw new AssertionError();
                        }
                    }
                    wg.done();
                });
            }
            for (int i = 0; i < 2000; i++) {
                c.send(i);
            }
            c.close();
            wg.await();
        });
        check(pipe);

        Trace sel = traced(procs, stealing, "select fan-in", () -> {
            Chan<Integer> a = Chan.make();
            Chan<Integer> b = Chan.make();
            // Go semantics: a sender readied by main's last receive might never run again once main
            // returns, so main waits for the senders to end (the validator wants every G finished)
            WaitGroup wg = new WaitGroup();
            wg.add(2);
            Go.go(() -> {
                for (int i = 0; i < 300; i++) {
                    a.send(i);
                }
                wg.done();
            });
            Go.go(() -> {
                for (int i = 0; i < 300; i++) {
                    b.send(i);
                }
                wg.done();
            });
            int[] got = new int[1];
            for (int i = 0; i < 600; i++) {
                Select.select(Select.recv(a, v -> got[0]++), Select.recv(b, v -> got[0]++));
            }
            if (got[0] != 600) {
                throw new AssertionError(got[0]);
            }
            wg.await();
        });
        check(sel);
    }
}
