package dev.gort.sync;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.PanicError;
import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go 1.21's sync.OnceFunc, OnceValue and OnceValues (oncefunc_test.go): f runs once, a panic is
 * re-raised with the same value on every call, a Goexit does not run f twice, the first panic's
 * stack reaches into f, and f is not kept alive after its call. (Go's allocation counts have no Java
 * counterpart; {@code panic(nil)} neither: Java cannot throw null.)
 */
class OnceFuncTest {
    static final class Boom extends RuntimeException {
        Boom(String m) {
            super(m);
        }
    }

    /** Go: TestOnceFunc. Ten calls, one call of f. */
    @Test
    void onceFuncCallsFOnce() {
        GortTesting.run(1, () -> {
            int[] calls = {0};
            Runnable f = Once.onceFunc(() -> calls[0]++);
            for (int i = 0; i < 10; i++) {
                f.run();
            }
            check(calls[0] == 1, "want calls==1, got %d", calls[0]);
        });
    }

    /** Go: TestOnceValue. Every call returns f's one result. */
    @Test
    void onceValueReturnsTheFirstResult() {
        GortTesting.run(1, () -> {
            int[] calls = {0};
            Supplier<Integer> f = Once.onceValue(() -> ++calls[0]);
            for (int i = 0; i < 10; i++) {
                check(f.get() == 1, "want value==1");
            }
            check(calls[0] == 1, "want calls==1, got %d", calls[0]);
        });
    }

    /** Go: TestOnceValues. Both results, from one call. */
    @Test
    void onceValuesReturnsBothResults() {
        GortTesting.run(1, () -> {
            int[] calls = {0};
            Supplier<Once.Values<Integer, Integer>> f = Once.onceValues(() -> {
                calls[0]++;
                return new Once.Values<>(calls[0], calls[0] + 1);
            });
            f.get();
            Once.Values<Integer, Integer> v = f.get();
            check(calls[0] == 1, "want calls==1, got %d", calls[0]);
            check(v.v1() == 1 && v.v2() == 2, "want v1==1 and v2==2, got %s", v);
        });
    }

    /**
     * Go: TestOnceFuncPanic, TestOnceValuePanic, TestOnceValuesPanic (testOncePanicX). The first and
     * the second call both throw, the same throwable; f ran once.
     */
    @ParameterizedTest
    @ValueSource(strings = {"onceFunc", "onceValue", "onceValues"})
    void aPanicIsReraisedWithTheSameValueOnEveryCall(String kind) {
        GortTesting.run(1, () -> {
            int[] calls = {0};
            Boom x = new Boom("x");
            Runnable f = wrap(kind, () -> {
                calls[0]++;
                throw x;
            });
            for (String label : new String[] {"first time", "second time"}) {
                Boom p = assertThrows(Boom.class, f::run, label + ": f did not panic");
                assertSame(x, p, label + ": want panic x");
            }
            check(calls[0] == 1, "want calls==1, got %d", calls[0]);
        });
    }

    /** A checked exception thrown sneakily is a panic value like any other: re-thrown as it is. */
    @Test
    void aCheckedThrowableIsReraisedAsItIs() {
        GortTesting.run(1, () -> {
            Exception x = new java.io.IOException("x");
            Runnable f = Once.onceFunc(() -> OnceFuncTest.<RuntimeException>sneaky(x));
            for (int i = 0; i < 2; i++) {
                Throwable p = assertThrows(java.io.IOException.class, f::run);
                assertSame(x, p);
            }
        });
    }

    /**
     * Go: TestOnceFuncGoexit. If f calls Goexit the results are unspecified, but f is not called
     * twice; here the later call panics as Go's {@code panic(nil)} does (a PanicNilError).
     */
    @Test
    void aGoexitDoesNotRunFTwice() {
        GortTesting.run(2, () -> {
            int[] calls = {0};
            Runnable f = Once.onceFunc(() -> {
                calls[0]++;
                Go.goexit();
            });
            Chan<String> out = Chan.make(2);
            for (int i = 0; i < 2; i++) {
                WaitGroup wg = new WaitGroup();
                wg.add(1);
                Go.go(() -> {
                    try {
                        f.run();
                        out.send("returned");
                    } catch (PanicError p) {
                        out.send("panic: " + p.getMessage()); // Go's defer func() { recover() }()
                    } finally {
                        wg.done();
                    }
                });
                wg.await();
            }
            check(calls[0] == 1, "want calls==1, got %d", calls[0]);
            check(out.len() == 1, "the goroutine that ran f ended by Goexit: %d sends", out.len());
            String second = out.recv();
            check(second.equals("panic: panic called with nil argument"), "second call: %s", second);
        });
    }

    /** Go: TestOnceFuncPanicTraceback. The first call's panic has f's own frame in its stack. */
    @Test
    void theFirstPanicsStackReachesIntoF() {
        GortTesting.run(1, () -> {
            Runnable f = Once.onceFunc(OnceFuncTest::onceFuncPanic);
            Boom p = assertThrows(Boom.class, f::run);
            assertTrue(
                    Arrays.stream(p.getStackTrace())
                            .anyMatch(e -> e.getMethodName().equals("onceFuncPanic")),
                    "want a stack containing onceFuncPanic, got " + Arrays.toString(p.getStackTrace()));
        });
    }

    static void onceFuncPanic() {
        throw new Boom("x");
    }

    /**
     * Go: TestOnceXGC. What f holds stays alive until the first call (a strongly reachable object is
     * never collected, so a GC cannot clear it), and can be collected after it, whether f returned
     * or panicked. Java's System.gc() is a request: the test retries it a bounded number of times.
     */
    @Test
    void theWrappedFunctionIsNotKeptAliveAfterItsCall() {
        Map<String, Function<byte[], Runnable>> fns = new LinkedHashMap<>();
        fns.put("onceFunc", buf -> Once.onceFunc(() -> buf[0] = 1));
        fns.put("onceValue", buf -> {
            Supplier<Object> f = Once.onceValue(() -> {
                buf[0] = 1;
                return null;
            });
            return f::get;
        });
        fns.put("onceValues", buf -> {
            Supplier<Once.Values<Object, Object>> f = Once.onceValues(() -> {
                buf[0] = 1;
                return new Once.Values<>(null, null);
            });
            return f::get;
        });
        fns.put(
                "onceFunc panic",
                buf -> Once.onceFunc(() -> {
                    buf[0] = 1;
                    throw new Boom("test panic");
                }));
        fns.put("onceValue panic", buf -> {
            Supplier<Object> f = Once.onceValue(() -> {
                buf[0] = 1;
                throw new Boom("test panic");
            });
            return f::get;
        });
        GortTesting.run(1, () -> {
            for (Map.Entry<String, Function<byte[], Runnable>> e : fns.entrySet()) {
                byte[] buf = new byte[1024];
                WeakReference<byte[]> ref = new WeakReference<>(buf);
                Runnable f = e.getValue().apply(buf);
                buf = null;
                System.gc();
                check(!ref.refersTo(null), "%s: wrapped function garbage collected too early", e.getKey());
                callRecovering(f);
                for (int i = 0; i < 100 && !ref.refersTo(null); i++) {
                    System.gc();
                }
                check(
                        ref.refersTo(null),
                        "%s: wrapped function should be garbage collected, but still live",
                        e.getKey());
                callRecovering(f);
            }
        });
    }

    /**
     * Many goroutines call at once: f runs once, and no caller returns before f has returned (the
     * value is f's, never a default).
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void concurrentCallersAllWaitForTheOneCall(int procs) {
        GortTesting.run(procs, () -> {
            int[] calls = {0};
            Supplier<String> f = Once.onceValue(() -> {
                calls[0]++;
                Go.gosched(); // let the other callers arrive while f runs
                return "v";
            });
            int n = 16;
            Chan<String> got = Chan.make(n);
            for (int i = 0; i < n; i++) {
                Go.go(() -> got.send(f.get()));
            }
            for (int i = 0; i < n; i++) {
                assertEquals("v", got.recv());
            }
            check(calls[0] == 1, "want calls==1, got %d", calls[0]);
        });
    }

    private static void callRecovering(Runnable f) {
        try {
            f.run();
        } catch (Boom ignored) {
            // Go: defer func() { recover() }()
        }
    }

    private static Runnable wrap(String kind, Runnable body) {
        return switch (kind) {
            case "onceFunc" -> Once.onceFunc(body);
            case "onceValue" -> {
                Supplier<Integer> f = Once.onceValue(() -> {
                    body.run();
                    return 0;
                });
                yield f::get;
            }
            case "onceValues" -> {
                Supplier<Once.Values<Integer, Integer>> f = Once.onceValues(() -> {
                    body.run();
                    return new Once.Values<>(0, 0);
                });
                yield f::get;
            }
            default -> throw new IllegalArgumentException(kind);
        };
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> void sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
