package dev.gort.runtime.pprof;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;

/**
 * A JFR event's stack as the profiles' stack elements, shared by the profiles built from JFR
 * ({@link CpuProfile}, {@link MemProfile}): top frame first, a goroutine's cut at its
 * continuation's entry so that it reads as a Go stack does, each frame's file inferred from its
 * class (JFR's frames do not name it).
 */
final class JfrStacks {
    private JfrStacks() {}

    /** A hidden class's suffix: {@code .0x...} or {@code /0x...}. */
    private static final Pattern HIDDEN_SUFFIX = Pattern.compile("[./]0x[0-9a-fA-F]+$");

    private static final String CONTINUATION = "jdk.internal.vm.Continuation";

    /** The continuation's frames that enter a goroutine, below its own (the carrier's above them). */
    private static final Set<String> ENTRY = Set.of("enter0", "enter", "enterSpecial", "run");

    /**
     * The frames as Pprof's stack elements, top first, a goroutine's cut at its continuation's
     * entry ({@link #goroutineStack}).
     */
    static List<StackTraceElement> stack(List<RecordedFrame> frames) {
        List<StackTraceElement> out = new ArrayList<>(frames.size());
        for (RecordedFrame f : frames) {
            RecordedMethod m = f.getMethod();
            if (m == null) {
                continue;
            }
            String cls = m.getType().getName();
            out.add(new StackTraceElement(cls, m.getName(), fileOf(cls), f.getLineNumber()));
        }
        return goroutineStack(out); // a map key from here on, never changed
    }

    /**
     * A goroutine's frames: those above its continuation's entry ({@code Continuation.enter0},
     * {@code enter}, {@code enterSpecial}, {@code run}), so that the carrier's below it (the M's
     * loop) are left out. The continuation's other frames stay: a goroutine that yields runs
     * {@code Continuation.yield} and {@code yield0} above its own frames (where the JVM freezes its
     * stack). A stack with no goroutine frame above the entry is the carrier's own work (mounting,
     * unmounting) and is kept whole.
     */
    static List<StackTraceElement> goroutineStack(List<StackTraceElement> frames) {
        boolean goroutineCode = false;
        for (int i = 0; i < frames.size(); i++) {
            StackTraceElement f = frames.get(i);
            if (!f.getClassName().equals(CONTINUATION)) {
                goroutineCode = true;
            } else if (ENTRY.contains(f.getMethodName())) {
                return goroutineCode ? List.copyOf(frames.subList(0, i)) : frames;
            }
        }
        return frames;
    }

    /** {@code a.b.Outer$$Lambda} for a hidden class's {@code a.b.Outer$$Lambda.0x...} (or {@code /0x...}). */
    static String withoutHiddenSuffix(String cls) {
        return HIDDEN_SUFFIX.matcher(cls).replaceFirst("");
    }

    /**
     * {@code Outer.java} for {@code a.b.Outer$Inner}, and for a hidden class
     * ({@code a.b.Outer$$Lambda.0x0000...} or {@code .../0x...}); null for none.
     */
    static String fileOf(String cls) {
        String c = withoutHiddenSuffix(cls);
        String simple = c.substring(c.lastIndexOf('.') + 1);
        int dollar = simple.indexOf('$');
        if (dollar >= 0) {
            simple = simple.substring(0, dollar);
        }
        return simple.isEmpty() ? null : simple + ".java";
    }
}
