package dev.gort.runtime.pprof;

import java.util.ArrayList;
import java.util.List;
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

    /**
     * The frames as Pprof's stack elements, top first, cut at a goroutine's continuation entry
     * (the first frame of {@code jdk.internal.vm.Continuation}, and the carrier's frames below it).
     */
    static List<StackTraceElement> stack(List<RecordedFrame> frames) {
        List<StackTraceElement> out = new ArrayList<>(frames.size());
        for (RecordedFrame f : frames) {
            RecordedMethod m = f.getMethod();
            if (m == null) {
                continue;
            }
            String cls = m.getType().getName();
            if (cls.equals("jdk.internal.vm.Continuation")) {
                break; // enter0, enter, enterSpecial (the frames above it may be compiled away), run
            }
            out.add(new StackTraceElement(cls, m.getName(), fileOf(cls), f.getLineNumber()));
        }
        return out; // a map key from here on, never changed
    }

    /**
     * {@code Outer.java} for {@code a.b.Outer$Inner}, and for a hidden class
     * ({@code a.b.Outer$$Lambda.0x0000...} or {@code .../0x...}); null for none.
     */
    static String fileOf(String cls) {
        String c = HIDDEN_SUFFIX.matcher(cls).replaceFirst("");
        String simple = c.substring(c.lastIndexOf('.') + 1);
        int dollar = simple.indexOf('$');
        if (dollar >= 0) {
            simple = simple.substring(0, dollar);
        }
        return simple.isEmpty() ? null : simple + ".java";
    }
}
