package dev.gort.runtime;

/**
 * A goroutine the goroutine leak profile found leaked: blocked on a concurrency primitive that no
 * other goroutine can reach, so it can never run again. What was captured before the collection
 * proved it (the G itself is gone: see {@link GoroutineLeaks}).
 *
 * @param goid the goroutine's id
 * @param header Go's header, {@code goroutine 18 [chan send (leaked)]:} (Go 1.27's _Gleaked)
 * @param stack its frames, innermost first, runtime frames included (as {@link Traceback#stack})
 * @param createdBy the {@code created by ...} lines, or null (as Go prints none)
 * @param waitReason why it waits
 */
public record LeakedGoroutine(
        long goid, String header, StackTraceElement[] stack, String createdBy, WaitReason waitReason) {
    /** The goroutine in Go's dump format, as {@code pprof.Lookup("goroutineleak").WriteTo(w, 2)} prints it. */
    public String dump() {
        StringBuilder sb = new StringBuilder(header).append('\n');
        int before = sb.length();
        Traceback.frames(sb, stack, Traceback.level());
        if (sb.length() == before) {
            // only runtime frames (a method reference to a runtime method): show them all
            Traceback.frames(sb, stack, 2);
        }
        if (createdBy != null) {
            sb.append(createdBy);
        }
        return sb.toString();
    }
}
