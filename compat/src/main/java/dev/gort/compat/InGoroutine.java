package dev.gort.compat;

import dev.gort.Go;
import dev.gort.runtime.Scheduler;
import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.extension.DynamicTestInvocationContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;

/**
 * A JUnit Jupiter extension that runs every test body in a goroutine of the {@link GoroutineHost}'s
 * runtime: {@code @Test} methods, each invocation of a {@code @ParameterizedTest} or
 * {@code @RepeatedTest} (test templates), {@code @TestFactory} methods and each dynamic test they
 * return. The JUnit thread waits for the goroutine and rethrows what the body threw, so JUnit reports
 * it as usual. Lifecycle methods ({@code @BeforeEach}, {@code @BeforeAll}, ...) and other extensions'
 * callbacks stay on the JUnit thread, as they are in a plain run.
 *
 * <p>Registered through {@code META-INF/services/org.junit.jupiter.api.extension.Extension}, so it
 * applies to a library's unmodified test classes when the launcher is asked for
 * {@code junit.jupiter.extensions.autodetection.enabled=true}. With {@code -Dgort.compat.mode=plain}
 * it passes every body through on the JUnit thread (the baseline run, with the same extensions
 * loaded).
 *
 * <p>Hang guard: a body that has not finished after {@code -Dgort.compat.hang=S} seconds (1200: generous, the machine may be loaded)
 * fails its test with the runtime's goroutine dump on stderr; the run goes on with the next test.
 */
public final class InGoroutine implements InvocationInterceptor {
    /** Immutable: false in the baseline run ({@code -Dgort.compat.mode=plain}). */
    static final boolean ON = !"plain".equals(System.getProperty("gort.compat.mode"));
    /** Immutable: the hang guard's bound, in seconds. */
    static final long HANG_S = Long.getLong("gort.compat.hang", 1200);

    /** Bodies handed to a goroutine, and those that saw themselves on one (Go.goid() != 0). */
    public static final AtomicLong bodies = new AtomicLong(), onGoroutine = new AtomicLong();
    /** Bodies the hang guard gave up on. */
    public static final AtomicLong hung = new AtomicLong();

    @Override
    public void interceptTestMethod(
            Invocation<Void> invocation, ReflectiveInvocationContext<Method> ic, ExtensionContext ec) throws Throwable {
        inGoroutine(invocation, ec);
    }

    @Override
    public void interceptTestTemplateMethod(
            Invocation<Void> invocation, ReflectiveInvocationContext<Method> ic, ExtensionContext ec) throws Throwable {
        inGoroutine(invocation, ec);
    }

    @Override
    public <T> T interceptTestFactoryMethod(
            Invocation<T> invocation, ReflectiveInvocationContext<Method> ic, ExtensionContext ec) throws Throwable {
        return inGoroutine(invocation, ec);
    }

    @Override
    public void interceptDynamicTest(Invocation<Void> invocation, DynamicTestInvocationContext ic, ExtensionContext ec)
            throws Throwable {
        inGoroutine(invocation, ec);
    }

    private static <T> T inGoroutine(Invocation<T> invocation, ExtensionContext ec) throws Throwable {
        if (!ON) {
            return invocation.proceed();
        }
        GoroutineHost host = GoroutineHost.get();
        Body<T> body = new Body<>(invocation);
        bodies.incrementAndGet();
        host.go(body);
        if (!body.done.await(HANG_S, TimeUnit.SECONDS)) {
            hung.incrementAndGet();
            Scheduler s = host.scheduler();
            System.err.println("compat: " + ec.getUniqueId() + ": the body's goroutine has not finished after " + HANG_S
                    + " s; goroutine dump:");
            s.dumpGoroutines(System.err);
            throw new AssertionError("gort compat: test body still running in its goroutine after " + HANG_S
                    + " s (a hang under gort; goroutine dump on stderr)");
        }
        if (body.failure != null) {
            throw body.failure;
        }
        return body.result;
    }

    /** One test body as a goroutine's function; its result crosses to the JUnit thread through {@link #done}. */
    private static final class Body<T> implements Runnable {
        final Invocation<T> invocation;
        final CountDownLatch done = new CountDownLatch(1);
        /** Written by the goroutine before done.countDown(), read by the JUnit thread after await. */
        T result;
        /** Same as result. */
        Throwable failure;

        Body(Invocation<T> invocation) {
            this.invocation = invocation;
        }

        @Override
        public void run() {
            try {
                if (Go.goid() != 0) {
                    onGoroutine.incrementAndGet();
                }
                result = invocation.proceed();
            } catch (Throwable t) {
                failure = t; // the test's failure, reported by JUnit; never a goroutine panic
            } finally {
                done.countDown();
            }
        }
    }
}
