package dev.gort.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;

/**
 * Which of the JDK's streams, readers and writers wait for a peer: the ones whose read, write or
 * flush at an instrumented call site is a syscall ({@link Poll#blockingEnterStream},
 * {@link Poll#streamRead}, ...). A socket's streams (those of the JDK's socket implementation:
 * a {@code Socket} made over a user's {@code SocketImpl} runs the user's streams), an
 * {@code SSLSocket}'s once its handshake is done (the first read or write runs it, with key and
 * trust managers that may be a user's), a socket channel's as {@code Channels.newInputStream}
 * wraps it, a child process's pipes and the {@code java.io} pipes between threads wait for a
 * peer; a file's do
 * not (their reads and writes wait for no one; sysmon still finds a carrier blocked in one). So
 * does one of the JDK's wrappers whose chain of wrapped streams ends at one of those: a
 * {@code BufferedInputStream} or {@code DataInputStream} over a socket's stream, a
 * {@code BufferedReader} over an {@code InputStreamReader} over it, a {@code PrintWriter} over
 * an {@code OutputStreamWriter} over its output stream, and so on ({@link #KINDS}).
 *
 * <p>Only the exact classes listed count, all the JDK's own: a subclass, or a wrapper around a
 * stream of any other class, is a library's or a user's code, which must not run inside a syscall
 * (without a P once sysmon retakes it, beyond GOMAXPROCS, never preempted). For the same reason
 * an {@code InputStreamReader}'s or {@code OutputStreamWriter}'s charset coder must be a JDK
 * class (a charset provider's is not). Wrappers whose work calls code they were handed are not
 * listed ({@code CheckedInputStream}'s checksum, {@code DigestInputStream}'s and
 * {@code CipherInputStream}'s providers, {@code ObjectInputStream}'s {@code readObject},
 * {@code InflaterInputStream}'s and {@code DeflaterOutputStream}'s {@code Inflater} and
 * {@code Deflater}, which a user may subclass). Nor are the {@code GZIP} streams, which make their
 * own: inflating and deflating is CPU work, as in Go's {@code compress/gzip}, and must run with a
 * P (a {@code GZIPOutputStream.write} of a large array deflates all of it in the call).
 *
 * <p>A {@code transferTo} also runs its target's writes: it is a syscall only where the target is
 * the JDK's own through and through ({@link #jdkSink}: a peer's stream, a file's, a byte or char
 * array's, or one of the JDK's wrappers over one of those), never a user's stream or writer.
 *
 * <p>The wrapped stream is read from the wrapper's private or protected field at each call (a
 * closed {@code BufferedInputStream} has none), which needs {@code java.io}, {@code sun.nio.cs},
 * {@code java.net} and {@code sun.security.ssl} of {@code java.base} open to this module: the
 * agent opens them ({@code GortAgent}); only the agent's hooks call this. Whether they are open is decided once,
 * when this class initialises; where they are not, only a stream of a peer's own class counts.
 * A look costs, per link (a socket's stream under a {@code BufferedReader} and an
 * {@code InputStreamReader}: four, with the {@code Socket}'s stream around the implementation's),
 * an identity test for the commonest classes or else a class-value lookup ({@link #kindOf}), and
 * a field read between links.
 */
final class PeerStreams {
    private PeerStreams() {}

    /** A class none of the kinds below: its stream waits for no peer, or runs code not the JDK's. */
    private static final int OTHER = 0;
    /** A stream that waits for a peer: a socket's, a pipe's. */
    private static final int PEER = 1;
    /** A {@code FilterInputStream}: look at its {@code in}. */
    private static final int FILTER_IN = 2;
    /** A {@code FilterOutputStream}: look at its {@code out}. */
    private static final int FILTER_OUT = 3;
    /** A {@code FilterReader}: look at its {@code in}. */
    private static final int FILTER_READER = 4;
    /** A {@code BufferedReader}: look at its {@code in}. */
    private static final int BUFFERED_READER = 5;
    /** An {@code InputStreamReader}: its decoder's {@code in}, if its charset decoder is the JDK's. */
    private static final int STREAM_READER = 6;
    /** A {@code BufferedWriter}: look at its {@code out}. */
    private static final int BUFFERED_WRITER = 7;
    /** An {@code OutputStreamWriter}: its encoder's {@code out}, if its charset encoder is the JDK's. */
    private static final int STREAM_WRITER = 8;
    /** A {@code PrintWriter}: look at its {@code out}. */
    private static final int PRINT_WRITER = 9;
    /** A target of the JDK's that waits for no peer and runs no one else's code: a file's, an array's. */
    private static final int SINK = 10;
    /** A {@code Socket}'s input stream: look at its {@code in} (the socket implementation's, maybe a user's). */
    private static final int SOCKET_IN = 11;
    /** A {@code Socket}'s output stream: look at its {@code out}. */
    private static final int SOCKET_OUT = 12;
    /**
     * An {@code SSLSocket}'s input stream: a peer's once its connection is negotiated; before that,
     * its first read or write runs the handshake, with the key and trust managers and the JCA
     * providers, maybe a user's.
     */
    private static final int SSL_IN = 13;
    /** An {@code SSLSocket}'s output stream: as {@link #SSL_IN}. */
    private static final int SSL_OUT = 14;

    /** The JDK's classes by exact name, and their kinds. Immutable. */
    private static final Map<String, Integer> KINDS = Map.ofEntries(
            Map.entry("java.net.Socket$SocketInputStream", SOCKET_IN),
            Map.entry("java.net.Socket$SocketOutputStream", SOCKET_OUT),
            Map.entry("sun.nio.ch.NioSocketImpl$1", PEER),
            Map.entry("sun.nio.ch.NioSocketImpl$2", PEER),
            Map.entry("sun.security.ssl.SSLSocketImpl$AppInputStream", SSL_IN),
            Map.entry("sun.security.ssl.SSLSocketImpl$AppOutputStream", SSL_OUT),
            Map.entry("sun.nio.ch.SocketInputStream", PEER),
            Map.entry("sun.nio.ch.SocketOutputStream", PEER),
            Map.entry("java.lang.ProcessImpl$ProcessPipeInputStream", PEER),
            Map.entry("java.lang.ProcessImpl$ProcessPipeOutputStream", PEER),
            Map.entry("java.io.PipedInputStream", PEER),
            Map.entry("java.io.PipedOutputStream", PEER),
            Map.entry("java.io.PipedReader", PEER),
            Map.entry("java.io.PipedWriter", PEER),
            Map.entry("java.io.FilterInputStream", FILTER_IN),
            Map.entry("java.io.BufferedInputStream", FILTER_IN),
            Map.entry("java.io.DataInputStream", FILTER_IN),
            Map.entry("java.io.PushbackInputStream", FILTER_IN),
            Map.entry("java.io.FilterOutputStream", FILTER_OUT),
            Map.entry("java.io.BufferedOutputStream", FILTER_OUT),
            Map.entry("java.io.DataOutputStream", FILTER_OUT),
            Map.entry("java.io.PrintStream", FILTER_OUT),
            Map.entry("java.io.PushbackReader", FILTER_READER),
            Map.entry("java.io.BufferedReader", BUFFERED_READER),
            Map.entry("java.io.LineNumberReader", BUFFERED_READER),
            Map.entry("java.io.InputStreamReader", STREAM_READER),
            Map.entry("java.io.BufferedWriter", BUFFERED_WRITER),
            Map.entry("java.io.OutputStreamWriter", STREAM_WRITER),
            Map.entry("java.io.PrintWriter", PRINT_WRITER),
            Map.entry("java.io.FileOutputStream", SINK),
            Map.entry("java.io.ByteArrayOutputStream", SINK),
            Map.entry("java.io.StringWriter", SINK),
            Map.entry("java.io.CharArrayWriter", SINK));

    /** A class's kind: one of {@link #KINDS} loaded by the bootstrap loader, else OTHER. */
    private static final ClassValue<Integer> KIND = new ClassValue<>() {
        @Override
        protected Integer computeValue(Class<?> c) {
            return c.getClassLoader() == null ? KINDS.getOrDefault(c.getName(), OTHER) : OTHER;
        }
    };

    /** Whether a class is the JDK's own (bootstrap or platform loader): a charset coder must be. */
    private static final ClassValue<Boolean> JDK_CLASS = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> c) {
            ClassLoader l = c.getClassLoader();
            return l == null || l == ClassLoader.getPlatformClassLoader();
        }
    };

    /** The most links followed: more is a chain of the JDK's wrappers no one builds. */
    private static final int MAX_LINKS = 8;

    // Getters adapted to (Object) Object, called with invokeExact from static finals (the JIT folds
    // them to field reads); all null where the packages are not open. Immutable.
    private static final MethodHandle FILTER_IN_IN;
    private static final MethodHandle FILTER_OUT_OUT;
    private static final MethodHandle FILTER_READER_IN;
    private static final MethodHandle BUFFERED_READER_IN;
    private static final MethodHandle READER_DECODER; // InputStreamReader.sd (a StreamDecoder)
    private static final MethodHandle DECODER_IN; // StreamDecoder.in (null when it reads a channel)
    private static final MethodHandle DECODER_CODER; // StreamDecoder.decoder
    private static final MethodHandle BUFFERED_WRITER_OUT;
    private static final MethodHandle WRITER_ENCODER; // OutputStreamWriter.se (a StreamEncoder)
    private static final MethodHandle ENCODER_OUT; // StreamEncoder.out
    private static final MethodHandle ENCODER_CODER; // StreamEncoder.encoder
    private static final MethodHandle PRINT_WRITER_OUT;
    private static final MethodHandle SOCKET_IN_IN; // Socket$SocketInputStream.in
    private static final MethodHandle SOCKET_OUT_OUT; // Socket$SocketOutputStream.out
    private static final MethodHandle SSL_IN_SOCKET; // SSLSocketImpl$AppInputStream.this$0
    private static final MethodHandle SSL_OUT_SOCKET; // SSLSocketImpl$AppOutputStream.this$0
    private static final MethodHandle SSL_CONTEXT; // SSLSocketImpl.conContext (a TransportContext)
    /** {@code (Object) boolean}: TransportContext.isNegotiated. */
    private static final MethodHandle SSL_NEGOTIATED;
    /** Whether the getters above are there (the packages are open to this module). Immutable. */
    private static final boolean LOOK_THROUGH;

    static {
        MethodHandle[] g = new MethodHandle[18];
        boolean ok;
        try {
            MethodHandles.Lookup self = MethodHandles.lookup();
            Class<?> decoder = Class.forName("sun.nio.cs.StreamDecoder");
            Class<?> encoder = Class.forName("sun.nio.cs.StreamEncoder");
            g[0] = getter(self, java.io.FilterInputStream.class, "in", java.io.InputStream.class);
            g[1] = getter(self, java.io.FilterOutputStream.class, "out", java.io.OutputStream.class);
            g[2] = getter(self, java.io.FilterReader.class, "in", java.io.Reader.class);
            g[3] = getter(self, java.io.BufferedReader.class, "in", java.io.Reader.class);
            g[4] = getter(self, java.io.InputStreamReader.class, "sd", decoder);
            g[5] = getter(self, decoder, "in", java.io.InputStream.class);
            g[6] = getter(self, decoder, "decoder", java.nio.charset.CharsetDecoder.class);
            g[7] = getter(self, java.io.BufferedWriter.class, "out", java.io.Writer.class);
            g[8] = getter(self, java.io.OutputStreamWriter.class, "se", encoder);
            g[9] = getter(self, encoder, "out", java.io.OutputStream.class);
            g[10] = getter(self, encoder, "encoder", java.nio.charset.CharsetEncoder.class);
            g[11] = getter(self, java.io.PrintWriter.class, "out", java.io.Writer.class);
            Class<?> socketIn = Class.forName("java.net.Socket$SocketInputStream");
            Class<?> socketOut = Class.forName("java.net.Socket$SocketOutputStream");
            g[12] = getter(self, socketIn, "in", java.io.InputStream.class);
            g[13] = getter(self, socketOut, "out", java.io.OutputStream.class);
            Class<?> ssl = Class.forName("sun.security.ssl.SSLSocketImpl");
            Class<?> context = Class.forName("sun.security.ssl.TransportContext");
            g[14] = getter(self, Class.forName("sun.security.ssl.SSLSocketImpl$AppInputStream"), "this$0", ssl);
            g[15] = getter(self, Class.forName("sun.security.ssl.SSLSocketImpl$AppOutputStream"), "this$0", ssl);
            g[16] = getter(self, ssl, "conContext", context);
            g[17] = MethodHandles.privateLookupIn(context, self)
                    .findGetter(context, "isNegotiated", boolean.class)
                    .asType(MethodType.methodType(boolean.class, Object.class));
            ok = true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            // Not open (no agent), or a JDK whose classes differ: only a peer's own stream counts.
            java.util.Arrays.fill(g, null);
            ok = false;
        }
        FILTER_IN_IN = g[0];
        FILTER_OUT_OUT = g[1];
        FILTER_READER_IN = g[2];
        BUFFERED_READER_IN = g[3];
        READER_DECODER = g[4];
        DECODER_IN = g[5];
        DECODER_CODER = g[6];
        BUFFERED_WRITER_OUT = g[7];
        WRITER_ENCODER = g[8];
        ENCODER_OUT = g[9];
        ENCODER_CODER = g[10];
        PRINT_WRITER_OUT = g[11];
        SOCKET_IN_IN = g[12];
        SOCKET_OUT_OUT = g[13];
        SSL_IN_SOCKET = g[14];
        SSL_OUT_SOCKET = g[15];
        SSL_CONTEXT = g[16];
        SSL_NEGOTIATED = g[17];
        LOOK_THROUGH = ok;
    }

    private static MethodHandle getter(MethodHandles.Lookup self, Class<?> owner, String name, Class<?> type)
            throws ReflectiveOperationException {
        return MethodHandles.privateLookupIn(owner, self)
                .findGetter(owner, name, type)
                .asType(MethodType.methodType(Object.class, Object.class));
    }

    /**
     * Whether {@code s} (not null) is a stream, reader or writer of the JDK's that waits for a peer,
     * itself or at the end of its chain of the JDK's wrappers (see the class comment).
     */
    static boolean waitsForPeer(Object s) {
        return endOf(s) instanceof Object e && e != SINK_END;
    }

    /**
     * The stream that waits for a peer at the end of {@code s}'s chain of the JDK's wrappers
     * ({@code s} itself, an implementation's socket stream, a pipe's, a negotiated
     * {@code SSLSocket}'s), or null where {@code s} waits for no peer ({@link #waitsForPeer}).
     */
    static Object peerEnd(Object s) {
        Object e = endOf(s);
        return e == SINK_END ? null : e;
    }

    /**
     * Whether {@code s} (not null), the target of a {@code transferTo}, runs only the JDK's code when
     * written to: a peer's stream, a file's or an array's ({@link #SINK}), itself or at the end of
     * its chain of the JDK's wrappers. A user's stream or writer, anywhere in the chain, is not.
     */
    static boolean jdkSink(Object s) {
        return endOf(s) != null;
    }

    /** {@link #endOf}'s answer for a chain that ends at a {@link #SINK}. */
    private static final Object SINK_END = new Object();

    /**
     * {@link #KIND} with the commonest answers first, without its class-value lookup (about 5 ns
     * each, most of a look's cost: {@code StreamHookCost}): the buffered and data streams and
     * readers and the file and array streams by identity, and a class not the bootstrap loader's
     * (a library's or a user's stream) as OTHER.
     */
    private static int kindOf(Class<?> c) {
        if (c == java.io.BufferedInputStream.class || c == java.io.DataInputStream.class) {
            return FILTER_IN;
        }
        if (c == java.io.BufferedReader.class) {
            return BUFFERED_READER;
        }
        if (c == java.io.InputStreamReader.class) {
            return STREAM_READER;
        }
        if (c.getClassLoader() != null
                || c == java.io.FileInputStream.class
                || c == java.io.ByteArrayInputStream.class
                || c == java.io.StringReader.class) {
            return OTHER;
        }
        return KIND.get(c);
    }

    /**
     * The end of {@code s}'s chain of the JDK's wrappers: the stream that waits for a peer (PEER,
     * or a negotiated SSL stream), {@link #SINK_END} (a SINK), or null (OTHER).
     */
    private static Object endOf(Object s) {
        for (int links = 0; links < MAX_LINKS; links++) {
            int kind = kindOf(s.getClass());
            if (kind == PEER) {
                return s;
            }
            if (kind == SINK) {
                return SINK_END;
            }
            if (kind == SSL_IN || kind == SSL_OUT) {
                return LOOK_THROUGH && negotiated(kind, s) ? s : null;
            }
            if (kind == OTHER || !LOOK_THROUGH || (s = inner(kind, s)) == null) {
                return null;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------
    // The JDK's socket implementation (sun.nio.ch.NioSocketImpl), for read waits in the netpoller
    // (Netpoll.waitJdkSocketReadable) and the close hook (Poll.closeTarget, Poll.closed).

    /**
     * The JDK socket implementation whose input stream {@code end} ({@link #peerEnd}) is, or null
     * (another peer's stream, or the getters below are not there).
     */
    static Object socketImplOfInput(Object end) {
        if (!JdkSockets.OK || end.getClass() != JdkSockets.IN) {
            return null;
        }
        return JdkSockets.get(JdkSockets.IN_IMPL, end);
    }

    /**
     * The JDK socket implementation that a {@code close()} of {@code s} closes, or null: a
     * {@code Socket}'s (a subclass's too), or the one at the end of a chain of the JDK's wrappers
     * over its input or output stream.
     */
    static Object socketImplClosedBy(Object s) {
        if (!JdkSockets.OK) {
            return null;
        }
        Object impl = null;
        if (s instanceof java.net.Socket) { // its impl field, a subclass's too
            impl = JdkSockets.get(JdkSockets.SOCKET_IMPL, s);
            if (impl != null && JdkSockets.DELEGATING.isInstance(impl)) {
                // A client socket's (SocksSocketImpl), a proxied one's (HttpConnectSocketImpl).
                impl = JdkSockets.get(JdkSockets.DELEGATE, impl);
            }
        } else if (endOf(s) instanceof Object e) {
            Class<?> c = e.getClass();
            impl = c == JdkSockets.IN
                    ? JdkSockets.get(JdkSockets.IN_IMPL, e)
                    : c == JdkSockets.OUT ? JdkSockets.get(JdkSockets.OUT_IMPL, e) : null;
        }
        return impl != null && impl.getClass() == JdkSockets.IMPL ? impl : null;
    }

    /** The implementation's state lock (under which the JDK closes its descriptor). */
    static Object socketStateLock(Object impl) {
        return JdkSockets.get(JdkSockets.STATE_LOCK, impl);
    }

    /** Whether the implementation is open (not closing nor closed): the JDK's {@code isOpen}. */
    static boolean socketOpen(Object impl) {
        return JdkSockets.getInt(JdkSockets.STATE, impl) < JdkSockets.ST_CLOSING;
    }

    /** The implementation's descriptor number (-1 once closed). */
    static int socketFd(Object impl) {
        Object fd = JdkSockets.get(JdkSockets.FD, impl);
        return fd == null ? -1 : JdkSockets.getInt(JdkSockets.FD_VAL, fd);
    }

    /** The implementation's read timeout ({@code SO_TIMEOUT}) in milliseconds, 0 for none. */
    static int socketTimeout(Object impl) {
        return JdkSockets.getInt(JdkSockets.TIMEOUT, impl);
    }

    /**
     * Getters into {@code sun.nio.ch.NioSocketImpl}, its streams and {@code java.net.Socket}: need
     * {@code sun.nio.ch}, {@code java.net} and {@code java.io} of {@code java.base} open to this
     * module (the agent opens them). Decided once; where they are not there ({@link #OK} false),
     * socket reads wait in their syscall. Immutable.
     */
    private static final class JdkSockets {
        static final boolean OK;
        static final Class<?> IMPL; // sun.nio.ch.NioSocketImpl
        static final Class<?> IN; // its input stream, NioSocketImpl$1
        static final Class<?> OUT; // its output stream, NioSocketImpl$2
        static final MethodHandle IN_IMPL; // NioSocketImpl$1.this$0
        static final MethodHandle OUT_IMPL; // NioSocketImpl$2.this$0
        static final MethodHandle SOCKET_IMPL; // Socket.impl
        static final Class<?> DELEGATING; // java.net.DelegatingSocketImpl: a client Socket's impl around the JDK's
        static final MethodHandle DELEGATE; // DelegatingSocketImpl.delegate
        static final MethodHandle STATE_LOCK; // NioSocketImpl.stateLock
        static final MethodHandle FD; // SocketImpl.fd (a FileDescriptor)
        /** {@code (Object) int}: NioSocketImpl.state (volatile). */
        static final MethodHandle STATE;
        /** {@code (Object) int}: NioSocketImpl.timeout (volatile). */
        static final MethodHandle TIMEOUT;
        /** {@code (Object) int}: FileDescriptor.fd. */
        static final MethodHandle FD_VAL;
        /** NioSocketImpl.ST_CLOSING: a state at or above it is closing or closed. */
        static final int ST_CLOSING;

        static {
            boolean ok;
            Class<?> impl = null, in = null, out = null;
            MethodHandle inImpl = null, outImpl = null, socketImpl = null, stateLock = null, fd = null;
            Class<?> delegating = null;
            MethodHandle delegate = null;
            MethodHandle state = null, timeout = null, fdVal = null;
            int closing = 0;
            try {
                MethodHandles.Lookup self = MethodHandles.lookup();
                impl = Class.forName("sun.nio.ch.NioSocketImpl");
                in = Class.forName("sun.nio.ch.NioSocketImpl$1");
                out = Class.forName("sun.nio.ch.NioSocketImpl$2");
                if (!java.io.InputStream.class.isAssignableFrom(in)
                        || !java.io.OutputStream.class.isAssignableFrom(out)) {
                    throw new ClassNotFoundException("NioSocketImpl's streams are not $1 and $2");
                }
                inImpl = getter(self, in, "this$0", impl);
                outImpl = getter(self, out, "this$0", impl);
                socketImpl = getter(self, java.net.Socket.class, "impl", java.net.SocketImpl.class);
                delegating = Class.forName("java.net.DelegatingSocketImpl");
                delegate = getter(self, delegating, "delegate", java.net.SocketImpl.class);
                stateLock = getter(self, impl, "stateLock", Object.class);
                fd = getter(self, java.net.SocketImpl.class, "fd", java.io.FileDescriptor.class);
                MethodHandles.Lookup l = MethodHandles.privateLookupIn(impl, self);
                state = l.findGetter(impl, "state", int.class).asType(MethodType.methodType(int.class, Object.class));
                timeout =
                        l.findGetter(impl, "timeout", int.class).asType(MethodType.methodType(int.class, Object.class));
                closing = (int)
                        l.findStaticVarHandle(impl, "ST_CLOSING", int.class).get();
                fdVal = MethodHandles.privateLookupIn(java.io.FileDescriptor.class, self)
                        .findGetter(java.io.FileDescriptor.class, "fd", int.class)
                        .asType(MethodType.methodType(int.class, Object.class));
                ok = true;
            } catch (ReflectiveOperationException | RuntimeException e) {
                ok = false; // not open (no agent), or a JDK whose classes differ
                impl = in = out = delegating = null;
                delegate = null;
                inImpl = outImpl = socketImpl = stateLock = fd = state = timeout = fdVal = null;
            }
            OK = ok;
            IMPL = impl;
            IN = in;
            OUT = out;
            IN_IMPL = inImpl;
            OUT_IMPL = outImpl;
            SOCKET_IMPL = socketImpl;
            DELEGATING = delegating;
            DELEGATE = delegate;
            STATE_LOCK = stateLock;
            FD = fd;
            STATE = state;
            TIMEOUT = timeout;
            FD_VAL = fdVal;
            ST_CLOSING = closing;
        }

        static Object get(MethodHandle getter, Object o) {
            try {
                return (Object) getter.invokeExact(o);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new AssertionError(t); // a getter throws nothing checked
            }
        }

        /** An {@code (Object) int} getter's value. */
        static int getInt(MethodHandle getter, Object o) {
            try {
                return (int) getter.invokeExact(o);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new AssertionError(t); // a getter throws nothing checked
            }
        }
    }

    /** The stream a wrapper of {@code kind} reads or writes, or null (closed, a channel, a coder not the JDK's). */
    private static Object inner(int kind, Object s) {
        try {
            return switch (kind) {
                case FILTER_IN -> (Object) FILTER_IN_IN.invokeExact(s);
                case FILTER_OUT -> (Object) FILTER_OUT_OUT.invokeExact(s);
                case FILTER_READER -> (Object) FILTER_READER_IN.invokeExact(s);
                case BUFFERED_READER -> (Object) BUFFERED_READER_IN.invokeExact(s);
                case STREAM_READER -> {
                    Object sd = (Object) READER_DECODER.invokeExact(s);
                    yield sd != null && jdkCoder((Object) DECODER_CODER.invokeExact(sd))
                            ? (Object) DECODER_IN.invokeExact(sd)
                            : null;
                }
                case BUFFERED_WRITER -> (Object) BUFFERED_WRITER_OUT.invokeExact(s);
                case STREAM_WRITER -> {
                    Object se = (Object) WRITER_ENCODER.invokeExact(s);
                    yield se != null && jdkCoder((Object) ENCODER_CODER.invokeExact(se))
                            ? (Object) ENCODER_OUT.invokeExact(se)
                            : null;
                }
                case PRINT_WRITER -> (Object) PRINT_WRITER_OUT.invokeExact(s);
                case SOCKET_IN -> (Object) SOCKET_IN_IN.invokeExact(s);
                case SOCKET_OUT -> (Object) SOCKET_OUT_OUT.invokeExact(s);
                default -> throw Fatal.fatal("PeerStreams.inner: kind " + kind + " wraps nothing");
            };
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t); // a getter throws nothing checked
        }
    }

    /**
     * Whether an {@code SSLSocket}'s stream's connection is negotiated (a plain read of the flag the
     * socket's own reads and writes test: a stale false only makes this call no syscall).
     */
    private static boolean negotiated(int kind, Object s) {
        try {
            Object socket =
                    kind == SSL_IN ? (Object) SSL_IN_SOCKET.invokeExact(s) : (Object) SSL_OUT_SOCKET.invokeExact(s);
            Object context = socket == null ? null : (Object) SSL_CONTEXT.invokeExact(socket);
            return context != null && (boolean) SSL_NEGOTIATED.invokeExact(context);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t); // a getter throws nothing checked
        }
    }

    private static boolean jdkCoder(Object coder) {
        return coder != null && JDK_CLASS.get(coder.getClass());
    }
}
