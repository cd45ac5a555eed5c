package dev.gort;

import dev.gort.internal.ThreadParker;
import java.util.ArrayDeque;
import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * Linearizability of the channel's non-blocking core (lincheck data-structure mode, model
 * checking): trySend, tryRecv, close and len of a cap-1 channel against a sequential bounded FIFO
 * with a closed flag and Go's rules (receive after close drains, then reports closed; send and
 * close after close panic). Covers the lock-free "would block" fast paths, which read closed and
 * the buffer count without the lock.
 */
@Param(name = "v", gen = IntGen.class, conf = "1:3")
public class ChanNonBlockingLincheckTest {
    static final int CAP = 1;
    private final Chan<Integer> c = Chan.make(CAP, ThreadParker.INSTANCE);

    @Operation
    public boolean trySend(@Param(name = "v") int v) {
        return c.trySend(v);
    }

    @Operation
    public String tryRecv() {
        Chan.Received<Integer> r = c.tryRecv();
        return r == null ? "would block" : r.ok() ? "got " + r.value() : "closed";
    }

    @Operation
    public void close() {
        c.close();
    }

    @Operation
    public int len() {
        return c.len();
    }

    /** The sequential specification: Go's buffered channel without blocking. */
    public static final class Spec {
        private final ArrayDeque<Integer> q = new ArrayDeque<>();
        private boolean closed;

        public boolean trySend(int v) {
            if (closed) {
                throw new PanicError("send on closed channel");
            }
            if (q.size() == CAP) {
                return false;
            }
            q.add(v);
            return true;
        }

        public String tryRecv() {
            if (!q.isEmpty()) {
                return "got " + q.poll();
            }
            return closed ? "closed" : "would block";
        }

        public void close() {
            if (closed) {
                throw new PanicError("close of closed channel");
            }
            closed = true;
        }

        public int len() {
            return q.size();
        }
    }

    @Test
    void modelCheck() {
        LinChecker.check(
                ChanNonBlockingLincheckTest.class,
                new ModelCheckingOptions()
                        .iterations(Integer.getInteger("gort.lincheck.iterations", 20))
                        .invocationsPerIteration(500)
                        .threads(2)
                        .actorsPerThread(3)
                        .actorsBefore(1)
                        .actorsAfter(1)
                        .sequentialSpecification(Spec.class));
    }
}
