package dev.gort.runtime;

/** Test configuration; the goroutine semaphore is {@link GoSema}. */
final class TestSupport {
    private TestSupport() {}

    static Config config(int procs) {
        return Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }
}
