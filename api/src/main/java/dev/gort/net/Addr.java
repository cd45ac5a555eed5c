package dev.gort.net;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * A network endpoint: Go's {@code net.Addr} ({@code *net.TCPAddr}, {@code *net.UDPAddr}).
 * {@link #toString} is Go's {@code String()}: {@code 127.0.0.1:8080}, {@code [::1]:8080}.
 *
 * <p>Go: net/tcpsock.go TCPAddr, net/udpsock.go UDPAddr
 */
public record Addr(String network, InetAddress ip, int port) {
    /** Go: (*TCPAddr).Network: {@code tcp} or {@code udp}. */
    @Override
    public String network() {
        return network;
    }

    /** The JDK's form of this address. */
    public InetSocketAddress toInetSocketAddress() {
        return new InetSocketAddress(ip, port);
    }

    static Addr of(String network, java.net.SocketAddress sa) {
        if (!(sa instanceof InetSocketAddress isa)) {
            return null;
        }
        return new Addr(network, isa.getAddress(), isa.getPort());
    }

    /** Go: (*TCPAddr).String, net.JoinHostPort. */
    @Override
    public String toString() {
        String host = ip == null ? "" : ip.getHostAddress();
        if (ip instanceof Inet6Address) {
            int pct = host.indexOf('%');
            if (pct >= 0 && ((Inet6Address) ip).getScopeId() == 0 && ((Inet6Address) ip).getScopedInterface() == null) {
                host = host.substring(0, pct);
            }
            if (host.equals("0:0:0:0:0:0:0:1")) {
                host = "::1";
            } else if (host.equals("0:0:0:0:0:0:0:0")) {
                host = "::";
            }
            return "[" + host + "]:" + port;
        }
        return host + ":" + port;
    }
}
