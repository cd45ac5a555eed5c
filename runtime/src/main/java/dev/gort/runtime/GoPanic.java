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
        this.createdBy = Traceback.createdBy(gp);
    }

    public long goid() {
        return goid;
    }

    /** Go's crash text: {@code panic: ...}, then {@code goroutine N [running]:}, the stack, the creator. */
    public String goFormat() {
        StringBuilder sb = new StringBuilder();
        Throwable c = getCause();
        sb.append("panic: ").append(c).append("\n\n");
        sb.append("goroutine ").append(goid).append(" [running]:\n");
        for (StackTraceElement e : c.getStackTrace()) {
            Traceback.frame(sb, e);
        }
        if (createdBy != null) {
            sb.append(createdBy);
        }
        sb.append("exit status 2\n");
        return sb.toString();
    }
}
