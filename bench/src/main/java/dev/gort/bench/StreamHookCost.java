package dev.gort.bench;

import dev.gort.runtime.Poll;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the agent's hook around a stream wrapper's read costs where the stream waits for no peer (a
 * file's, a parser's buffer: the common case, in which it enters no syscall): a
 * {@code DataInputStream.readInt} over a {@code BufferedInputStream}, and a
 * {@code BufferedReader.readLine} over an {@code InputStreamReader}, each over a stream that is
 * not a socket's. {@code plain} is the call alone; {@code hooked} is the call between
 * {@code Poll.blockingEnterStream(receiver)} and {@code Poll.blockingExit()}, as the agent writes
 * it at an instrumented call site: the look through the wrappers' chain
 * ({@code dev.gort.runtime.PeerStreams}: a class-value lookup per link and the wrapped stream's
 * field read) and the exit's look at the current M. One invocation is a batch of {@link #CALLS}
 * calls, in goroutine 1 of a runtime kept for the trial ({@code where=goroutine}, {@link GortHost})
 * or on JMH's own thread ({@code where=thread}: there the exit's look at the current M takes its
 * slow path).
 *
 * <p>Run: {@code ./gort java -jar bench/target/benchmarks.jar StreamHookCost -f 2 -wi 3 -i 5}
 *
 * <p>Latest (2026-12-06, night, another 2-core VM, nothing else running; ns/op, JMH's 99.9 %
 * intervals, {@code -f 2 -wi 3 -i 5}):
 * <pre>
 * call      where      plain          hooked         read           token
 * readInt   goroutine   26.6 ± 1.8     29.1 ± 2.2     31.4 ± 1.7     30.7 ± 1.0
 * readInt   thread      24.5 ± 0.6     28.0 ± 0.7     28.4 ± 1.0     29.2 ± 0.5
 * readLine  goroutine  245.9 ± 10.6   254.4 ± 6.3    248.5 ± 12.5   253.6 ± 4.4
 * readLine  thread     235.8 ± 3.8    236.3 ± 4.8    245.7 ± 4.7    241.5 ± 3.6
 * </pre>
 * The frame token ({@code token} against {@code read}) costs nothing these intervals can show, in a
 * goroutine or on a platform thread. The run before (2026-12-06, a VM shared with other work):
 * readInt 33.3 / 37.5 in a goroutine and 28.9 / 33.5 on a thread, readLine 295.2 / 302.8 and
 * 283.6 / 310.9 (plain / hooked).
 * The first version looked up every link's kind in a class value (about 5 ns a lookup): readInt
 * in a goroutine took 47-51 ns hooked against 33-35 plain; {@code PeerStreams.kindOf} answers the
 * commonest classes by identity first.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(StreamHookCost.CALLS)
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-XX:+UseG1GC",
            "--add-exports",
            "java.base/jdk.internal.vm=ALL-UNNAMED",
            "--add-opens",
            "java.base/java.io=ALL-UNNAMED",
            "--add-opens",
            "java.base/sun.nio.cs=ALL-UNNAMED",
            "--add-opens",
            "java.base/java.net=ALL-UNNAMED",
            "--add-opens",
            "java.base/sun.security.ssl=ALL-UNNAMED"
        })
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class StreamHookCost {
    /** Calls per invocation. */
    static final int CALLS = 1 << 14;

    /**
     * {@code plain}: the call alone; {@code hooked}: between {@code blockingEnterStream} and
     * {@code blockingExit}; {@code read}: between the read hook the agent writes for a read
     * ({@code blockingEnterStreamRead(receiver, frame)}, here with no token) and
     * {@code blockingExit}; {@code token}: the same with a fresh token per call
     * ({@code Poll.waitFrame()}, which the agent takes at the entry of every method with a read: a
     * helper that reads one field per call pays it per call).
     */
    @Param({"plain", "hooked", "read", "token"})
    public String mode;

    /** {@code goroutine}: the calls run in goroutine 1 of a runtime kept for the trial; {@code thread}: on JMH's thread. */
    @Param({"goroutine", "thread"})
    public String where;

    private DataInputStream data;
    private BufferedReader lines;
    private GortHost host;

    /** Endless bytes: a line of 79 digits and a newline, again and again. Not a JDK class. */
    static final class Lines extends InputStream {
        private static final byte[] LINE =
                ("0123456789".repeat(8).substring(0, 79) + "\n").getBytes(StandardCharsets.US_ASCII);
        private int at;

        @Override
        public int read() {
            byte b = LINE[at];
            at = (at + 1) % LINE.length;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            for (int i = 0; i < len; i++) {
                b[off + i] = LINE[at];
                at = (at + 1) % LINE.length;
            }
            return len;
        }
    }

    @Setup(Level.Trial)
    public void setup() {
        data = new DataInputStream(new BufferedInputStream(new Lines()));
        lines = new BufferedReader(new InputStreamReader(new Lines(), StandardCharsets.US_ASCII));
        host = where.equals("goroutine") ? new GortHost(1) : null;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (host != null) {
            host.close();
        }
    }

    private long on(java.util.function.LongSupplier batch) {
        if (host == null) {
            return batch.getAsLong();
        }
        long[] out = new long[1];
        host.run(() -> out[0] = batch.getAsLong());
        return out[0];
    }

    private static final int PLAIN = 0, HOOKED = 1, READ = 2, TOKEN = 3;

    private int how() {
        return switch (mode) {
            case "plain" -> PLAIN;
            case "hooked" -> HOOKED;
            case "read" -> READ;
            case "token" -> TOKEN;
            default -> throw new IllegalArgumentException("StreamHookCost: no mode " + mode);
        };
    }

    @Benchmark
    public long readInt() {
        int how = how();
        DataInputStream in = data;
        return on(() -> {
            long s = 0;
            try {
                for (int i = 0; i < CALLS; i++) {
                    if (how == PLAIN) {
                        s += in.readInt();
                    } else {
                        if (how == HOOKED) {
                            Poll.blockingEnterStream(in);
                        } else {
                            Poll.blockingEnterStreamRead(in, how == TOKEN ? Poll.waitFrame() : 0);
                        }
                        s += in.readInt();
                        Poll.blockingExit();
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return s;
        });
    }

    @Benchmark
    public long readLine() {
        int how = how();
        BufferedReader in = lines;
        return on(() -> {
            long s = 0;
            try {
                for (int i = 0; i < CALLS; i++) {
                    if (how == PLAIN) {
                        s += in.readLine().length();
                    } else {
                        if (how == HOOKED) {
                            Poll.blockingEnterStream(in);
                        } else {
                            Poll.blockingEnterStreamRead(in, how == TOKEN ? Poll.waitFrame() : 0);
                        }
                        s += in.readLine().length();
                        Poll.blockingExit();
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return s;
        });
    }
}
