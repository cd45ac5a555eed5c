package dev.gort.sync.errgroup;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.PanicError;
import dev.gort.Select;
import dev.gort.Syscall;
import dev.gort.context.Context;
import dev.gort.runtime.GoPanic;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * golang.org/x/sync's errgroup_test.go (TestZeroGroup, TestWithContext, TestTryGo, TestGoLimit,
 * TestCancelCause, the parallel and pipeline examples) and gort's mapping of {@code func() error}:
 * a thrown Exception is the error, a PanicError or an Error is a panic that ends the program.
 */
class GroupTest {
    /** Go: TestZeroGroup. After each Go, Wait returns the first error so far (the same object). */
    @Test
    void zeroGroup() {
        Exception err1 = new Exception("errgroup_test: 1");
        Exception err2 = new Exception("errgroup_test: 2");
        List<List<Exception>> cases = List.of(
                List.of(),
                Arrays.asList((Exception) null),
                List.of(err1),
                Arrays.asList(err1, null),
                Arrays.asList(err1, null, err2));
        GortTesting.run(2, () -> {
            for (List<Exception> errs : cases) {
                Group g = new Group();
                Exception firstErr = null;
                for (int i = 0; i < errs.size(); i++) {
                    Exception err = errs.get(i);
                    g.go(() -> fail(err));
                    if (firstErr == null && err != null) {
                        firstErr = err;
                    }
                    Exception gErr = g.await();
                    check(
                            gErr == firstErr,
                            "after Go for err in %s: Wait() = %s; want %s",
                            errs.subList(0, i + 1),
                            gErr,
                            firstErr);
                }
            }
        });
    }

    /** Go: TestWithContext. Wait returns the first error, and ctx is done once Wait has returned. */
    @Test
    void withContext() {
        Exception errDoom = new Exception("group_test: doomed");
        List<List<Exception>> errss =
                List.of(List.of(), Arrays.asList((Exception) null), List.of(errDoom), Arrays.asList(errDoom, null));
        List<Exception> wants = Arrays.asList(null, null, errDoom, errDoom);
        GortTesting.run(2, () -> {
            for (int k = 0; k < errss.size(); k++) {
                Group.WithContext gc = Group.withContext(Context.background());
                Group g = gc.group();
                for (Exception err : errss.get(k)) {
                    g.go(() -> fail(err));
                }
                Exception err = g.await();
                check(err == wants.get(k), "for err in %s: Wait() = %s; want %s", errss.get(k), err, wants.get(k));
                check(gc.ctx().done().tryRecv() != null, "for err in %s: ctx.Done() was not closed", errss.get(k));
            }
        });
    }

    /**
     * The derived context is canceled by the first failing task, before Wait: a task that waits for
     * ctx.Done() returns (without that cancel, it waited for ever: a deadlock).
     */
    @Test
    void theFirstErrorCancelsTheContextBeforeWait() {
        Exception errDoom = new Exception("doomed");
        GortTesting.run(1, () -> {
            Group.WithContext gc = Group.withContext(Context.background());
            Group g = gc.group();
            Context ctx = gc.ctx();
            g.go(() -> {
                ctx.done().recv();
                throw ctx.err(); // Go's return ctx.Err(): an unchecked exception is an error too
            });
            g.go(() -> fail(errDoom));
            check(g.await() == errDoom, "the first error is Wait's");
            check(Context.cause(ctx) == errDoom, "cause %s", Context.cause(ctx));
        });
    }

    /** Go: TestTryGo. TryGo fails at the limit, succeeds again after Wait; a limit of 0 blocks all. */
    @Test
    void tryGo() {
        GortTesting.run(2, () -> {
            Group g = new Group();
            int n = 42;
            g.setLimit(42);
            Chan<Boolean> ch = Chan.make();
            Group.Task fn = () -> ch.send(true);
            for (int i = 0; i < n; i++) {
                check(g.tryGo(fn), "TryGo should succeed but got fail at %d-th call.", i);
            }
            check(!g.tryGo(fn), "TryGo is expected to fail but succeeded.");
            Go.go(() -> {
                for (int i = 0; i < n; i++) {
                    ch.recv();
                }
            });
            g.await();

            check(g.tryGo(fn), "TryGo should success but got fail after all goroutines.");
            Go.go(ch::recv);
            g.await();

            // Switch limit.
            g.setLimit(1);
            check(g.tryGo(fn), "TryGo should success but got failed.");
            check(!g.tryGo(fn), "TryGo should fail but succeeded.");
            Go.go(ch::recv);
            g.await();

            // Block all calls.
            g.setLimit(0);
            for (int i = 0; i < 1 << 10; i++) {
                check(!g.tryGo(fn), "TryGo should fail but got succeeded.");
            }
            g.await();
        });
    }

    /**
     * Go: TestGoLimit. Never more than the limit active. (Go sleeps a microsecond to let others
     * increment; here Gosched.)
     */
    @Test
    void goLimit() {
        int limit = 10;
        GortTesting.run(4, () -> {
            Group g = new Group();
            g.setLimit(limit);
            AtomicInteger active = new AtomicInteger();
            AtomicInteger peak = new AtomicInteger();
            for (int i = 0; i <= 1 << 10; i++) {
                g.go(() -> {
                    int n = active.incrementAndGet();
                    peak.accumulateAndGet(n, Math::max);
                    if (n > limit) {
                        throw new Exception("saw " + n + " active goroutines; want ≤ " + limit);
                    }
                    Go.gosched(); // give other goroutines a chance to increment active
                    active.decrementAndGet();
                });
            }
            Exception err = g.await();
            check(err == null, "%s", err);
            check(peak.get() > 1, "tasks ran one at a time: peak %d", peak.get());
        });
    }

    /** Go: TestCancelCause. The context's cause is the first error, or Canceled when there was none. */
    @Test
    void cancelCause() {
        Exception errDoom = new Exception("group_test: doomed");
        List<List<Exception>> errss =
                List.of(List.of(), Arrays.asList((Exception) null), List.of(errDoom), Arrays.asList(errDoom, null));
        List<Exception> wants = Arrays.asList(null, null, errDoom, errDoom);
        GortTesting.run(2, () -> {
            for (int k = 0; k < errss.size(); k++) {
                Group.WithContext gc = Group.withContext(Context.background());
                Group g = gc.group();
                for (Exception err : errss.get(k)) {
                    g.tryGo(() -> fail(err));
                }
                Exception err = g.await();
                check(err == wants.get(k), "for err in %s: Wait() = %s; want %s", errss.get(k), err, wants.get(k));
                Throwable want = wants.get(k) == null ? Context.CANCELED : wants.get(k);
                Throwable cause = Context.cause(gc.ctx());
                check(cause == want, "for err in %s: context.Cause(ctx) = %s; want %s", errss.get(k), cause, want);
            }
        });
    }

    /** SetLimit while a goroutine is active panics with Go's message; after Wait it may change. */
    @Test
    void setLimitWhileGoroutinesAreActivePanics() {
        GortTesting.run(2, () -> {
            Group g = new Group();
            g.setLimit(2);
            Chan<Boolean> release = Chan.make();
            g.go(release::recv);
            PanicError p = assertThrows(PanicError.class, () -> g.setLimit(3));
            assertEquals("errgroup: modify limit while 1 goroutines in the group are still active", p.getMessage());
            release.send(true);
            check(g.await() == null, "no error");
            g.setLimit(3); // none active
            g.setLimit(-1); // no limit
        });
    }

    /** A thrown unchecked exception is the task's error, as a checked one: Wait returns it. */
    @Test
    void anUncheckedExceptionIsAnError() {
        IllegalStateException boom = new IllegalStateException("boom");
        GortTesting.run(1, () -> {
            Group.WithContext gc = Group.withContext(Context.background());
            gc.group().go(() -> {
                throw boom;
            });
            check(gc.group().await() == boom, "Wait returns the thrown RuntimeException");
            check(Context.cause(gc.ctx()) == boom, "and it is the cause");
        });
    }

    /**
     * A PanicError is a panic, not an error (the current errgroup does not carry panics to Wait):
     * it ends the program, and Wait does not return it.
     */
    @Test
    void aPanicEndsTheProgramAndIsNotWaitsError() {
        PanicError boom = new PanicError("boom in errgroup");
        AtomicBoolean waitReturnedIt = new AtomicBoolean();
        GoPanic p = assertThrows(
                GoPanic.class,
                () -> Go.run(GortTesting.config(1), () -> {
                    Group g = new Group();
                    g.go(() -> {
                        throw boom;
                    });
                    waitReturnedIt.set(g.await() == boom);
                    Select.block(); // the panic, not main's return, ends the program
                }));
        assertSame(boom, p.getCause());
        assertFalse(waitReturnedIt.get(), "Wait returned the panic as an error");
    }

    /** An Error (a failed assertion) is a panic too. */
    @Test
    void anErrorIsAPanic() {
        AssertionError boom = new AssertionError("assertion in errgroup");
        GoPanic p = assertThrows(
                GoPanic.class,
                () -> Go.run(GortTesting.config(1), () -> {
                    Group g = new Group();
                    g.go(() -> {
                        throw boom;
                    });
                    g.await();
                    Select.block();
                }));
        assertSame(boom, p.getCause());
    }

    /** A task that ends its goroutine with Goexit is done with no error (Go's deferred g.done()). */
    @Test
    void aGoexitIsDoneWithoutAnError() {
        GortTesting.run(1, () -> {
            Group g = new Group();
            g.setLimit(1);
            g.go(Go::goexit);
            check(g.await() == null, "no error");
            check(g.tryGo(() -> {}), "the goroutine's slot was freed");
            g.await();
        });
    }

    /** Outside a goroutine go throws as Go.go does and leaves the counter and the slot as they were. */
    @Test
    void outsideAGoroutineTheGroupIsLeftAsItWas() {
        Group g = new Group();
        g.setLimit(1);
        assertThrows(IllegalStateException.class, () -> g.go(() -> {}));
        assertThrows(IllegalStateException.class, () -> g.tryGo(() -> {}));
        g.setLimit(1); // no goroutine counted active: no panic
        GortTesting.run(1, () -> {
            g.go(() -> {});
            check(g.await() == null, "Wait returned"); // with the counter left at 1: a deadlock
        });
    }

    // ---- examples ------------------------------------------------------------------------------

    interface Search {
        String search(Context ctx, String query) throws Exception;
    }

    static Search fakeSearch(String kind) {
        return (ctx, query) -> kind + " result for \"" + query + "\"";
    }

    /** Go: ExampleGroup_parallel (the "Google Search 2.0" function, with a Context). */
    @Test
    void exampleParallel() {
        List<String> out = new ArrayList<>();
        GortTesting.run(2, () -> {
            Search[] searches = {fakeSearch("web"), fakeSearch("image"), fakeSearch("video")};
            String[] results = new String[searches.length];
            Group.WithContext gc = Group.withContext(Context.background());
            Group g = gc.group();
            for (int i = 0; i < searches.length; i++) {
                int j = i;
                g.go(() -> results[j] = searches[j].search(gc.ctx(), "golang"));
            }
            Exception err = g.await();
            check(err == null, "%s", err);
            out.addAll(Arrays.asList(results));
        });
        assertEquals(
                List.of("web result for \"golang\"", "image result for \"golang\"", "video result for \"golang\""),
                out);
    }

    /** Go: ExampleGroup_pipeline's MD5All: a walker, 20 digesters and a collector, on a temp tree. */
    @Test
    void examplePipeline(@TempDir Path root) throws IOException, NoSuchAlgorithmException {
        Map<String, String> want = new TreeMap<>();
        for (int i = 0; i < 30; i++) {
            Path dir = Files.createDirectories(root.resolve("d" + (i % 4)));
            Path f = dir.resolve("f" + i);
            byte[] data = ("file " + i).getBytes(StandardCharsets.UTF_8);
            Files.write(f, data);
            want.put(
                    f.toString(),
                    HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(data)));
        }
        Map<String, String> got = new TreeMap<>();
        Exception[] err = new Exception[1];
        GortTesting.run(2, () -> {
            try {
                got.putAll(md5All(Context.background(), root));
            } catch (Exception e) {
                err[0] = e;
            }
        });
        assertNull(err[0]);
        assertEquals(want, got);

        // A walk that fails: MD5All returns its error, and every goroutine has finished.
        GortTesting.run(2, () -> {
            try {
                md5All(Context.background(), root.resolve("missing"));
            } catch (Exception e) {
                err[0] = e;
            }
        });
        assertInstanceOf(NoSuchFileException.class, err[0]);
    }

    record Result(String path, String sum) {}

    /** Go: errgroup_example_md5all_test.go MD5All. */
    static Map<String, String> md5All(Context parent, Path root) throws Exception {
        // ctx is canceled when g.await() returns: when md5All returns, even with an error, every
        // goroutine has finished.
        Group.WithContext gc = Group.withContext(parent);
        Group g = gc.group();
        Context ctx = gc.ctx();
        Chan<Path> paths = Chan.make();
        g.go(() -> {
            try (Stream<Path> walk = Syscall.block(() -> Files.walk(root))) {
                Iterator<Path> it = walk.iterator();
                while (Syscall.block(it::hasNext)) {
                    Path p = it.next();
                    if (!Files.isRegularFile(p)) {
                        continue;
                    }
                    boolean[] canceled = {false};
                    Select.select(Select.send(paths, p, () -> {}), Select.recv(ctx.done(), () -> canceled[0] = true));
                    if (canceled[0]) {
                        throw ctx.err();
                    }
                }
            } finally {
                paths.close();
            }
        });
        // A fixed number of goroutines read and digest files.
        Chan<Result> c = Chan.make();
        int numDigesters = 20;
        for (int i = 0; i < numDigesters; i++) {
            g.go(() -> {
                for (Path p : paths) {
                    byte[] data = Syscall.block(() -> Files.readAllBytes(p));
                    Result r = new Result(
                            p.toString(),
                            HexFormat.of()
                                    .formatHex(MessageDigest.getInstance("MD5").digest(data)));
                    boolean[] canceled = {false};
                    Select.select(Select.send(c, r, () -> {}), Select.recv(ctx.done(), () -> canceled[0] = true));
                    if (canceled[0]) {
                        throw ctx.err();
                    }
                }
            });
        }
        Go.go(() -> {
            g.await();
            c.close();
        });
        Map<String, String> m = new TreeMap<>();
        for (Result r : c) {
            m.put(r.path(), r.sum());
        }
        // Check whether any goroutine failed: g accumulates the errors.
        Exception err = g.await();
        if (err != null) {
            throw err;
        }
        return m;
    }

    private static void fail(Exception err) throws Exception {
        if (err != null) {
            throw err;
        }
    }
}
