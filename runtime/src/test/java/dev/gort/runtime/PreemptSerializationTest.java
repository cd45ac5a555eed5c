package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serial;
import java.io.Serializable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 12 (commons-lang3's EventListenerSupportTest.testSerialization under the agent): Java
 * serialization checks that {@code defaultWriteObject} runs on the thread that called the class's
 * {@code writeObject} (SerialCallbackContext), so a goroutine must not be preempted while a custom
 * {@code writeObject}/{@code readObject} runs: resumed on another carrier, its
 * {@code defaultWriteObject} throws {@code NotActiveException}. The preemption slow path refuses
 * there (LockFrames: the JDK frames that run the callback), as inside a JDK lock.
 */
@Timeout(60)
class PreemptSerializationTest {
    /**
     * A custom writeObject that polls (as instrumented code does) until sysmon's request was
     * answered by a yield or a refusal.
     */
    static final class Busy implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;

        int value = 42;
        transient Scheduler sched;
        transient long honouredBefore;
        transient long refusedBefore;
        transient Thread entered;
        transient Thread left;

        @Serial
        private void writeObject(ObjectOutputStream out) throws IOException {
            entered = Thread.currentThread();
            Preempt pr = sched.preempt;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); // wait-for-condition
            // Poll until sysmon asked this slice to stop and a poll answered: a yield (the bug) or
            // a refusal (the fix). A preemption in place (a slice 20 ms old under load) keeps the
            // thread: not an answer, the next request's is.
            while (pr.honoured.get() - pr.honouredInPlace.get() == honouredBefore
                    && pr.refusedJdkLock.get() == refusedBefore
                    && System.nanoTime() < deadline) {
                Poll.poll();
            }
            left = Thread.currentThread();
            out.defaultWriteObject();
        }
    }

    @Test
    void noPreemptionInsideACustomWriteObject() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        Busy b = new Busy();
        AtomicReference<Throwable> err = new AtomicReference<>();
        long[] honoured = new long[1];
        s.run(() -> {
            b.sched = s;
            b.honouredBefore = s.preempt.honoured.get() - s.preempt.honouredInPlace.get();
            b.refusedBefore = s.preempt.refusedJdkLock.get();
            try (ObjectOutputStream out = new ObjectOutputStream(new ByteArrayOutputStream())) {
                out.writeObject(b);
            } catch (Throwable t) {
                err.set(t);
            }
            honoured[0] = s.preempt.honoured.get() - s.preempt.honouredInPlace.get() - b.honouredBefore;
        });
        assertEquals(0, honoured[0], "preempted inside writeObject");
        assertTrue(s.preempt.refusedJdkLock.get() > b.refusedBefore, "no request was refused");
        assertSame(b.entered, b.left, "writeObject moved to another carrier");
        assertNull(err.get(), () -> "serialization failed: " + err.get());
    }
}
