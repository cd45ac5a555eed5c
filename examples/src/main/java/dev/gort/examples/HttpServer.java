package dev.gort.examples;

import dev.gort.Go;
import dev.gort.net.Conn;
import dev.gort.net.Listener;
import dev.gort.net.Net;
import dev.gort.net.OpError;
import dev.gort.sync.WaitGroup;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A small HTTP/1.1 server on dev.gort.net (GET, keep-alive), a goroutine per connection reading
 * requests with an ordinary {@code BufferedReader} over {@code Conn.inputStream()}: Java code
 * parks the goroutine, not the carrier. A client on the same runtime sends three requests on one
 * kept-alive connection, then one with {@code Connection: close}.
 *
 * <pre>
 * ./gort example HttpServer
 * </pre>
 *
 * <p>Go: a net/http-shaped server written by hand on net.Listen
 */
public final class HttpServer {
    private HttpServer() {}

    static final Args ARGS = Args.of("HttpServer");

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static List<String> run(PrintStream out, String... args) {
        ARGS.parse(args);
        List<String> lines = new ArrayList<>();
        Go.run(() -> {
            try {
                Listener ln = Net.listen("tcp", "127.0.0.1:0");
                WaitGroup server = new WaitGroup();
                server.go(() -> serve(ln));
                try (Conn c = Net.dial("tcp", ln.addr().toString())) {
                    BufferedReader in =
                            new BufferedReader(new InputStreamReader(c.inputStream(), StandardCharsets.US_ASCII));
                    String[] paths = {"/", "/hello", "/missing", "/hello"};
                    for (int i = 0; i < paths.length; i++) {
                        boolean last = i == paths.length - 1;
                        c.write(("GET " + paths[i] + " HTTP/1.1\r\nHost: " + ln.addr() + "\r\n"
                                        + (last ? "Connection: close\r\n" : "") + "\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                        String status = in.readLine();
                        int len = 0;
                        for (String h; !(h = in.readLine()).isEmpty(); ) {
                            if (h.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                                len = Integer.parseInt(h.substring(15).trim());
                            }
                        }
                        char[] body = new char[len];
                        for (int got = 0; got < len; ) {
                            got += in.read(body, got, len - got);
                        }
                        lines.add("GET " + paths[i] + " -> " + status + ": " + new String(body).trim());
                    }
                    lines.add("after Connection: close, the server's side ended: read " + in.read());
                }
                ln.close();
                server.await();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        lines.forEach(out::println);
        return lines;
    }

    static void serve(Listener ln) {
        for (; ; ) {
            Conn c;
            try {
                c = ln.accept();
            } catch (OpError e) {
                return; // closed
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
            Go.go(() -> handle(c));
        }
    }

    /** One connection: requests until EOF or Connection: close. */
    static void handle(Conn c) {
        try (c) {
            BufferedReader in = new BufferedReader(new InputStreamReader(c.inputStream(), StandardCharsets.US_ASCII));
            OutputStream out = c.outputStream();
            for (String req; (req = in.readLine()) != null; ) {
                boolean close = false;
                for (String h; (h = in.readLine()) != null && !h.isEmpty(); ) {
                    if (h.equalsIgnoreCase("Connection: close")) {
                        close = true;
                    }
                }
                String[] parts = req.split(" ");
                String path = parts.length > 1 ? parts[1] : "";
                String status;
                String body;
                if (!parts[0].equals("GET")) {
                    status = "405 Method Not Allowed";
                    body = "method not allowed\n";
                } else if (path.equals("/")) {
                    status = "200 OK";
                    body = "gort: Go's scheduler, with a network poller\n";
                } else if (path.equals("/hello")) {
                    status = "200 OK";
                    body = "hello from goroutine " + Go.goid() + "\n";
                } else {
                    status = "404 Not Found";
                    body = "404 page not found\n";
                }
                byte[] b = body.getBytes(StandardCharsets.US_ASCII);
                out.write(("HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nContent-Length: " + b.length
                                + (close ? "\r\nConnection: close" : "") + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.write(b);
                if (close) {
                    return;
                }
            }
        } catch (IOException e) {
            // the client went away
        }
    }
}
