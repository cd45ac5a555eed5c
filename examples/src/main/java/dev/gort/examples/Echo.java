package dev.gort.examples;

import dev.gort.Go;
import dev.gort.net.Conn;
import dev.gort.net.Listener;
import dev.gort.net.Net;
import dev.gort.net.OpError;
import dev.gort.sync.WaitGroup;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * An echo server and its clients on dev.gort.net: a goroutine per connection, each parked on the
 * network poller between reads, so 100 clients need GOMAXPROCS threads, not 100. The server
 * stops when its listener is closed (the parked accept fails with Go's closed error).
 *
 * <pre>
 * ./gort example Echo [clients]
 * </pre>
 *
 * <p>Go: the classic net.Listen / Accept / io.Copy echo server, written anew
 */
public final class Echo {
    private Echo() {}

    // each client's connection takes two file descriptors, its own and the server's
    static final Args ARGS = Args.of("Echo").arg("clients", "clients, each on a connection of its own", 100, 1, 5000);

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static List<String> run(PrintStream out, String... args) {
        int clients = ARGS.parse(args)[0];
        List<String> lines = new ArrayList<>();
        Go.run(() -> {
            try {
                Listener ln = Net.listen("tcp", "127.0.0.1:0");
                WaitGroup server = new WaitGroup();
                server.go(() -> serve(ln));
                WaitGroup wg = new WaitGroup();
                long[] echoed = new long[clients];
                for (int i = 0; i < clients; i++) {
                    int id = i;
                    wg.go(() -> echoed[id] = client(ln.addr().toString(), id));
                }
                wg.await();
                long total = 0;
                for (long e : echoed) {
                    total += e;
                }
                lines.add(clients + " clients, " + total + " bytes echoed, threads: "
                        + Go.current().threads() + " (GOMAXPROCS=" + Go.gomaxprocs() + ")");
                ln.close();
                server.await();
                lines.add("server stopped");
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        lines.forEach(out::println);
        return lines;
    }

    /** for { c, err := ln.Accept(); if err != nil { return }; go io.Copy(c, c) } */
    static void serve(Listener ln) {
        for (; ; ) {
            Conn c;
            try {
                c = ln.accept();
            } catch (OpError e) {
                return; // use of closed network connection
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
            Go.go(() -> {
                byte[] buf = new byte[4096];
                try (c) {
                    for (int n; (n = c.read(buf)) >= 0; ) {
                        c.write(buf, 0, n);
                    }
                } catch (IOException e) {
                    // the client went away
                }
            });
        }
    }

    /** Sends ten lines, reads each back, half-closes, waits for EOF. Returns the bytes echoed. */
    static long client(String addr, int id) {
        try (Conn c = Net.dial("tcp", addr)) {
            long n = 0;
            byte[] buf = new byte[64];
            for (int i = 0; i < 10; i++) {
                byte[] msg = ("client " + id + " line " + i + "\n").getBytes(StandardCharsets.UTF_8);
                c.write(msg);
                int got = 0;
                while (got < msg.length) {
                    int k = c.read(buf, got, msg.length - got);
                    if (k < 0) {
                        throw new IOException("EOF");
                    }
                    got += k;
                }
                n += got;
            }
            c.closeWrite();
            if (c.read(buf) != -1) {
                throw new IOException("expected EOF");
            }
            return n;
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }
}
