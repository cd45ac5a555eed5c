package dev.gort.runtime;

/** Test configuration; the goroutine semaphore is {@link GoSema}. */
final class TestSupport {
    private TestSupport() {}

    static Config config(int procs) {
        return Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    /** {@link #config(int)} in the given syscall model ({@code psyscall}: Go 1.25's, else Go 1.26+'s). */
    static Config config(int procs, boolean psyscall) {
        Config c = config(procs);
        Config.Settings st = c.settings();
        return c.withSettings(st.withGodebug(st.godebug().with("psyscall=" + (psyscall ? 1 : 0))));
    }

    /** {@link #config(int)} with the network poller {@code poller} ({@code epoll} or {@code selector}). */
    static Config config(int procs, String poller) {
        Config c = config(procs);
        return c.withSettings(c.settings().withNetpoll(poller));
    }
}
