package dev.gort.runtime;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress tests of a P's run queue ({@link RunQueue}) under the Java memory model: the races of
 * Go's runqget/runqgrab/runqsteal/runqput (proc.go) that lincheck, which assumes sequential
 * consistency, cannot test for the ring's release/acquire half. Every outcome not listed is
 * FORBIDDEN (jcstress's default). Queues are made outside a runtime ({@code new RunQueue(4)}: no
 * P, so the runnext thief does not back off, and no global queue: nothing here overflows).
 *
 * <p>What they use of the runtime: {@code new RunQueue(int)}, {@code runqput(G, boolean)},
 * {@code runqget()}, {@code runqsteal(RunQueue.Steal, boolean)}, and G's package-private constructor and
 * its plain fields {@code param} and {@code waitsince} (this class is in {@code dev.gort.runtime} for
 * that, in its own module).
 *
 * <p>Outcome codes: a G is 1 or 2 (its goid); 0 is "got nothing".
 */
public final class RunQueueJcstress {
    private RunQueueJcstress() {}

    static final int CAP = 4;

    static G newG(long goid) {
        return new G(null, goid, 0, null, RunQueueJcstress::noop);
    }

    private static void noop() {}

    static int id(G g) {
        return g == null ? 0 : (int) g.goid;
    }

    /** Payload of a G, written with plain stores by the owner before runqput. */
    static final class Payload {
        int x;
    }

    /**
     * Owner's pop against a thief's steal of the last element of the ring: exactly one of them
     * gets it. Go: proc.go runqget (CAS of head) vs runqgrab (CAS of head).
     */
    @JCStressTest
    @Description("owner runqget vs thief runqsteal of the ring's last G: never both, never neither")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the owner popped it")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the thief stole it")
    @State
    public static class OwnerPopVsStealLast {
        final RunQueue victim = new RunQueue(CAP);
        final RunQueue thief = new RunQueue(CAP);

        public OwnerPopVsStealLast() {
            victim.runqput(newG(1), false);
        }

        @Actor
        public void owner(II_Result r) {
            r.r1 = id(victim.runqget());
        }

        @Actor
        public void thief(II_Result r) {
            r.r2 = id(thief.runqsteal(victim.steal, false));
        }
    }

    /**
     * The same race when the last G is in runnext and the thief steals runnext too (Go's last steal
     * pass): the CAS of runnext G->nil decides. Go: proc.go runqget vs runqgrab's runnext branch.
     */
    @JCStressTest
    @Description("owner runqget vs thief stealing runnext: never both, never neither")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the owner took runnext")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the thief stole runnext")
    @State
    public static class OwnerPopVsStealRunnext {
        final RunQueue victim = new RunQueue(CAP);
        final RunQueue thief = new RunQueue(CAP);

        public OwnerPopVsStealRunnext() {
            victim.runqput(newG(1), true);
        }

        @Actor
        public void owner(II_Result r) {
            r.r1 = id(victim.runqget());
        }

        @Actor
        public void thief(II_Result r) {
            r.r2 = id(thief.runqsteal(victim.steal, true));
        }
    }

    /** Two thieves on the ring's only G: exactly one gets it. Go: proc.go runqgrab (CAS of head). */
    @JCStressTest
    @Description("two thieves steal the ring's only G: exactly one gets it")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "thief 1 stole it")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "thief 2 stole it")
    @State
    public static class TwoThievesOneG {
        final RunQueue victim = new RunQueue(CAP);
        final RunQueue thief1 = new RunQueue(CAP);
        final RunQueue thief2 = new RunQueue(CAP);

        public TwoThievesOneG() {
            victim.runqput(newG(1), false);
        }

        @Actor
        public void thief1(II_Result r) {
            r.r1 = id(thief1.runqsteal(victim.steal, false));
        }

        @Actor
        public void thief2(II_Result r) {
            r.r2 = id(thief2.runqsteal(victim.steal, false));
        }
    }

    /** Two thieves on runnext's G: exactly one gets it. Go: proc.go runqgrab (CAS of runnext). */
    @JCStressTest
    @Description("two thieves steal the G in runnext: exactly one gets it")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "thief 1 stole it")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "thief 2 stole it")
    @State
    public static class TwoThievesRunnext {
        final RunQueue victim = new RunQueue(CAP);
        final RunQueue thief1 = new RunQueue(CAP);
        final RunQueue thief2 = new RunQueue(CAP);

        public TwoThievesRunnext() {
            victim.runqput(newG(1), true);
        }

        @Actor
        public void thief1(II_Result r) {
            r.r1 = id(thief1.runqsteal(victim.steal, true));
        }

        @Actor
        public void thief2(II_Result r) {
            r.r2 = id(thief2.runqsteal(victim.steal, true));
        }
    }

    /**
     * Publication through the ring: the owner writes a G's fields with plain stores, then
     * runqput (slot store, then the release store of tail); a thief that takes the G (acquire load of
     * tail, slot read, CAS of head) sees every one of them, and what they point to. Go relies on the
     * same pairing (proc.go runqput's store-release, runqgrab's load-acquire).
     */
    @JCStressTest
    @Description("a thief that steals a G from the ring sees the fields the owner wrote before runqput")
    @Outcome(id = "0, 0, 0, 1", expect = ACCEPTABLE, desc = "the thief came before the put; the G is still queued")
    @Outcome(id = "1, 7, 42, 0", expect = ACCEPTABLE, desc = "stolen, with everything the owner wrote")
    @State
    public static class PublishThroughRing {
        final RunQueue victim = new RunQueue(CAP);
        final RunQueue thief = new RunQueue(CAP);
        final G g = newG(1);

        @Actor
        public void owner() {
            Payload p = new Payload();
            p.x = 7;
            g.param = p;
            g.waitsince = 42;
            victim.runqput(g, false);
        }

        @Actor
        public void thief(IIII_Result r) {
            publication(thief.runqsteal(victim.steal, false), r);
        }

        @Arbiter
        public void left(IIII_Result r) {
            r.r4 = id(victim.runqget());
        }
    }

    /** The same publication through runnext (runqput(g, true): the CAS of runnext is the release). */
    @JCStressTest
    @Description("a thief that steals a G from runnext sees the fields the owner wrote before runqput")
    @Outcome(id = "0, 0, 0, 1", expect = ACCEPTABLE, desc = "the thief came before the put; the G is still queued")
    @Outcome(id = "1, 7, 42, 0", expect = ACCEPTABLE, desc = "stolen, with everything the owner wrote")
    @State
    public static class PublishThroughRunnext {
        final RunQueue victim = new RunQueue(CAP);
        final RunQueue thief = new RunQueue(CAP);
        final G g = newG(1);

        @Actor
        public void owner() {
            Payload p = new Payload();
            p.x = 7;
            g.param = p;
            g.waitsince = 42;
            victim.runqput(g, true);
        }

        @Actor
        public void thief(IIII_Result r) {
            publication(thief.runqsteal(victim.steal, true), r);
        }

        @Arbiter
        public void left(IIII_Result r) {
            r.r4 = id(victim.runqget());
        }
    }

    /**
     * r1: the G's id (0: none); r2: its payload's x (-1: the thief got the G but not its payload);
     * r3: waitsince; r4 (the arbiter): the G still in the victim (0: none), so that a slot claimed
     * before the G was in it (the thief gets null and the G is gone) shows as "0, 0, 0, 0".
     */
    static void publication(G got, IIII_Result r) {
        if (got == null) {
            return; // 0, 0, 0
        }
        r.r1 = id(got);
        Object o = got.param;
        r.r2 = o instanceof Payload p ? p.x : -1;
        r.r3 = (int) got.waitsince;
    }

    /**
     * runnext replaced while a thief takes it: the owner's runqput(G2, true) swaps G1 out of runnext
     * and kicks it to the ring while a thief steals (ring first, then runnext). Every G ends up in
     * exactly one place, and the thief always gets one (runnext is never empty here, so a lost CAS of
     * runnext sends it back to the ring, where G1 now is). r1: what the thief got; r2: what is left in the victim (a bit per G, 1 for
     * G1 and 2 for G2; +8 if one was found twice). Go: proc.go runqput's runnext loop vs runqgrab.
     */
    @JCStressTest
    @Description("owner replaces runnext (kicking the old G to the ring) while a thief steals: no G lost or doubled")
    @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "thief stole G1 (from runnext or from the ring); G2 left")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "thief stole G2 from runnext after the swap; G1 left in the ring")
    @State
    public static class RunnextReplacedWhileStolen {
        final RunQueue victim = new RunQueue(CAP);
        final RunQueue thief = new RunQueue(CAP);
        final G g2 = newG(2);

        public RunnextReplacedWhileStolen() {
            victim.runqput(newG(1), true);
        }

        @Actor
        public void owner() {
            victim.runqput(g2, true);
        }

        @Actor
        public void thief(II_Result r) {
            r.r1 = id(thief.runqsteal(victim.steal, true));
        }

        @Arbiter
        public void left(II_Result r) {
            int mask = 0;
            for (G g; (g = victim.runqget()) != null; ) {
                int bit = id(g);
                mask |= (mask & bit) != 0 ? 8 : bit;
            }
            r.r2 = mask;
        }
    }
}
