package dev.gort.agent;

import dev.gort.runtime.PreemptStrategy;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * A preemption strategy as the agent sees it: where yield points go, and what a yield point calls.
 * One class is a strategy; {@link Strategies} registers it by {@link #name()} so that
 * {@code -Dgort.preempt=<name>} (or the agent argument) selects it, and the lab
 * ({@code ./gort lab preempt}) measures it, with no change to the scheduler.
 *
 * <p>{@link PollInjector} asks the strategy, for every method it rewrites (never {@code <clinit>},
 * which gets hooks only), {@link #pollAtEntry}, then {@link #stride} (javac's counted loops to
 * strip-mine, {@link StripMiner}), then {@link #pollAtBackedge} for each remaining backward branch,
 * in code order. Everything that keeps preemption safe (monitor, lock and class-initialiser hooks)
 * is the injector's, whatever the strategy says: a strategy only decides where polls go.
 *
 * <p>The ASM tree types here are ASM's own inside this module and its tests; in the published
 * agent jar they are relocated to {@code dev.gort.agent.shaded.asm}, so a strategy compiled against
 * the jar uses those.
 *
 * <p>A strategy object is shared by every class-loading thread: it must be immutable (or
 * thread-safe) and must not load classes.
 */
public interface Strategy {
    /** The name on the command line ({@code -Dgort.preempt=<name>}); lower case, no spaces. */
    String name();

    /**
     * The runtime's family for this strategy: {@link PreemptStrategy#NONE} means "never rewrite a
     * class" (not even the lock hooks); {@link PreemptStrategy#BUDGET} that polls call
     * {@code Poll.budget}; any other value only labels the runtime's figures.
     */
    PreemptStrategy family();

    /** A poll as the first instruction of {@code mn} (a synchronized method never gets one). */
    boolean pollAtEntry(String owner, MethodNode mn);

    /**
     * Strip length for javac's counted loops in {@code mn} ({@link StripMiner}): they poll once per
     * this many iterations; 0 leaves them to {@link #pollAtBackedge}.
     */
    default int stride(String owner, MethodNode mn) {
        return 0;
    }

    /**
     * A poll before the backward branch {@code branch} to {@code target} (the loop's head: a label
     * already seen in code order). {@link #bodySize} measures the loop.
     */
    boolean pollAtBackedge(String owner, MethodNode mn, AbstractInsnNode branch, LabelNode target);

    /**
     * What a yield point calls: a static {@code (Ljava/lang/String;)V} method (the argument is the
     * site, {@code "class.method"}), as an internal class name and a method name. Default
     * {@code dev/gort/runtime/Poll.poll}, or {@code Poll.budget} for the budget family. A method of
     * one's own must end in {@code Poll.poll(site)} (or {@code budget}) to yield, must not be in a
     * class the agent rewrites, and must be visible from every instrumented class.
     */
    default String pollOwner() {
        return PollInjector.POLL;
    }

    /** See {@link #pollOwner()}. */
    default String pollName() {
        return family() == PreemptStrategy.BUDGET ? "budget" : "poll";
    }

    /**
     * The instructions (not labels, frames or line numbers) from {@code target} to {@code branch}
     * inclusive: the length of the loop body that this back-edge closes, in code order.
     */
    static int bodySize(LabelNode target, AbstractInsnNode branch) {
        int n = 0;
        for (AbstractInsnNode in = target; in != null; in = in.getNext()) {
            if (in.getOpcode() >= 0) {
                n++;
            }
            if (in == branch) {
                return n;
            }
        }
        return n; // not reached for a backward branch: target comes first
    }
}
