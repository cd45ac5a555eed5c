package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.internal.Sudog;
import dev.gort.runtime.Config;
import dev.gort.runtime.G;
import dev.gort.runtime.ParkedLayout;
import dev.gort.runtime.Scheduler;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Issue 19's memory target (a goroutine parked in a channel receive at most 450 bytes): every frame
 * between the continuation's entry and its yield is copied into the parked goroutine's stack chunk,
 * with its locals and spill slots, so the park path must not grow frames back; nor may the sudog
 * grow back. Frames are counted as the JVM reports them (inlining does not change the list), not
 * timed and not measured on the heap (the bench's Parked does that).
 *
 * <p>What the chunk holds, warm (C2, JDK 25, G1; frame sizes from the prologues that
 * {@code -XX:CompileCommand=print} shows without hsdis): Continuation.enter 48 bytes, the
 * goroutine's function 32 (the bench's lambda, recv inlined), Chan.chanrecv 80 (GoParker.park,
 * gopark and Continuation.yield inlined into it), Continuation.yield0 64 (the JDK's; too big to
 * inline), plus about 40 of chunk header and metadata: the 264 bytes Parked's histogram shows. Only
 * three references are live across the yield in chanrecv (the channel, the sudog, the G); its frame
 * is sized by the spill slots of its other call and uncommon-trap sites. A goroutine that parks while
 * chanrecv runs as C1 code (after a deoptimisation) keeps a frame 2-4 times larger.
 */
class ParkedStackTest {
    /**
     * Innermost first, what a goroutine blocked in {@code ch.recv()} has on its stack between
     * {@code Continuation.enter0} and {@code Continuation.yield} (both hidden frames of the JDK):
     * gopark (the frame that yields), GoParker.park (the api's parker, one call), chanrecv (the
     * whole receive: the locked part is not a frame of its own), Chan.recv and the goroutine's own
     * function. Before issue 19's changes three more: chanrecvLocked, G.body and the shared entry
     * lambda G$GCont.lambda$static$0 (the continuation is now the G itself).
     */
    static final List<String> RECV_FRAMES = List.of(
            "dev.gort.runtime.Scheduler.gopark",
            "dev.gort.internal.GoParker.park",
            "dev.gort.Chan.chanrecv",
            "dev.gort.Chan.recv",
            ParkedStackTest.class.getName() + ".lambda$"); // the goroutine's function (javac names it)

    /**
     * Sudog: g, next, prev, elem, waitlink and the profiles' times (6 references: 24) and ticket
     * (4): 28 bytes, a 40-byte object with the 12-byte header. Before: c (a select's park commit now
     * unlocks the select's own channel list), isSelect (now the sudog's class, Sudog.OfSelect) and
     * success (now closechan's marker in elem) made it 34 bytes, a 48-byte object; glink and
     * caseIndex before that 42 (56), and the two profile longs on the sudog had made it 72.
     */
    static final int SUDOG_FIELD_BYTES = 28;

    @Test
    void receiverParksThroughFiveFrames() {
        AtomicReference<List<String>> frames = new AtomicReference<>();
        Go.run(Config.fromEnvironment().withGomaxprocs(1).withPanicExits(false), () -> {
            Chan<Object> ch = Chan.make();
            G gp = Scheduler.current().newproc(() -> ch.recv());
            // GOMAXPROCS=1: the receiver runs at our Gosched and parks; bounded in case it did not.
            for (int i = 0; i < 1000 && gp.readgstatus() != G._Gwaiting; i++) {
                Go.gosched();
            }
            frames.set(ParkedLayout.frames(gp));
            ch.send("done");
        });
        List<String> got = frames.get();
        assertEquals(RECV_FRAMES.size(), got.size(), "frames of a goroutine parked in recv: " + got);
        for (int i = 0; i < got.size(); i++) {
            assertTrue(got.get(i).startsWith(RECV_FRAMES.get(i)), "frame " + i + " of " + got);
        }
    }

    @Test
    void sudogFieldsStayWithinIssue19Budget() {
        int n = ParkedLayout.fieldBytes(Sudog.class);
        assertTrue(n <= SUDOG_FIELD_BYTES, "Sudog has " + n + " bytes of fields, budget " + SUDOG_FIELD_BYTES);
        assertEquals(n, ParkedLayout.fieldBytes(Sudog.OfSelect.class), "a select's sudog has no fields of its own");
    }
}
