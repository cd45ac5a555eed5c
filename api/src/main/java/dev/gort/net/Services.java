package dev.gort.net;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Service names for ports ({@code http} is 80): Go's built-in table, then {@code /etc/services}
 * (read once, at the first name). Go: net/lookup.go services, lookupPortMap; net/port_unix.go
 * readServices.
 */
final class Services {
    private Services() {}

    /** Immutable once built (the holder's initialiser): network ("tcp", "udp") to name to port. */
    private static final class Table {
        static final Map<String, Map<String, Integer>> BY_NET = build();
    }

    /** The port of {@code service} on {@code net} ("tcp" or "udp"), or null. */
    static Integer lookup(String net, String service) {
        Map<String, Integer> m = Table.BY_NET.get(net);
        return m == null ? null : m.get(service.toLowerCase(Locale.ROOT));
    }

    private static Map<String, Map<String, Integer>> build() {
        Map<String, Map<String, Integer>> t = new HashMap<>();
        Map<String, Integer> tcp = new HashMap<>();
        Map<String, Integer> udp = new HashMap<>();
        t.put("tcp", tcp);
        t.put("udp", udp);
        // Go's table (net/lookup.go services)
        Object[] goTcp = {
            "ftp",
            21,
            "ftps",
            990,
            "gopher",
            70,
            "http",
            80,
            "https",
            443,
            "imap2",
            143,
            "imap3",
            220,
            "imaps",
            993,
            "pop3",
            110,
            "pop3s",
            995,
            "smtp",
            25,
            "submissions",
            465,
            "ssh",
            22,
            "telnet",
            23
        };
        for (int i = 0; i < goTcp.length; i += 2) {
            tcp.put((String) goTcp[i], (Integer) goTcp[i + 1]);
        }
        udp.put("domain", 53);
        // /etc/services: "name port/proto aliases... # comment"
        try {
            for (String line : Files.readAllLines(Path.of("/etc/services"), StandardCharsets.ISO_8859_1)) {
                int hash = line.indexOf('#');
                String[] f = (hash >= 0 ? line.substring(0, hash) : line).trim().split("\\s+");
                if (f.length < 2) {
                    continue;
                }
                int slash = f[1].indexOf('/');
                if (slash < 0) {
                    continue;
                }
                Map<String, Integer> m = t.get(f[1].substring(slash + 1));
                int port;
                try {
                    port = Integer.parseInt(f[1].substring(0, slash));
                } catch (NumberFormatException e) {
                    continue;
                }
                if (m == null || port < 0 || port > 65535) {
                    continue;
                }
                for (int i = 0; i < f.length; i++) {
                    if (i != 1) {
                        m.putIfAbsent(f[i].toLowerCase(Locale.ROOT), port);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /etc/services: Go's table alone, as Go
        }
        return t;
    }
}
