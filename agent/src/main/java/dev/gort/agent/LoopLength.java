package dev.gort.agent;

import dev.gort.runtime.Config;
import dev.gort.runtime.PreemptStrategy;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * {@code looplen}: a poll only on the back-edges of loops whose body is at least {@code threshold}
 * bytecode instructions long, plus a poll at the entry of methods that call others (as
 * {@code backedge}'s caller polls). Short loops get no poll at all and are not strip-mined.
 *
 * <p>Where it comes from: HotSpot before loop strip mining left the safepoint poll out of "counted"
 * int loops (short, bounded by an int counter) on the argument that they end soon
 * ({@code -XX:-UseCountedLoopSafepoints}), and Lin et al. (ISMM 2015, "Stop and Go") measure that the
 * cost of untaken yieldpoints is dominated by the hottest, shortest loops. This strategy is that
 * rule stated on loop size instead of loop shape: the polls whose relative cost is highest (a poll
 * per iteration of a 5-instruction loop) are dropped, those whose cost a long body amortises are
 * kept. The price is the one HotSpot paid (JDK-8186027): a short loop that runs long (a call-free
 * spin over many iterations) cannot be preempted; the lab shows where that lands.
 *
 * <p>Settings: {@code -Dgort.preempt.looplen=N} / {@code GORT_PREEMPT_LOOPLEN} (default
 * {@link #DEFAULT_THRESHOLD} instructions, counted from the loop head to its back-edge),
 * {@code -Dgort.preempt.callers} as for {@code backedge}.
 */
public record LoopLength(int threshold, boolean callers) implements Strategy {
    /** The registered name. */
    public static final String NAME = "looplen";
    /** Default minimum body length, in instructions, of a loop that gets a back-edge poll. */
    public static final int DEFAULT_THRESHOLD = 24;

    public LoopLength {
        if (threshold < 0) {
            throw new IllegalArgumentException("gort: negative loop-length threshold " + threshold);
        }
    }

    /** The strategy with {@code -Dgort.preempt.looplen} and {@code -Dgort.preempt.callers}. */
    public static LoopLength fromEnvironment() {
        return new LoopLength(
                Config.intSetting(
                        "gort.preempt.looplen", "GORT_PREEMPT_LOOPLEN", DEFAULT_THRESHOLD, 0, Integer.MAX_VALUE),
                PreemptStrategy.callerEntriesFromEnvironment());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PreemptStrategy family() {
        return PreemptStrategy.BACKEDGE;
    }

    @Override
    public boolean pollAtEntry(String owner, MethodNode mn) {
        return callers && PollInjector.callsAnother(mn);
    }

    @Override
    public boolean pollAtBackedge(String owner, MethodNode mn, AbstractInsnNode branch, LabelNode target) {
        return Strategy.bodySize(target, branch) >= threshold;
    }
}
