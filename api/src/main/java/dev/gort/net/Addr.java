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

    /**
     * The address of a socket of {@code network}: its {@link #network()} is {@code tcp} or
     * {@code udp} also for {@code tcp4}, {@code udp6} ... (Go's TCPAddr.Network is "tcp" whatever
     * the network asked).
     */
    static Addr of(String network, java.net.SocketAddress sa) {
        if (!(sa instanceof InetSocketAddress isa)) {
            return null;
        }
        return new Addr(network.substring(0, 3), isa.getAddress(), isa.getPort());
    }

    /** Go: (*TCPAddr).String, net.JoinHostPort. */
    @Override
    public String toString() {
        String host = ip == null ? "" : ip.getHostAddress();
        if (ip instanceof Inet6Address v6) {
            int pct = host.indexOf('%');
            String zone = "";
            if (pct >= 0) {
                if (v6.getScopeId() != 0 || v6.getScopedInterface() != null) {
                    zone = host.substring(pct);
                }
            }
            return "[" + format6(v6.getAddress()) + zone + "]:" + port;
        }
        return host + ":" + port;
    }

    /**
     * An IPv6 address as Go's netip.Addr.String writes it (RFC 5952): lower-case hex groups
     * without leading zeros, the longest run of two or more zero groups (the first of equal ones)
     * as {@code ::}. The JDK writes every group ({@code 2001:db8:0:0:0:0:0:1}).
     */
    static String format6(byte[] a) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((a[2 * i] & 0xff) << 8) | (a[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
