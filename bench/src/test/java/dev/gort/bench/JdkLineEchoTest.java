package dev.gort.bench;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The by-hand benchmark {@link JdkLineEcho} without JMH (no fork, no agent: gort's readers then
 * read in their syscalls): each server echoes every line of every client (a bad echo fails the
 * client's rounds, and the invocation with it), and the trial tears down.
 */
class JdkLineEchoTest {
    @ParameterizedTest
    @ValueSource(strings = {"gort", "vthread", "platform"})
    @Timeout(60)
    void eachServerEchoesEveryLineOfEveryClient(String impl) throws Exception {
        JdkLineEcho b = new JdkLineEcho();
        b.impl = impl;
        b.procs = 1;
        String parallelism = System.getProperty("jdk.virtualThreadScheduler.parallelism"); // vthread sets it
        b.setup();
        try {
            b.roundTrips();
            b.roundTrips();
        } finally {
            b.tearDown();
            if (parallelism == null) {
                System.clearProperty("jdk.virtualThreadScheduler.parallelism");
            } else {
                System.setProperty("jdk.virtualThreadScheduler.parallelism", parallelism);
            }
        }
    }

    /** impl=go without its binary says what it needs instead of timing nothing. */
    @Test
    void goWithoutItsBinaryIsRefused() {
        JdkLineEcho b = new JdkLineEcho();
        b.impl = "go";
        b.procs = 1;
        String before = System.clearProperty("bench.goecho");
        try {
            assertThrows(IllegalStateException.class, b::setup);
        } finally {
            if (before != null) {
                System.setProperty("bench.goecho", before);
            }
        }
    }
}
