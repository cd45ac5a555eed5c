package dev.gort.agent;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gort.runtime.Bubble;
import dev.gort.runtime.G;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.M;
import dev.gort.runtime.Netpoll;
import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.SyscallStats;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.Reader;
import java.io.SequenceInputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.CharsetDecoder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.Inflater;
import java.util.zip.InflaterInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * JDK calls that block their thread, in instrumented code ({@code dev.gort.agent.work.Blockers},
 * loaded by {@link InstrumentingLoader}): a known blocking call is a syscall for its goroutine
 * ({@code Poll.blockingEnter}/{@code blockingExit}), as Go's syscall wrappers enter one, so sysmon
 * retakes its P at its next tick instead of finding the carrier blocked two ticks in a row;
 * {@code Thread.sleep} parks the goroutine where it may yield; {@code Thread.yield} holding a
 * monitor yields in place.
 */
class BlockingCallsTest {
    private static Method method(String name, Class<?>... params) throws Exception {
        return AgentPreemptionTest.method(PreemptStrategy.BACKEDGE, "Blockers", name, params);
    }

    private static Object call(Method m, Object... args) {
        return AgentPreemptionTest.call(m, null, args);
    }

    /**
     * Runs {@code bodies} as goroutines on a fresh one-P scheduler, in that order of creation; what
     * a body throws, or the run itself (a fatal error), goes to {@code failure}.
     */
    static Scheduler runAll(AtomicReference<Throwable> failure, Runnable... bodies) {
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        try {
            s.run(() -> {
                Scheduler rt = Scheduler.current();
                GoSema done = new GoSema(0);
                for (Runnable b : bodies) {
                    rt.newproc(() -> {
                        try {
                            b.run();
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        } finally {
                            done.release();
                        }
                    });
                }
                for (int i = 0; i < bodies.length; i++) {
                    done.acquire();
                }
            });
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
        return s;
    }

    /**
     * At GOMAXPROCS=1 a goroutine takes from an empty {@code SynchronousQueue}: its carrier blocks
     * in the JDK. The call is a syscall: sysmon retakes the P through its syscall branch (Go's
     * retake of a P whose G is in a syscall), and the goroutine queued behind it gets the P and
     * puts. Unhooked, sysmon had to find the carrier blocked at two ticks in a row
     * ({@code blockedRetakes}).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aJdkBlockingCallIsASyscallThatSysmonRetakes() throws Exception {
        Method take = method("takeSynchronous", SynchronousQueue.class);
        Method put = method("putSynchronous", SynchronousQueue.class, Object.class);
        SynchronousQueue<Object> q = new SynchronousQueue<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Object> got = new AtomicReference<>();
        // Created last, the taker is in runnext and runs first; the putter waits in the run queue.
        Scheduler s = runAll(failure, () -> call(put, q, "x"), () -> got.set(call(take, q)));
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertEquals("x", got.get());
        assertTrue(st.retakes() >= 1, () -> "no syscall retake: " + st);
        assertEquals(0, st.blockedRetakes(), () -> "sysmon had to find the carrier blocked: " + st);
    }

    /**
     * What a {@link #readBeforeWrite} run's reader got, the run's syscall counts, and how many
     * times a goroutine waited in the netpoller for a JDK socket to read.
     */
    record SocketRun(Object got, SyscallStats.Snapshot st, long netpollWaits) {}

    /**
     * A loopback socket pair at GOMAXPROCS=1: a reader goroutine reads the client's side through
     * {@code reader} (created last, it is in runnext and runs first, so its read waits), and a
     * writer goroutine queued behind it writes {@code payload} to the server's side. The client's
     * reads time out after 30 s, so that a P never handed off fails the test instead of hanging it.
     * A goroutine's failure fails the test.
     */
    static SocketRun readBeforeWrite(byte[] payload, java.util.function.Function<InputStream, Object> reader)
            throws IOException {
        return readBeforeWrite(payload, reader, false);
    }

    /**
     * {@link #readBeforeWrite}, its writer writing only once the reader waits in the netpoller for
     * the socket (a reader that never waits blocks in its read until the 30 s timeout, which fails
     * the test; the writer then gives up waiting, so the run ends). Without that, the
     * writer could write before the reader's wait began: the look whether anything is buffered
     * ({@code ready()}, {@code available()}) is a syscall section, and where it lasts past
     * sysmon's tick (a cold first call, a loaded machine) sysmon hands the P to the writer, whose
     * payload the look then finds, so the reader reads without waiting (seen once in CI: no wait,
     * one retake, two syscall exits).
     */
    static SocketRun readWhenWaiting(byte[] payload, java.util.function.Function<InputStream, Object> reader)
            throws IOException {
        return readBeforeWrite(payload, reader, true);
    }

    private static SocketRun readBeforeWrite(
            byte[] payload, java.util.function.Function<InputStream, Object> reader, boolean whenWaiting)
            throws IOException {
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Socket client = new Socket(ss.getInetAddress(), ss.getLocalPort());
                Socket server = ss.accept()) {
            client.setSoTimeout(30_000);
            InputStream in = client.getInputStream();
            AtomicReference<Object> got = new AtomicReference<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean readerDone = new AtomicBoolean();
            Scheduler s = runAll(
                    failure,
                    () -> {
                        if (whenWaiting) {
                            awaitSocketWaits(1, readerDone::get);
                        }
                        try {
                            server.getOutputStream().write(payload);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    },
                    () -> {
                        try {
                            got.set(reader.apply(in));
                        } finally {
                            readerDone.set(true);
                        }
                    });
            SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            return new SocketRun(got.get(), st, Netpoll.of(s).jdkSocketWaits.get());
        }
    }

    /**
     * A read of a {@code Socket}'s stream (typed {@code InputStream} at the call site, as libraries
     * hold it) that would block waits in the netpoller, as Go's reads do: the goroutine parks
     * ({@code Poll.streamRead}'s wait) and its P runs others, where it used to wait in native code
     * (which the JVM reports as RUNNABLE: sysmon found such a carrier only past the goroutine's
     * time slice, by asking the kernel) and later in a syscall (the P handed off at sysmon's next
     * tick, a thread per blocked reader). At GOMAXPROCS=1 the goroutine queued behind the reader
     * writes what it waits for.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aSocketStreamsReadWaitsInTheNetpoller() throws Exception {
        Method read = method("read", InputStream.class, byte[].class);
        byte[] buf = new byte[16];
        SocketRun r = readWhenWaiting(new byte[] {'h', 'i'}, in -> call(read, in, buf));
        assertEquals(2, r.got());
        assertEquals('h', buf[0]);
        assertEquals(1, r.netpollWaits(), () -> "the reader did not wait in the netpoller: " + r.st());
        assertEquals(0, r.st().blockedRetakes(), () -> "sysmon had to find the carrier blocked: " + r.st());
        // Any other stream goes through the same call, unchanged.
        assertEquals(3, (int) call(read, new java.io.ByteArrayInputStream(new byte[] {1, 2, 3}), new byte[8]));
    }

    /** In a goroutine: yields until n goroutines of its runtime wait in the netpoller. */
    static void awaitNetpollWaiters(int n) {
        Netpoll np = Netpoll.of(Scheduler.current());
        while (np.netpollWaiters() < n) {
            Scheduler.gosched();
        }
    }

    /** A connected loopback pair, the server's side accepted. */
    record Pair(ServerSocket listener, Socket client, Socket server) implements AutoCloseable {
        static Pair open() throws IOException {
            ServerSocket ss = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
            Socket c = new Socket(ss.getInetAddress(), ss.getLocalPort());
            return new Pair(ss, c, ss.accept());
        }

        BufferedReader clientReader() throws IOException {
            return new BufferedReader(new InputStreamReader(client.getInputStream(), UTF_8));
        }

        @Override
        public void close() throws IOException {
            try (listener;
                    client;
                    server) {
                // closes all three
            }
        }
    }

    /**
     * A close of a JDK socket at an instrumented call site wakes the goroutine waiting in the
     * netpoller to read it, as a close wakes a thread blocked in the socket's read: its read fails
     * with the JDK's "Socket closed". The close may name the socket, the reader over its stream
     * or its output stream (each closes the socket), and may come from a goroutine or from a
     * thread that is none. GOMAXPROCS=1: the reader, created last, runs first and waits; the
     * closer closes once it waits in the netpoller.
     */
    @ParameterizedTest
    @ValueSource(strings = {"socket", "reader", "outputStream", "fromAThread"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aCloseWakesTheGoroutineWaitingToReadItsSocket(String what) throws Exception {
        Method readLine = method("readLineOrThrown", BufferedReader.class);
        Method close = method("close", java.io.Closeable.class);
        try (Pair p = Pair.open()) {
            BufferedReader in = p.clientReader();
            java.io.Closeable target = switch (what) {
                case "reader" -> in;
                case "outputStream" -> p.client().getOutputStream();
                default -> p.client();
            };
            AtomicReference<Object> got = new AtomicReference<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(
                    failure,
                    () -> {
                        awaitNetpollWaiters(1);
                        if (what.equals("fromAThread")) {
                            Thread t = new Thread(() -> call(close, target));
                            t.start();
                            try {
                                t.join();
                            } catch (InterruptedException e) {
                                throw new RuntimeException(e);
                            }
                        } else {
                            call(close, target);
                        }
                    },
                    () -> got.set(call(readLine, in)));
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertTrue(got.get() instanceof IOException, () -> "the read returned " + got.get());
            // The reader closed is closed itself (a thread blocked in its readLine would hold its
            // lock, and its close would wait for the read).
            assertEquals(
                    what.equals("reader") ? "Stream closed" : "Socket closed", ((Exception) got.get()).getMessage());
            Netpoll np = Netpoll.of(s);
            assertEquals(1, np.jdkSocketWaits.get(), "the reader did not wait in the netpoller");
            assertEquals(1, np.jdkSocketCloseWakes.get(), "the close hook did not wake the reader");
        }
    }

    /**
     * A read of nothing returns 0 at once, as the JDK's does (its socket read returns 0 for a
     * length of 0), and a read whose arguments the JDK rejects (a null array, a negative length
     * or offset, a range past the end) throws at once: neither waits in the netpoller for data
     * that may never come (the first versions waited; with the socket's timeout they threw "Read
     * timed out"). Plain reads, a buffered stream's and a reader's, on a socket with nothing to
     * read.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aReadOfNothingOrWithBadArgumentsDoesNotWaitInTheNetpoller() throws Exception {
        Method read = method("read", InputStream.class, byte[].class);
        Method readRange = method("readRange", InputStream.class, byte[].class, int.class, int.class);
        Method readBuffered = method("readBuffered", BufferedInputStream.class, byte[].class, int.class, int.class);
        Method readChars = method("readChars", BufferedReader.class, char[].class, int.class, int.class);
        try (Pair p = Pair.open()) {
            p.client().setSoTimeout(30_000);
            InputStream in = p.client().getInputStream();
            BufferedInputStream buffered = new BufferedInputStream(in);
            BufferedReader reader = p.clientReader();
            List<Object> got = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            java.util.function.Consumer<java.util.function.Supplier<Object>> attempt = r -> {
                try {
                    got.add(r.get());
                } catch (RuntimeException e) {
                    got.add(e.getCause() == null ? e : e.getCause());
                }
            };
            Scheduler s = runAll(failure, () -> {
                attempt.accept(() -> call(read, in, new byte[0]));
                attempt.accept(() -> call(readRange, in, new byte[4], 4, 0));
                attempt.accept(() -> call(readBuffered, buffered, new byte[4], 2, 0));
                attempt.accept(() -> call(readChars, reader, new char[4], 4, 0));
                attempt.accept(() -> call(readRange, in, null, 0, 4));
                attempt.accept(() -> call(readRange, in, new byte[4], 1, -3));
                attempt.accept(() -> call(readBuffered, buffered, null, 0, 4));
                attempt.accept(() -> call(readBuffered, buffered, new byte[4], 0, -1));
                attempt.accept(() -> call(readBuffered, buffered, new byte[4], 3, 2));
                attempt.accept(() -> call(readChars, reader, null, 0, 4));
                attempt.accept(() -> call(readChars, reader, new char[4], 0, -1));
            });
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals(List.of(0, 0, 0, 0), got.subList(0, 4));
            List<Class<?>> thrown = new ArrayList<>();
            for (Object o : got.subList(4, got.size())) {
                thrown.add(o.getClass());
            }
            assertEquals(
                    List.of(
                            NullPointerException.class,
                            IndexOutOfBoundsException.class,
                            NullPointerException.class,
                            IndexOutOfBoundsException.class,
                            IndexOutOfBoundsException.class,
                            NullPointerException.class,
                            IndexOutOfBoundsException.class),
                    thrown,
                    () -> "the bad reads got " + got.subList(4, got.size()));
            assertEquals(0, Netpoll.of(s).jdkSocketWaits.get(), "a read waited in the netpoller");
        }
    }

    /**
     * A socket read under a lock that a JDK frame holds for its carrier does not wait in the
     * netpoller: a {@code BufferedReader} over a user's stream that reads the socket holds the
     * reader's lock (a {@code ReentrantLock}, its owner the carrier thread) while the user's read
     * runs, and a goroutine parked there could go on on another carrier and unlock a lock it does
     * not own. Its read is a syscall, as before (the refusal rule of a sleep: a stack walk).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aSocketReadUnderAJdkFramesLockDoesNotWaitInTheNetpoller() throws Exception {
        Method readLine = workClass("StreamWrappers").getMethod("readLine", BufferedReader.class);
        java.util.function.UnaryOperator<InputStream> passThrough = userPassThrough();
        SocketRun r = readBeforeWrite(
                new byte[] {'h', 'i', '\n'},
                in -> call(readLine, new BufferedReader(new InputStreamReader(passThrough.apply(in), UTF_8))));
        assertEquals("hi", r.got());
        assertEquals(0, r.netpollWaits(), () -> "the read waited in the netpoller under the reader's lock");
        assertTrue(r.st().retakes() >= 1, () -> "no syscall retake: " + r.st());
    }

    /**
     * The look at the stack for JDK frames' locks before a socket wait runs once per invocation of
     * the method that reads, not once per wait: the frames below a live invocation do not change,
     * so a server's read loop looks once per connection. Two lines read in one invocation are two
     * waits and one look, through a wrapper's hook ({@code readLine}) and through a plain stream's
     * stand-in ({@code InputStream.read}) alike; a new invocation looks again. GOMAXPROCS=1: the
     * reader, created last, runs first; each line is written once the reader waits for it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"readLines", "readChunks"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theLockFrameLookBeforeASocketWaitRunsOncePerInvocation(String how) throws Exception {
        boolean lines = how.equals("readLines");
        Method read = lines ? method(how, BufferedReader.class, int.class) : method(how, InputStream.class, int.class);
        try (Pair p = Pair.open()) {
            Object from = lines ? p.clientReader() : p.client().getInputStream();
            java.io.OutputStream out = p.server().getOutputStream();
            List<Object> got = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(failure, writeWhenWaiting(out, 1, "one", "two", "three"), () -> {
                got.add(call(read, from, 2)); // one invocation, two waits
                got.add(call(read, from, 1)); // a new one
            });
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            List<?> want = lines
                    ? List.of(List.of("one", "two"), List.of("three"))
                    : List.of(List.of("one\n", "two\n"), List.of("three\n"));
            assertEquals(want, got);
            assertEquals(3, Netpoll.of(s).jdkSocketWaits.get(), "each line was not one wait");
            assertEquals(
                    2, Netpoll.of(s).jdkSocketFrameLooks.get(), "not one look at the stack per invocation that waited");
        }
    }

    /**
     * A clean look holds for its own invocation only: a read that waited in the netpoller from a
     * user's stream called directly, then the same method's read called again by a
     * {@code BufferedReader} (a new invocation, under the reader's lock, which its carrier owns),
     * is looked at again, and the second read does not wait in the netpoller: it is a syscall,
     * as every read under a JDK frame's lock is. GOMAXPROCS=1: the second line is written once
     * the reader has looked a second time (or, wrongly, waited a second time).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aCleanLookBeforeASocketWaitDoesNotExcuseANewInvocationUnderAJdkLock() throws Exception {
        Method readLine = workClass("StreamWrappers").getMethod("readLine", BufferedReader.class);
        try (Pair p = Pair.open()) {
            InputStream user = userPassThrough().apply(p.client().getInputStream());
            java.io.OutputStream out = p.server().getOutputStream();
            List<Object> got = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(
                    failure,
                    () -> {
                        try {
                            awaitSocketWaits(1);
                            out.write("one\n".getBytes(UTF_8));
                            Netpoll np = Netpoll.of(Scheduler.current());
                            while (np.jdkSocketFrameLooks.get() < 2 && np.jdkSocketWaits.get() < 2) {
                                Scheduler.gosched(); // runs while the reader's read holds its carrier
                            }
                            out.write("two\n".getBytes(UTF_8));
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    },
                    () -> {
                        try {
                            byte[] b = new byte[4];
                            got.add(new String(b, 0, user.read(b, 0, 4), UTF_8)); // waits in the netpoller
                            got.add(call(readLine, new BufferedReader(new InputStreamReader(user, UTF_8))));
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals(List.of("one\n", "two"), got);
            assertEquals(
                    1,
                    Netpoll.of(s).jdkSocketWaits.get(),
                    "the read under the BufferedReader's lock waited in the netpoller");
            assertEquals(2, Netpoll.of(s).jdkSocketFrameLooks.get(), "the new invocation was not looked at");
        }
    }

    /**
     * A maker of user streams ({@code StreamWrappers.UserPassThrough}, instrumented) that read the
     * stream given, its class loaded here, before any goroutine runs.
     */
    private static java.util.function.UnaryOperator<InputStream> userPassThrough() throws Exception {
        Constructor<?> c = workClass("StreamWrappers$UserPassThrough").getConstructor(InputStream.class);
        return in -> {
            try {
                return (InputStream) c.newInstance(in);
            } catch (ReflectiveOperationException e) {
                throw new RuntimeException(e);
            }
        };
    }

    /**
     * A runtime that ends while a goroutine waits to read a JDK socket forgets that wait: the
     * JVM-wide table of waits (which the close hook looks in) pins neither the socket nor the
     * ended runtime, and later closes of other sockets take no slow path for it.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aRuntimeThatEndsForgetsItsGoroutinesSocketWaits() throws Exception {
        Method readLine = method("readLineOrThrown", BufferedReader.class);
        Field f = Netpoll.class.getDeclaredField("JDK_SOCKET_WAITS");
        f.setAccessible(true);
        java.util.Map<?, ?> waits = (java.util.Map<?, ?>) f.get(null);
        try (Pair p = Pair.open()) {
            BufferedReader in = p.clientReader();
            AtomicBoolean waited = new AtomicBoolean();
            Scheduler s = AgentPreemptionTest.newScheduler(1);
            s.run(() -> {
                Scheduler rt = Scheduler.current();
                rt.newproc(() -> call(readLine, in));
                awaitNetpollWaiters(1);
                waited.set(waits.values().stream().anyMatch(pd -> isOf(pd, rt)));
            }); // main returns: the runtime ends with the reader still waiting
            assertTrue(waited.get(), "the reader did not wait in the netpoller");
            assertEquals(1, Netpoll.of(s).jdkSocketWaits.get());
            assertTrue(
                    waits.values().stream().noneMatch(pd -> isOf(pd, s)),
                    () -> "the ended runtime's wait is still in the table: " + waits);
        }
    }

    private static boolean isOf(Object pd, Scheduler s) {
        try {
            Field np = Netpoll.PollDesc.class.getDeclaredField("netpoll");
            np.setAccessible(true);
            return np.get(pd) == Netpoll.of(s);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * A close the hook does not see (made by code the agent did not instrument: here the test's
     * own) is seen by the runtime's next sweep of its waits, within a second: the waiting
     * goroutine does not wait forever on a descriptor that left the epoll set with its file.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aCloseTheHookDoesNotSeeEndsTheWaitAtTheNextSweep() throws Exception {
        Method readLine = method("readLineOrThrown", BufferedReader.class);
        try (Pair p = Pair.open()) {
            BufferedReader in = p.clientReader();
            AtomicReference<Object> got = new AtomicReference<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(
                    failure,
                    () -> {
                        awaitNetpollWaiters(1);
                        try {
                            p.client().close();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    },
                    () -> got.set(call(readLine, in)));
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertTrue(got.get() instanceof java.net.SocketException, () -> "the read returned " + got.get());
            Netpoll np = Netpoll.of(s);
            assertEquals(1, np.jdkSocketWaits.get(), "the reader did not wait in the netpoller");
            assertEquals(0, np.jdkSocketCloseWakes.get());
            assertEquals(1, np.jdkSocketSweepWakes.get(), "the sweep did not wake the reader");
        }
    }

    /**
     * A read with the socket's {@code SO_TIMEOUT} that waits in the netpoller fails as the JDK's
     * does ({@code SocketTimeoutException}, "Read timed out") once it passes, while the P runs
     * the other goroutines (GOMAXPROCS=1: the one queued behind the reader finishes first), and
     * the socket stays usable: the next read gets what the peer writes then.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aReadWaitingInTheNetpollerTimesOutAsTheJdksDoes() throws Exception {
        Method readLine = method("readLineOrThrown", BufferedReader.class);
        try (Pair p = Pair.open()) {
            p.client().setSoTimeout(200);
            BufferedReader in = p.clientReader();
            List<Object> events = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(failure, () -> events.add("other"), () -> events.add(call(readLine, in)));
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals(2, events.size(), () -> "events: " + events);
            assertEquals("other", events.get(0), () -> "the P did not run the other goroutine first: " + events);
            assertTrue(events.get(1) instanceof java.net.SocketTimeoutException, () -> "the read got " + events);
            assertEquals("Read timed out", ((Exception) events.get(1)).getMessage());
            assertEquals(1, Netpoll.of(s).jdkSocketWaits.get(), "the reader did not wait in the netpoller");
            p.server().getOutputStream().write("after\n".getBytes(UTF_8));
            AtomicReference<Object> again = new AtomicReference<>();
            runAll(failure, () -> again.set(call(readLine, in)));
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals("after", again.get());
        }
    }

    /**
     * After its event a wait's one-shot registration stays, disarmed, and the next wait on the
     * socket re-arms it ({@code EPOLL_CTL_MOD}, one {@code epoll_ctl} per wait, as the JDK's own
     * poller): two lines, each written once the reader waits for it, are two waits and one re-arm.
     * A wait that ended without its event (the socket's timeout) removed its registration, so the
     * next wait adds a new one. GOMAXPROCS=1: the reader, created last, runs first.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aWaitAfterItsEventLeavesTheRegistrationForTheNextWaitToReArm() throws Exception {
        Method readLine = method("readLineOrThrown", BufferedReader.class);
        try (Pair p = Pair.open()) {
            BufferedReader in = p.clientReader();
            java.io.OutputStream out = p.server().getOutputStream();
            List<Object> got = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(
                    failure,
                    writeWhenWaiting(out, 1, "one", "two"), // "two" once the reader took "one" and waits again
                    () -> {
                        got.add(call(readLine, in));
                        got.add(call(readLine, in));
                    });
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals(List.of("one", "two"), got);
            assertEquals(2, Netpoll.of(s).jdkSocketWaits.get(), "each line was not one wait");
            assertEquals(
                    1, Netpoll.of(s).jdkSocketRearms.get(), "the second wait did not re-arm the first's registration");
        }
        try (Pair p = Pair.open()) {
            p.client().setSoTimeout(200);
            BufferedReader in = p.clientReader();
            java.io.OutputStream out = p.server().getOutputStream();
            List<Object> got = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(failure, writeWhenWaiting(out, 2, "late"), () -> {
                got.add(call(readLine, in)); // times out: its registration is removed
                try {
                    p.client().setSoTimeout(30_000); // the second wait ends with its line
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                got.add(call(readLine, in));
            });
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals(2, got.size(), () -> "got " + got);
            assertTrue(got.get(0) instanceof java.net.SocketTimeoutException, () -> "the first read got " + got);
            assertEquals("late", got.get(1));
            assertEquals(2, Netpoll.of(s).jdkSocketWaits.get());
            assertEquals(
                    0, Netpoll.of(s).jdkSocketRearms.get(), "a wait re-armed a registration its timeout had removed");
        }
    }

    /**
     * A goroutine's body that writes {@code lines} to {@code out}, each once the reader began its
     * wait for it: the first once {@code firstWait} waits for a JDK socket have begun, the next
     * once one more has ({@link #awaitSocketWaits}).
     */
    static Runnable writeWhenWaiting(java.io.OutputStream out, long firstWait, String... lines) {
        return () -> {
            try {
                for (int i = 0; i < lines.length; i++) {
                    awaitSocketWaits(firstWait + i);
                    out.write((lines[i] + "\n").getBytes(UTF_8));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    /**
     * In a goroutine: yields until n waits for a JDK socket have begun in its runtime and one
     * goroutine waits in the netpoller now.
     */
    static void awaitSocketWaits(long n) {
        awaitSocketWaits(n, () -> false);
    }

    /** {@link #awaitSocketWaits(long)}, or until {@code giveUp} says the wait will not come. */
    static void awaitSocketWaits(long n, java.util.function.BooleanSupplier giveUp) {
        Netpoll np = Netpoll.of(Scheduler.current());
        while ((np.jdkSocketWaits.get() < n || np.netpollWaiters() < 1) && !giveUp.getAsBoolean()) {
            Scheduler.gosched();
        }
    }

    /**
     * Goroutines waiting to read idle JDK sockets hold no thread each: 64 of them wait at
     * GOMAXPROCS=1 with a handful of Ms (in a syscall, each blocked reader held one: an M per
     * connection, as thread-per-connection servers). When the peers close, every reader gets the
     * end of its stream.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void idleReadersWaitingInTheNetpollerHoldNoThreadEach() throws Exception {
        Method readLine = method("readLineOrThrown", BufferedReader.class);
        int n = 64;
        List<Pair> pairs = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                pairs.add(Pair.open());
            }
            List<BufferedReader> readers = new ArrayList<>();
            for (Pair p : pairs) {
                readers.add(p.clientReader());
            }
            java.util.concurrent.atomic.AtomicInteger ends = new java.util.concurrent.atomic.AtomicInteger();
            AtomicLong msWhileWaiting = new AtomicLong(-1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Runnable[] bodies = new Runnable[n + 1];
            bodies[0] = () -> {
                awaitNetpollWaiters(n);
                msWhileWaiting.set(Scheduler.current().mcountPublic());
                for (Pair p : pairs) {
                    try {
                        p.server().close();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            };
            for (int i = 0; i < n; i++) {
                BufferedReader in = readers.get(i);
                bodies[i + 1] = () -> {
                    if (call(readLine, in) == null) {
                        ends.incrementAndGet();
                    }
                };
            }
            Scheduler s = runAll(failure, bodies);
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals(n, ends.get(), "readers that got the end of their stream");
            assertTrue(
                    msWhileWaiting.get() > 0 && msWhileWaiting.get() <= 8,
                    () -> msWhileWaiting.get() + " Ms while " + n + " goroutines waited to read");
            assertTrue(Netpoll.of(s).jdkSocketWaits.get() >= n);
        } finally {
            for (Pair p : pairs) {
                p.close();
            }
        }
    }

    /**
     * A blocking call that throws (a timed {@code Future.get}'s {@code TimeoutException}) leaves
     * its syscall in the hook's handler: the goroutine is running again where it catches the
     * exception, not in a syscall until its next gort call.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aBlockingCallThatThrowsLeavesItsSyscall() throws Exception {
        Method m = method("statusAfterTimeout", CompletableFuture.class);
        AtomicInteger status = new AtomicInteger(-3);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        runAll(failure, () -> status.set((int) call(m, new CompletableFuture<>())));
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertEquals(G._Grunning, status.get(), "status after the catch (3: _Gsyscall)");
        assertEquals(-1, (int) call(m, new CompletableFuture<>()), "outside a goroutine: the plain call");
    }

    /**
     * {@code Thread.sleep} in a goroutine that may yield parks the goroutine: at GOMAXPROCS=1 the
     * goroutine queued behind it runs on the same carrier meanwhile, and no P is retaken (the
     * carrier never blocked).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadSleepParksTheGoroutineNotItsCarrier() throws Exception {
        Method sleep = method("sleep", long.class);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Thread> sleeperCarrier = new AtomicReference<>();
        AtomicReference<Thread> otherCarrier = new AtomicReference<>();
        AtomicLong slept = new AtomicLong();
        Scheduler s = runAll(failure, () -> otherCarrier.set(M.current().thread()), () -> {
            sleeperCarrier.set(M.current().thread());
            long t0 = System.nanoTime();
            call(sleep, 30L);
            slept.set(System.nanoTime() - t0);
        });
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertTrue(slept.get() >= 30_000_000L, () -> "slept " + slept.get() + " ns");
        assertEquals(sleeperCarrier.get(), otherCarrier.get(), "the other goroutine ran on another carrier");
        assertEquals(0, st.retakes() + st.blockedRetakes(), () -> "a P was retaken from a sleeping carrier: " + st);
    }

    /** The JDK's contract: argument checks, the interrupt status, a sleep of 0, negative durations. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadSleepKeepsTheJdksContract() throws Exception {
        Method ms = method("sleep", long.class);
        Method msNs = method("sleep", long.class, int.class);
        Method dur = method("sleep", Duration.class);
        Method unit = method("sleep", TimeUnit.class, long.class);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        runAll(failure, () -> {
            RuntimeException neg = assertThrows(RuntimeException.class, () -> call(ms, -1L));
            assertEquals("timeout value is negative", neg.getMessage());
            RuntimeException range = assertThrows(RuntimeException.class, () -> call(msNs, 0L, 1_000_000));
            assertEquals("nanosecond timeout value out of range", range.getMessage());
            Thread.currentThread().interrupt();
            RuntimeException wrapped = assertThrows(RuntimeException.class, () -> call(ms, 10L));
            assertTrue(wrapped.getCause() instanceof InterruptedException, () -> "not interrupted: " + wrapped);
            assertEquals("sleep interrupted", wrapped.getCause().getMessage());
            assertFalse(Thread.currentThread().isInterrupted(), "the interrupt status was not cleared");
            call(ms, 0L); // a yield
            call(dur, Duration.ofSeconds(-5)); // returns at once
            Thread.currentThread().interrupt();
            call(unit, TimeUnit.SECONDS, 0L); // TimeUnit.sleep(0) does not look at the status
            assertTrue(Thread.interrupted(), "TimeUnit.sleep(0) cleared the interrupt status");
            long t0 = System.nanoTime();
            call(unit, TimeUnit.MILLISECONDS, 5L);
            call(msNs, 0L, 500_000);
            call(dur, Duration.ofMillis(5));
            assertTrue(System.nanoTime() - t0 >= 10_500_000L, "the sleeps were short");
        });
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
    }

    /** Inside a synctest bubble a goroutine's {@code Thread.sleep} counts on the bubble's clock. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadSleepInABubbleSleepsOnTheBubblesClock() throws Exception {
        Method sleep = method("sleep", long.class);
        AtomicLong fake = new AtomicLong();
        AtomicReference<String> err = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long t0 = System.nanoTime();
        runAll(
                failure,
                () -> err.set(Bubble.run(() -> {
                    long start = Bubble.current().now();
                    call(sleep, 3_600_000L); // an hour
                    fake.set(Bubble.current().now() - start);
                })));
        long real = System.nanoTime() - t0;
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertNull(err.get());
        assertEquals(3_600_000_000_000L, fake.get(), "the bubble's clock did not move by the sleep");
        assertTrue(real < 60_000_000_000L, "slept in real time");
    }

    /**
     * Holding a monitor, a goroutine cannot leave its carrier: its {@code Thread.sleep} sleeps the
     * carrier, as a syscall (sysmon retakes the P through its syscall branch, and the goroutine
     * queued behind it runs), and it wakes on the same carrier still holding the monitor.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadSleepHoldingAMonitorIsASyscallOnItsCarrier() throws Exception {
        Method m = method("sleepLockedUntil", Object.class, AtomicBoolean.class);
        AtomicBoolean go = new AtomicBoolean();
        AtomicBoolean kept = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = runAll(failure, () -> go.set(true), () -> kept.set((boolean) call(m, new Object(), go)));
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertTrue(kept.get(), "it left its carrier or the monitor");
        assertTrue(st.retakes() >= 1, () -> "no syscall retake: " + st);
    }

    /**
     * Holding a monitor, a goroutine that waits with {@code Thread.yield()} for a goroutine queued
     * behind it yields in place: its P goes to that goroutine at once and it stays on its carrier.
     * Before, the carrier's own yield let nothing run on the P until sysmon preempted the holder
     * in place, a slice (20 ms) later.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadYieldHoldingAMonitorYieldsInPlace() throws Exception {
        Method m = method("yieldLockedUntil", Object.class, AtomicBoolean.class);
        AtomicBoolean go = new AtomicBoolean();
        AtomicInteger yields = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = runAll(failure, () -> go.set(true), () -> yields.set((int) call(m, new Object(), go)));
        PreemptStats ps = s.preempt.snapshot();
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertTrue(yields.get() >= 1, () -> "it left the monitor's carrier, or never yielded: " + yields.get());
        assertTrue(ps.threadYieldsInPlace() >= 1, () -> "no yield in place: " + ps);
    }

    /** A class of the agent's test work (a nested one too), loaded and instrumented under backedge. */
    private static Class<?> workClass(String name) throws Exception {
        return Class.forName(
                "dev.gort.agent.work." + name,
                true,
                new InstrumentingLoader("dev.gort.agent.work.", PreemptStrategy.BACKEDGE));
    }

    /** The syscalls a run's goroutines left (every exitsyscall path). */
    private static long syscallExits(SyscallStats.Snapshot st) {
        return st.fastOldP() + st.fastIdleP() + st.slowIdleP() + st.slowGlobal() + st.slowLocked() + st.slowInPlace();
    }

    /**
     * A read through the JDK's wrappers of a socket's stream ({@code BufferedReader} over an
     * {@code InputStreamReader}, {@code DataInputStream} over a {@code BufferedInputStream}, a
     * {@code BufferedInputStream} typed {@code InputStream}, a {@code readLine} in a constructor)
     * waits in native code, which the JVM reports as RUNNABLE: sysmon used to find such a carrier
     * only past the goroutine's time slice and only by asking the kernel ({@code blockedRetakes}).
     * With nothing buffered along the chain, the goroutine now waits in the netpoller
     * ({@code Poll.blockingEnterStreamRead}: the wrappers' chain ends at the socket's stream), then
     * reads in a syscall: at GOMAXPROCS=1 the goroutine queued behind the reader gets the P and
     * writes what the reader waits for.
     */
    @ParameterizedTest
    @ValueSource(strings = {"readLine", "readInt", "bufferedArrayRead", "readLineInAConstructor"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aReadThroughTheJdksWrappersOfASocketsStreamWaitsInTheNetpoller(String shape) throws Exception {
        Class<?> wrappers = workClass("StreamWrappers");
        Method readLine = wrappers.getMethod("readLine", BufferedReader.class);
        Method readInt = wrappers.getMethod("readInt", DataInputStream.class);
        Method read = method("read", InputStream.class, byte[].class);
        Constructor<?> holder = workClass("StreamWrappers$LineHolder").getConstructor(BufferedReader.class);
        byte[] payload = shape.equals("readInt") ? new byte[] {0, 0, 1, 2} : new byte[] {'h', 'i', '\n'};
        java.util.function.Function<InputStream, Object> reader = switch (shape) {
            case "readLine" -> in -> call(readLine, new BufferedReader(new InputStreamReader(in, UTF_8)));
            case "readInt" -> in -> call(readInt, new DataInputStream(new BufferedInputStream(in)));
            case "bufferedArrayRead" -> in -> call(read, new BufferedInputStream(in), new byte[2]);
            default ->
                in -> {
                    try {
                        Object h = holder.newInstance(new BufferedReader(new InputStreamReader(in, UTF_8)));
                        return h.getClass().getField("line").get(h);
                    } catch (ReflectiveOperationException e) {
                        throw new RuntimeException(e);
                    }
                };
        };
        SocketRun r = readWhenWaiting(payload, reader);
        assertEquals(
                switch (shape) {
                    case "readInt" -> 258;
                    case "bufferedArrayRead" -> 2;
                    default -> "hi";
                },
                r.got());
        assertEquals(1, r.netpollWaits(), () -> "the reader did not wait in the netpoller: " + r.st());
        assertEquals(0, r.st().blockedRetakes(), () -> "sysmon had to find the carrier blocked: " + r.st());
    }

    /**
     * A flush of a {@code BufferedOutputStream} over a socket's stream whose peer has not read yet
     * waits for room in the socket's buffers: a syscall, so at GOMAXPROCS=1 the reader queued
     * behind it gets the P through sysmon's syscall branch (its reads are array reads of the
     * socket's stream: syscalls too).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFlushOfABufferedSocketStreamIsASyscall() throws Exception {
        Method flush = workClass("StreamWrappers").getMethod("flush", OutputStream.class);
        Method read = method("read", InputStream.class, byte[].class);
        int size = 32 << 20; // more than loopback's socket buffers hold
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Socket client = new Socket(ss.getInetAddress(), ss.getLocalPort());
                Socket server = ss.accept()) {
            BufferedOutputStream out = new BufferedOutputStream(server.getOutputStream(), size + 1);
            out.write(new byte[size]); // fits the buffer (one as long is written at once): no write yet
            AtomicLong received = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(
                    failure,
                    () -> {
                        byte[] buf = new byte[1 << 16];
                        InputStream in;
                        try {
                            in = client.getInputStream();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                        long n = 0;
                        while (n < size) {
                            n += (int) call(read, in, buf);
                        }
                        received.set(n);
                    },
                    () -> call(flush, out));
            SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals(size, received.get());
            assertTrue(st.retakes() >= 1, () -> "no syscall retake: " + st);
            assertEquals(0, st.blockedRetakes(), () -> "sysmon had to find the carrier blocked: " + st);
        }
    }

    /**
     * A JDK wrapper over a stream that runs a user's code is no syscall: a {@code BufferedReader}
     * over a user's {@code Reader}, and an {@code InputStreamReader} over a pipe (a peer's stream)
     * with a user's charset decoder. That code sees its goroutine running, as it would unhooked
     * (inside a syscall it would run without a P once sysmon retook it, beyond GOMAXPROCS, never
     * preempted), and the goroutine leaves no syscall; with the JDK's decoder the same read over the
     * pipe is one.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aJdkWrapperOverAUsersCodeIsNoSyscall() throws Exception {
        Class<?> wrappers = workClass("StreamWrappers");
        Method readLine = wrappers.getMethod("readLine", BufferedReader.class);
        ClassLoader work = wrappers.getClassLoader();
        Reader user = (Reader) Class.forName("dev.gort.agent.work.StreamWrappers$UserReader", true, work)
                .getConstructor()
                .newInstance();
        CharsetDecoder decoder =
                (CharsetDecoder) Class.forName("dev.gort.agent.work.StreamWrappers$UserDecoder", true, work)
                        .getConstructor()
                        .newInstance();
        PipedOutputStream po = new PipedOutputStream();
        PipedInputStream pi = new PipedInputStream(po);
        po.write("pipe\n".getBytes(UTF_8));
        PipedOutputStream po2 = new PipedOutputStream();
        PipedInputStream pi2 = new PipedInputStream(po2);
        po2.write("jdk\n".getBytes(UTF_8));
        AtomicReference<Object> fromUser = new AtomicReference<>();
        AtomicReference<Object> fromDecoder = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = runAll(
                failure,
                () -> fromUser.set(call(readLine, new BufferedReader(user))),
                () -> fromDecoder.set(call(readLine, new BufferedReader(new InputStreamReader(pi, decoder)))));
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertEquals("user", fromUser.get());
        assertEquals("pipe", fromDecoder.get());
        assertEquals(
                G._Grunning, user.getClass().getField("statusInRead").get(user), "the user's reader ran in a syscall");
        assertEquals(
                G._Grunning,
                decoder.getClass().getField("statusInDecode").get(decoder),
                "the user's decoder ran in a syscall");
        assertEquals(0, syscallExits(st), () -> "a syscall was entered: " + st);
        AtomicReference<Object> fromJdk = new AtomicReference<>();
        Scheduler s2 = runAll(
                failure, () -> fromJdk.set(call(readLine, new BufferedReader(new InputStreamReader(pi2, UTF_8)))));
        SyscallStats.Snapshot st2 = s2.syscallStats.snapshot(s2);
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertEquals("jdk", fromJdk.get());
        assertEquals(1, syscallExits(st2), () -> "the JDK's reader over a pipe: " + st2);
    }

    /**
     * A blocking call in a constructor, after its super(), that throws (a timed
     * {@code Future.get}'s {@code TimeoutException}) leaves its syscall in the hook's handler, as in
     * a method: the goroutine is running again where the constructor catches the exception. Before,
     * a constructor's call site got no handler, and the goroutine ran on in the syscall until its
     * next gort call.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aBlockingCallThatThrowsInAConstructorLeavesItsSyscall() throws Exception {
        Constructor<?> ctor = workClass("Blockers").getConstructor(CompletableFuture.class);
        Field status = ctor.getDeclaringClass().getField("statusAfterTimeout");
        AtomicReference<Object> made = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        runAll(failure, () -> {
            try {
                made.set(ctor.newInstance(new CompletableFuture<>()));
            } catch (ReflectiveOperationException e) {
                throw new RuntimeException(e);
            }
        });
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertEquals(G._Grunning, status.get(made.get()), "status after the catch (3: _Gsyscall)");
    }

    /**
     * A plain read (a stream that is no peer's by the agent's look: a {@code SequenceInputStream},
     * here over a socket's stream) that blocks goes through {@code Poll.streamRead} and enters no
     * syscall: sysmon must find the carrier blocked, as for any uninstrumented blocking call, and
     * hand its P off. It never did: the innermost frame that is not the JDK's was
     * {@code Poll.streamRead}, gort's own, so sysmon took it for a wait inside the runtime and left
     * the P; at GOMAXPROCS=1 the writer queued behind the reader never ran (this test timed out).
     * The stand-in's frame is looked past now. Needs the kernel's view (/proc): the JVM reports a
     * socket read as RUNNABLE.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aPlainStreamReadThatBlocksHandsItsPOff() throws Exception {
        assumeTrue(
                java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task")),
                "the kernel cannot be asked here (no /proc)");
        Method read = method("read", InputStream.class, byte[].class);
        // Without the fix the read times out (30 s): the writer never runs.
        SocketRun r = readBeforeWrite(
                new byte[] {'h', 'i'},
                in -> call(read, new SequenceInputStream(in, InputStream.nullInputStream()), new byte[16]));
        assertEquals(2, r.got());
        assertTrue(r.st().blockedRetakes() >= 1, () -> "the blocked carrier's P was not retaken: " + r.st());
    }

    /** Every replacement call the agent writes is a stand-in whose frame sysmon looks past. */
    @Test
    void everyReplacementCallIsAStandIn() throws Exception {
        List<MethodInsnNode> sites = new ArrayList<>();
        sites.add(
                new MethodInsnNode(Opcodes.INVOKESTATIC, "java/lang/Thread", "currentThread", "()Ljava/lang/Thread;"));
        sites.add(new MethodInsnNode(Opcodes.INVOKESTATIC, "java/lang/Thread", "yield", "()V"));
        for (String d : List.of("(J)V", "(JI)V", "(Ljava/time/Duration;)V")) {
            sites.add(new MethodInsnNode(Opcodes.INVOKESTATIC, "java/lang/Thread", "sleep", d));
        }
        sites.add(new MethodInsnNode(Opcodes.INVOKEVIRTUAL, "java/util/concurrent/TimeUnit", "sleep", "(J)V"));
        for (String nd : PollInjector.STREAM_CALLS.keySet()) {
            String owner = nd.startsWith("write") ? "java/io/OutputStream" : "java/io/InputStream";
            int at = nd.indexOf('(');
            sites.add(new MethodInsnNode(Opcodes.INVOKEVIRTUAL, owner, nd.substring(0, at), nd.substring(at)));
        }
        for (String owner : List.of(PollInjector.THREAD_LOCAL, PollInjector.INHERITABLE_THREAD_LOCAL)) {
            sites.add(new MethodInsnNode(Opcodes.INVOKEVIRTUAL, owner, "get", "()Ljava/lang/Object;"));
            sites.add(new MethodInsnNode(Opcodes.INVOKEVIRTUAL, owner, "set", "(Ljava/lang/Object;)V"));
            sites.add(new MethodInsnNode(Opcodes.INVOKEVIRTUAL, owner, "remove", "()V"));
        }
        Field f = Class.forName("dev.gort.runtime.Poll").getDeclaredField("CALL_SITE_STAND_INS");
        f.setAccessible(true);
        Set<?> standIns = (Set<?>) f.get(null);
        for (MethodInsnNode site : sites) {
            MethodInsnNode helper = PollInjector.replacementCall(site);
            assertTrue(helper != null, () -> "no replacement for " + site.owner + "." + site.name + site.desc);
            assertTrue(standIns.contains(helper.name), () -> "Poll." + helper.name + " is not a stand-in");
            assertTrue(
                    Stream.of(Class.forName("dev.gort.runtime.Poll").getMethods())
                            .anyMatch(m -> m.getName().equals(helper.name)
                                    && org.objectweb.asm.Type.getMethodDescriptor(m)
                                            .equals(helper.desc)),
                    () -> "no Poll." + helper.name + helper.desc);
        }
    }

    /** A pipe holding {@code data}, its writer closed. */
    private static PipedInputStream pipeWith(byte[] data) throws IOException {
        PipedOutputStream po = new PipedOutputStream();
        PipedInputStream pi = new PipedInputStream(po, Math.max(1, data.length));
        po.write(data);
        po.close();
        return pi;
    }

    /** A user's class of the work classes' loader, made with its no-argument constructor. */
    private static Object userObject(Class<?> wrappers, String name) throws Exception {
        return Class.forName(wrappers.getName() + "$" + name, true, wrappers.getClassLoader())
                .getConstructor()
                .newInstance();
    }

    /**
     * A {@code transferTo} from a pipe (a peer's stream) runs its target's writes inside the call:
     * into a user's stream or writer it is no syscall (the user's code sees its goroutine running;
     * before, it ran inside the syscall, without a P once sysmon retook it), through a stream typed
     * {@code InputStream} ({@code Poll.streamTransferTo}), a {@code BufferedInputStream} and a
     * {@code BufferedReader} ({@code Poll.blockingEnterTransfer}); into the JDK's own byte array
     * stream or string writer the same call is one.
     */
    @ParameterizedTest
    @ValueSource(strings = {"streamTyped", "buffered", "reader"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aTransferToAUsersTargetIsNoSyscall(String shape) throws Exception {
        Class<?> wrappers = workClass("StreamWrappers");
        Method m = switch (shape) {
            case "streamTyped" -> wrappers.getMethod("transferTo", InputStream.class, OutputStream.class);
            case "buffered" -> wrappers.getMethod("bufferedTransferTo", BufferedInputStream.class, OutputStream.class);
            default -> wrappers.getMethod("readerTransferTo", BufferedReader.class, Writer.class);
        };
        boolean reader = shape.equals("reader");
        Object user = userObject(wrappers, reader ? "UserWriter" : "UserOutputStream");
        Object jdk = reader ? new StringWriter() : new ByteArrayOutputStream();
        for (Object target : List.of(user, jdk)) {
            PipedInputStream pipe = pipeWith("abc".getBytes(UTF_8));
            Object source = switch (shape) {
                case "streamTyped" -> pipe;
                case "buffered" -> new BufferedInputStream(pipe);
                default -> new BufferedReader(new InputStreamReader(pipe, UTF_8));
            };
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(failure, () -> AgentPreemptionTest.call(m, null, source, target));
            SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
            assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
            if (target == user) {
                assertEquals(
                        G._Grunning,
                        user.getClass().getField("statusInWrite").get(user),
                        "the user's target ran in a syscall");
                assertEquals(0, syscallExits(st), () -> "a syscall was entered: " + st);
            } else {
                assertEquals("abc", reader ? target.toString() : ((ByteArrayOutputStream) target).toString(UTF_8));
                assertEquals(1, syscallExits(st), () -> "the JDK's target: " + st);
            }
        }
    }

    /**
     * An {@code InflaterInputStream} or {@code DeflaterOutputStream} may run a user's subclass of
     * {@code Inflater} or {@code Deflater}: over a pipe, its read or write is no syscall (the user's
     * code sees its goroutine running). Nor is a {@code GZIP} stream's, which makes its own:
     * inflating is CPU work that must run with a P (typed {@code InputStream}, the look finds no
     * peer).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aUsersInflaterOrDeflaterIsNoSyscall() throws Exception {
        Class<?> wrappers = workClass("StreamWrappers");
        Method read = wrappers.getMethod("inflaterRead", InflaterInputStream.class, byte[].class);
        Method write = wrappers.getMethod("deflaterWrite", DeflaterOutputStream.class, byte[].class);
        Inflater inflater = (Inflater) userObject(wrappers, "UserInflater");
        Deflater deflater = (Deflater) userObject(wrappers, "UserDeflater");
        ByteArrayOutputStream zlib = new ByteArrayOutputStream();
        try (DeflaterOutputStream d = new DeflaterOutputStream(zlib)) {
            d.write("hello".getBytes(UTF_8));
        }
        ByteArrayOutputStream gzip = new ByteArrayOutputStream();
        try (GZIPOutputStream d = new GZIPOutputStream(gzip)) {
            d.write("hello".getBytes(UTF_8));
        }
        InflaterInputStream userIn = new InflaterInputStream(pipeWith(zlib.toByteArray()), inflater);
        byte[] data = new byte[100_000];
        new java.util.Random(1).nextBytes(data); // incompressible: the write deflates
        PipedOutputStream po = new PipedOutputStream();
        PipedInputStream sink = new PipedInputStream(po, 1 << 20);
        DeflaterOutputStream userOut = new DeflaterOutputStream(po, deflater);
        AtomicReference<Object> got = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = runAll(
                failure,
                () -> got.set(AgentPreemptionTest.call(read, null, userIn, new byte[16])),
                () -> AgentPreemptionTest.call(write, null, userOut, data));
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertEquals(5, got.get());
        assertEquals(
                G._Grunning,
                inflater.getClass().getField("statusInInflate").get(inflater),
                "the user's inflater ran in a syscall");
        assertEquals(
                G._Grunning,
                deflater.getClass().getField("statusInDeflate").get(deflater),
                "the user's deflater ran in a syscall");
        assertEquals(0, syscallExits(st), () -> "a syscall was entered: " + st);
        assertTrue(sink.available() > 0, "the deflater wrote nothing");
        GZIPInputStream gzipIn = new GZIPInputStream(pipeWith(gzip.toByteArray()));
        Method streamRead = method("read", InputStream.class, byte[].class);
        Scheduler s2 = runAll(failure, () -> got.set(AgentPreemptionTest.call(streamRead, null, gzipIn, new byte[16])));
        SyscallStats.Snapshot st2 = s2.syscallStats.snapshot(s2);
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertEquals(5, got.get());
        assertEquals(0, syscallExits(st2), () -> "a GZIP stream over a pipe: " + st2);
    }

    /** The running goroutine's status, or -1 outside one. */
    static int status() {
        G gp = Scheduler.getg();
        return gp == null ? -1 : gp.readgstatus();
    }

    /**
     * Whether the running goroutine is in a syscall that an agent's hook entered
     * ({@code G.syscallImplicit == SYSCALL_HOOK}), not one of its own or one that sysmon made of a
     * carrier it found blocked (a retake: code that blocks natively long enough gets one, hooked or
     * not).
     */
    static boolean inHookedSyscall() {
        G gp = Scheduler.getg();
        if (gp == null || gp.readgstatus() != G._Gsyscall) {
            return false;
        }
        try {
            java.lang.reflect.Field f = G.class.getDeclaredField("syscallImplicit");
            f.setAccessible(true);
            java.lang.reflect.Field hook = G.class.getDeclaredField("SYSCALL_HOOK");
            hook.setAccessible(true);
            return (byte) f.get(gp) == (byte) hook.get(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * A {@code Socket} made over a user's {@code SocketImpl} hands out the JDK's
     * {@code Socket$SocketInputStream} around the user's stream: a read through it runs the user's
     * code, so it is no syscall (the look goes through the socket's stream to its implementation's).
     * Before, any {@code Socket}'s stream was a peer's, and the user's read ran in the syscall.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aSocketOverAUsersSocketImplIsNoSyscall() throws Exception {
        Method read = method("read", InputStream.class, byte[].class);
        UserSocketImpl impl = new UserSocketImpl();
        Socket socket = new Socket(impl) {};
        socket.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 9));
        InputStream in = socket.getInputStream();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = runAll(failure, () -> call(read, in, new byte[16]));
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertEquals(G._Grunning, impl.statusInRead, "the user's SocketImpl's stream ran in a syscall");
        assertEquals(0, syscallExits(st), () -> "a syscall was entered: " + st);
    }

    /**
     * An {@code SSLSocket}'s first read runs the TLS handshake, which calls the key and trust
     * managers (here a user's trust manager): the hook enters no syscall then. Once the connection is negotiated,
     * a read is one. Before, every read of an {@code SSLSocket}'s stream was a syscall, and the
     * user's trust manager ran inside it.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void anSslSocketsReadIsASyscallOnlyAfterItsHandshake(@TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path store = dir.resolve("ks.p12");
        java.nio.file.Path keytoolPath = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "keytool");
        assumeTrue(java.nio.file.Files.isExecutable(keytoolPath), "no keytool in this JDK");
        Process keytool = new ProcessBuilder(
                        keytoolPath.toString(),
                        "-genkeypair",
                        "-alias",
                        "test",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=localhost",
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        store.toString(),
                        "-storepass",
                        "changeit",
                        "-keypass",
                        "changeit")
                .redirectErrorStream(true)
                .start();
        String out = new String(keytool.getInputStream().readAllBytes(), UTF_8);
        assertEquals(0, keytool.waitFor(), () -> "keytool: " + out);
        char[] pw = "changeit".toCharArray();
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
        try (InputStream f = java.nio.file.Files.newInputStream(store)) {
            ks.load(f, pw);
        }
        javax.net.ssl.KeyManagerFactory kmf = javax.net.ssl.KeyManagerFactory.getInstance("PKIX");
        kmf.init(ks, pw);
        javax.net.ssl.SSLContext server = javax.net.ssl.SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);
        AtomicReference<Boolean> hookedInCheck = new AtomicReference<>();
        javax.net.ssl.X509TrustManager user = new javax.net.ssl.X509TrustManager() {
            @Override
            public void checkClientTrusted(java.security.cert.X509Certificate[] c, String a) {}

            @Override
            public void checkServerTrusted(java.security.cert.X509Certificate[] c, String a) {
                hookedInCheck.set(inHookedSyscall());
            }

            @Override
            public java.security.cert.X509Certificate[] getAcceptedIssuers() {
                return new java.security.cert.X509Certificate[0];
            }
        };
        javax.net.ssl.SSLContext client = javax.net.ssl.SSLContext.getInstance("TLS");
        client.init(null, new javax.net.ssl.TrustManager[] {user}, null);
        Method read = method("read", InputStream.class, byte[].class);
        try (ServerSocket ss =
                server.getServerSocketFactory().createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            // The peer: writes 'a', waits for a byte from the client, writes 'b'.
            Thread peer = new Thread(() -> {
                try (Socket c = ss.accept()) {
                    c.getOutputStream().write('a');
                    c.getOutputStream().flush();
                    c.getInputStream().read();
                    c.getOutputStream().write('b');
                    c.getOutputStream().flush();
                    c.getInputStream().read(); // until the client closes
                } catch (IOException e) {
                    // the client closed first
                }
            });
            peer.start();
            try (Socket c =
                    client.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                c.setSoTimeout(30_000);
                InputStream in = c.getInputStream();
                byte[] buf = new byte[16];
                AtomicInteger n = new AtomicInteger();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                Scheduler first = runAll(failure, () -> n.set((int) call(read, in, buf)));
                SyscallStats.Snapshot st = first.syscallStats.snapshot(first);
                assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
                assertEquals(1, n.get());
                assertEquals('a', buf[0]);
                // The handshake waits for the peer in native code: sysmon may retake the carrier
                // as blocked (a syscall of its own making), hooked or not; the hook enters none.
                assertEquals(false, hookedInCheck.get(), "the user's trust manager ran in the hook's syscall");
                if (st.blockedRetakes() == 0) {
                    assertEquals(0, syscallExits(st), () -> "the handshaking read was a syscall: " + st);
                }
                c.getOutputStream().write('x'); // from the test's thread: not instrumented
                c.getOutputStream().flush();
                Scheduler second = runAll(failure, () -> n.set((int) call(read, in, buf)));
                SyscallStats.Snapshot st2 = second.syscallStats.snapshot(second);
                assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
                assertEquals(1, n.get());
                assertEquals('b', buf[0]);
                assertEquals(1, syscallExits(st2), () -> "a read once negotiated: " + st2);
            }
            peer.join(30_000);
        }
    }

    /** A user's socket implementation whose stream records its goroutine's status when read. */
    static final class UserSocketImpl extends java.net.SocketImpl {
        volatile int statusInRead = -3;

        @Override
        protected void create(boolean stream) {}

        @Override
        protected void connect(String host, int port) {}

        @Override
        protected void connect(InetAddress address, int port) {}

        @Override
        protected void connect(java.net.SocketAddress address, int timeout) {}

        @Override
        protected void bind(InetAddress host, int port) {}

        @Override
        protected void listen(int backlog) {}

        @Override
        protected void accept(java.net.SocketImpl s) {}

        @Override
        protected InputStream getInputStream() {
            return new InputStream() {
                @Override
                public int read() {
                    return -1;
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    statusInRead = status();
                    return -1;
                }
            };
        }

        @Override
        protected OutputStream getOutputStream() {
            return OutputStream.nullOutputStream();
        }

        @Override
        protected int available() {
            return 0;
        }

        @Override
        protected void close() {}

        @Override
        protected void sendUrgentData(int data) {}

        @Override
        public void setOption(int optID, Object value) {}

        @Override
        public Object getOption(int optID) {
            return null;
        }
    }
}
