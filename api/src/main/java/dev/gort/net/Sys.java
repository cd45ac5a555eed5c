package dev.gort.net;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The JDK channel calls of dev.gort.net, each run in a frame of its own that the JIT cannot inline
 * into the goroutine's code.
 *
 * <p>Why: the JDK's socket channels guard reads and writes with {@code ReentrantLock}s, which
 * record {@code Thread.currentThread()} as their owner. C2 may compute the current thread once
 * for a compiled method and reuse it after a continuation yield, when the goroutine runs on
 * another carrier (runtime/HACKING.md, "Never call Thread.currentThread() from goroutine code").
 * Inlined into {@code Conn.read}'s loop, which parks between attempts, the channel's
 * {@code lock()} and {@code unlock()} then saw different threads
 * ({@code IllegalMonitorStateException} in {@code SocketChannelImpl.implRead}, seen under the
 * random-traffic stress test). Called through a method handle held in a non-final field (as
 * {@code M.current()}'s fallback does), the call is compiled apart and reads the thread afresh
 * every time. The hot calls (read, write) have exact handles and allocate nothing; the others take
 * a lambda.
 */
final class Sys {
    private Sys() {}

    @FunctionalInterface
    interface Call<T> {
        T call() throws IOException;
    }

    @FunctionalInterface
    interface Run {
        void run() throws IOException;
    }

    // Deliberately not final (see the class comment). Written once in the static initializer.
    @SuppressWarnings("FieldMayBeFinal")
    private static MethodHandle READ;

    @SuppressWarnings("FieldMayBeFinal")
    private static MethodHandle WRITE;

    @SuppressWarnings("FieldMayBeFinal")
    private static MethodHandle CALL;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            MethodType io = MethodType.methodType(int.class, SocketChannel.class, ByteBuffer.class);
            READ = l.findStatic(Sys.class, "read0", io);
            WRITE = l.findStatic(Sys.class, "write0", io);
            CALL = l.findStatic(Sys.class, "call0", MethodType.methodType(Object.class, Call.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static int read(SocketChannel ch, ByteBuffer bb) throws IOException {
        try {
            return (int) READ.invokeExact(ch, bb);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    static int write(SocketChannel ch, ByteBuffer bb) throws IOException {
        try {
            return (int) WRITE.invokeExact(ch, bb);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T call(Call<T> c) throws IOException {
        try {
            return (T) (Object) CALL.invokeExact(c);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    static void run(Run r) throws IOException {
        call(() -> {
            r.run();
            return null;
        });
    }

    private static int read0(SocketChannel ch, ByteBuffer bb) throws IOException {
        return ch.read(bb);
    }

    private static int write0(SocketChannel ch, ByteBuffer bb) throws IOException {
        return ch.write(bb);
    }

    private static Object call0(Call<?> c) throws IOException {
        return c.call();
    }
}
