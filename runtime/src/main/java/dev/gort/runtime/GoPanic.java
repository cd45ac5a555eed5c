package dev.gort.runtime;

/**
 * A goroutine ended with an exception: Go's unrecovered panic. It ends the program; under test (or
 * with {@code Config.panicExits() == false}) it is thrown from {@code Scheduler.run}.
 */
public final class GoPanic extends RuntimeException {
    private final long goid;
    private final String createdBy;

    GoPanic(G gp, Throwable cause) {
        super("panic: " + cause + " [recovered=false] in goroutine " + gp.goid, cause);
        this.goid = gp.goid;
        this.createdBy = Traceback.createdBy(gp, Traceback.goFrames(cause.getStackTrace(), false), Traceback.level());
    }

    long goid() {
        return goid;
    }

    /**
     * Go's crash text at the GOTRACEBACK level: {@code panic: ...}, then (unless {@code none})
     * {@code goroutine N [running]:}, the stack without runtime frames (unless {@code system}), the
     * creator. A value of several lines has its later lines indented by a tab (Go 1.23+:
     * printpanicval's printindented). No {@code exit status 2}: that is the {@code go} command's
     * line about its child, which a Go program never prints.
     *
     * <p>Go: panic.go printpanics, dopanic_m
     */
    public String goFormat() {
        return goFormat(null);
    }

    /**
     * As {@link #goFormat()}; with GOTRACEBACK {@code all} or above, {@code others} (the other
     * goroutines' dump, Go's tracebackothers) follows the panicking one after a blank line.
     */
    String goFormat(String others) {
        int level = Traceback.level();
        StringBuilder sb = new StringBuilder();
        Throwable c = getCause();
        sb.append("panic: ").append(String.valueOf(c).replace("\n", "\n\t")).append("\n");
        if (level > 0) {
            sb.append("\ngoroutine ").append(goid).append(" [running]:\n");
            Traceback.frames(sb, Traceback.goFrames(c.getStackTrace(), false), level);
            if (createdBy != null) {
                sb.append(createdBy);
            }
            if (others != null && Traceback.all() && !others.isEmpty()) {
                sb.append('\n').append(others);
            }
            if (Traceback.crash()) {
                sb.append('\n').append(Traceback.jvmThreads());
            }
        }
        return sb.toString();
    }
}
