package dev.gort.agent.work;

import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Reader;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.Inflater;
import java.util.zip.InflaterInputStream;

/**
 * Reads, writes and flushes of the JDK's stream wrappers ({@code PollInjector.STREAM_WRAPPER_CALLS}):
 * a syscall where the wrapper's chain ends at a socket's or a pipe's stream, nothing else's code
 * in between ({@code Poll.blockingEnterStream}); and a reader and a charset decoder of a user's,
 * which see their goroutine's status (they must not run inside a syscall).
 */
public final class StreamWrappers {
    private StreamWrappers() {}

    public static String readLine(BufferedReader r) throws IOException {
        return r.readLine();
    }

    public static int readInt(DataInputStream in) throws IOException {
        return in.readInt();
    }

    public static void flush(OutputStream out) throws IOException {
        out.flush();
    }

    /** A stream typed {@code InputStream}: {@code Poll.streamTransferTo}. */
    public static long transferTo(InputStream in, OutputStream out) throws IOException {
        return in.transferTo(out);
    }

    /** A wrapper's own type: {@code Poll.blockingEnterTransfer}. */
    public static long bufferedTransferTo(BufferedInputStream in, OutputStream out) throws IOException {
        return in.transferTo(out);
    }

    /** A reader's: {@code Poll.blockingEnterTransfer}. */
    public static long readerTransferTo(BufferedReader in, Writer out) throws IOException {
        return in.transferTo(out);
    }

    public static int inflaterRead(InflaterInputStream in, byte[] b) throws IOException {
        return in.read(b, 0, b.length);
    }

    public static void deflaterWrite(DeflaterOutputStream out, byte[] b) throws IOException {
        out.write(b, 0, b.length);
    }

    /** The line read in a constructor, after its super(). */
    public static final class LineHolder {
        public final String line;

        public LineHolder(BufferedReader r) throws IOException {
            line = r.readLine();
        }
    }

    /** The running goroutine's status, or -1 outside one. */
    static int status() {
        G gp = Scheduler.getg();
        return gp == null ? -1 : gp.readgstatus();
    }

    /** A user's reader of one line, "user\n", that records its goroutine's status when read. */
    public static final class UserReader extends Reader {
        public volatile int statusInRead = -3;
        private boolean done;

        @Override
        public int read(char[] cbuf, int off, int len) {
            statusInRead = status();
            if (done) {
                return -1;
            }
            done = true;
            "user\n".getChars(0, 5, cbuf, off);
            return 5;
        }

        @Override
        public void close() {}
    }

    /** A user's stream that passes reads through to another stream (its read is instrumented). */
    public static final class UserPassThrough extends java.io.InputStream {
        private final java.io.InputStream in;

        public UserPassThrough(java.io.InputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return in.read(b, off, len);
        }
    }

    /** A user's UTF-8 decoder (ASCII only) that records its goroutine's status when it decodes. */
    public static final class UserDecoder extends CharsetDecoder {
        public volatile int statusInDecode = -3;

        public UserDecoder() {
            super(StandardCharsets.UTF_8, 1, 1);
        }

        @Override
        protected CoderResult decodeLoop(ByteBuffer in, CharBuffer out) {
            statusInDecode = status();
            while (in.hasRemaining()) {
                if (!out.hasRemaining()) {
                    return CoderResult.OVERFLOW;
                }
                out.put((char) in.get());
            }
            return CoderResult.UNDERFLOW;
        }
    }

    /** A user's output stream that records its goroutine's status when written to. */
    public static final class UserOutputStream extends OutputStream {
        public volatile int statusInWrite = -3;

        @Override
        public void write(int b) {
            statusInWrite = status();
        }

        @Override
        public void write(byte[] b, int off, int len) {
            statusInWrite = status();
        }
    }

    /** A user's writer that records its goroutine's status when written to. */
    public static final class UserWriter extends Writer {
        public volatile int statusInWrite = -3;

        @Override
        public void write(char[] c, int off, int len) {
            statusInWrite = status();
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    /** A user's inflater that records its goroutine's status when it inflates. */
    public static final class UserInflater extends Inflater {
        public volatile int statusInInflate = -3;

        @Override
        public int inflate(byte[] b, int off, int len) throws DataFormatException {
            statusInInflate = status();
            return super.inflate(b, off, len);
        }
    }

    /** A user's deflater that records its goroutine's status when it deflates. */
    public static final class UserDeflater extends Deflater {
        public volatile int statusInDeflate = -3;

        @Override
        public int deflate(byte[] b, int off, int len) {
            statusInDeflate = status();
            return super.deflate(b, off, len);
        }
    }
}
