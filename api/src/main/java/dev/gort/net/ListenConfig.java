package dev.gort.net;

import dev.gort.context.Context;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;

/**
 * Go's {@code net.ListenConfig}: options for listening to an address, and Listen/ListenPacket with
 * a context, and the keep-alive period of accepted connections ({@link #setKeepAlive}). {@code new ListenConfig()} is Go's zero ListenConfig: {@link Net#listen} is {@code new
 * ListenConfig().listen(Context.background(), ...)}.
 *
 * <pre>{@code
 * ListenConfig lc = new ListenConfig();           // var lc net.ListenConfig
 * Listener ln = lc.listen(ctx, "tcp", ":8080");   // ln, err := lc.Listen(ctx, "tcp", ":8080")
 * }</pre>
 *
 * <p>The context is used while resolving the address on which to listen; it does not affect the
 * returned Listener or PacketConn (Go's words). Only a host name needs resolving: with a ctx done
 * before the lookup ends, the call fails with {@code listen tcp: lookup example.com: operation was
 * canceled} ({@code ...: i/o timeout}, a {@link DeadlineExceededException}, past ctx's deadline),
 * an {@link OpError} whose cause is ctx's error; an IP literal, or an empty host, needs no lookup
 * and listens whatever ctx's state, as Go's does. Binding is not bounded by ctx (Go's neither).
 *
 * <p>Not ported: Go's {@code Control} (a {@code syscall.RawConn} the JDK's channels do not give),
 * {@code KeepAliveConfig} (Go 1.23) and MPTCP.
 *
 * <p>Go: net/dial.go ListenConfig
 */
public final class ListenConfig {
    /** Go: ListenConfig.KeepAlive. Never null; read by listen. */
    private Duration keepAlive = Duration.ZERO;

    /** Go's zero ListenConfig. */
    public ListenConfig() {}

    /** The keep-alive period of accepted connections (see {@link #setKeepAlive}). Go: ListenConfig.KeepAlive. */
    public Duration keepAlive() {
        return keepAlive;
    }

    /**
     * The keep-alive period of the connections accepted by listeners made after this call: the
     * idle time before the first probe, rounded up to whole seconds (probes then go every 15 s, 9
     * of them, Go's defaults; an idle time the system refuses, above 32767 s on Linux, leaves it
     * and them the system's, as Go's SetKeepAliveConfig stops at its first error). Zero (the default) enables keep-alives with Go's 15 s; negative
     * disables them (the socket keeps the system's default, off). A listener keeps the period it
     * was made with. Returns this.
     *
     * <p>Go: ListenConfig.KeepAlive (Go 1.23+'s meaning: the Idle of a KeepAliveConfig)
     */
    public ListenConfig setKeepAlive(Duration d) {
        this.keepAlive = Objects.requireNonNull(d, "d");
        return this;
    }

    /**
     * Announces on the local network address: {@link Net#listen}'s networks and addresses, with
     * ctx bounding a host name's lookup (see {@link ListenConfig}), accepting connections with
     * this config's {@link #keepAlive}. Must be called from a goroutine.
     *
     * <p>Go: (*ListenConfig).Listen
     */
    public Listener listen(Context ctx, String network, String address) throws IOException {
        Objects.requireNonNull(ctx, "nil context");
        long ka = keepAlive.isNegative() ? -1 : Net.saturatedNanos(keepAlive);
        return Net.listen("ListenConfig.listen", ctx, ka, network, address);
    }

    /**
     * Announces on the local network address for datagrams: {@link Net#listenPacket}'s networks
     * and addresses, with ctx bounding a host name's lookup (see {@link ListenConfig}). Must be
     * called from a goroutine.
     *
     * <p>Go: (*ListenConfig).ListenPacket
     */
    public PacketConn listenPacket(Context ctx, String network, String address) throws IOException {
        Objects.requireNonNull(ctx, "nil context");
        return Net.listenPacket("ListenConfig.listenPacket", ctx, network, address);
    }
}
