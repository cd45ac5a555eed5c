package dev.gort.sync;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Traceback;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The wait-for graph names who can release an RWMutex waiter: a reader blocked behind a writer is
 * held by that writer; a writer waiting for the readers to leave is held by the readers, which Go's
 * RWMutex does not track (nor does gort's), so it names nobody. It must never name the writer itself
 * (a false "cycle"), whether the readers are alive or dead.
 */
class RWMutexWaitForGraphTest {
    /** Waits (bounded, yielding on GOMAXPROCS=1) until gp is parked with the given wait reason. */
    private static void awaitParked(G gp, String reason) {
        for (int i = 0; i < 100_000; i++) {
            if (gp.readgstatus() == G._Gwaiting && reason.equals(gp.waitReason().go())) {
                return;
            }
            Go.gosched();
        }
        throw new AssertionError("G" + gp.goid + " never parked in " + reason);
    }

    @Test
    void writerWaitingForTheReadLockOfADeadGoroutineIsNotHeldByItself() {
        AtomicReference<String> graph = new AtomicReference<>();
        GortTesting.run(1, () -> {
            RWMutex rw = new RWMutex();
            Chan<Boolean> readLocked = Chan.make();
            // The reader takes a read lock and ends without runlock: it holds it while dead.
            Go.go(() -> {
                rw.rlock();
                readLocked.send(true);
            });
            readLocked.recv();
            Chan<G> writerG = Chan.make(1);
            Chan<Boolean> written = Chan.make();
            Go.go(() -> {
                writerG.send(dev.gort.runtime.Scheduler.currentG());
                rw.lock(); // waits for the dead reader
                rw.unlock();
                written.send(true);
            });
            G w = writerG.recv();
            awaitParked(w, "sync.RWMutex.Lock");
            graph.set(Traceback.waitForGraph(Scheduler.current()));
            rw.runlock(); // any goroutine may release a read lock (Go's rule): the writer proceeds
            written.recv();
        });
        String g = graph.get();
        assertTrue(
                Pattern.compile("  G\\d+ \\[sync.RWMutex.Lock\\] waits on sync.RWMutex@\\p{XDigit}+ \\(writer pending")
                        .matcher(g)
                        .find(),
                g);
        assertFalse(g.contains("(cycle)"), g);
        assertFalse(
                Pattern.compile("\\[sync.RWMutex.Lock\\] waits on [^\n]* held by G")
                        .matcher(g)
                        .find(),
                g);
    }

    @Test
    void readerWaitingForAWriterIsHeldByTheWriter() {
        AtomicReference<String> graph = new AtomicReference<>();
        GortTesting.run(1, () -> {
            RWMutex rw = new RWMutex();
            rw.lock(); // main (G1) writes
            Chan<G> readerG = Chan.make(1);
            Chan<Boolean> read = Chan.make();
            Go.go(() -> {
                readerG.send(dev.gort.runtime.Scheduler.currentG());
                rw.rlock();
                rw.runlock();
                read.send(true);
            });
            G r = readerG.recv();
            awaitParked(r, "sync.RWMutex.RLock");
            graph.set(Traceback.waitForGraph(Scheduler.current()));
            rw.unlock();
            read.recv();
        });
        String g = graph.get();
        assertTrue(
                Pattern.compile(
                                "  G\\d+ \\[sync.RWMutex.RLock\\] waits on sync.RWMutex@\\p{XDigit}+ [^\n]* held by G1\n")
                        .matcher(g)
                        .find(),
                g);
        assertTrue(
                Pattern.compile("  chain: G\\d+ -> sync.RWMutex@\\p{XDigit}+ -> G1 \\[running\\]\n")
                        .matcher(g)
                        .find(),
                g);
    }
}
