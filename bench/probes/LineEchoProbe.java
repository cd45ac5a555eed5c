import dev.gort.Go;
import java.io.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.*;

/**
 * A diagnostic, not part of the build: a line-echo server on java.net sockets, one goroutine per
 * connection reading with {@code BufferedReader.readLine} and answering with
 * {@code PrintWriter.println}/{@code flush}, loaded by platform-thread clients that each send
 * {@code rounds} lines and wait for every echo. It prints the total time and the round trips'
 * latency percentiles. Under the agent a handler whose read would block waits in the network
 * poller, as Go's reads do, and then reads and flushes in syscalls (agent/README.md, "JDK calls
 * that block"); {@code threads} serves each connection on a platform thread instead;
 * {@code -Dserver.port=N} sends the clients to a server of another process instead, such as the Go
 * twin {@code line_echo_server.go} (it prints its port).
 *
 * <pre>
 * javac -d /tmp/lep -cp bench/target/benchmarks.jar bench/probes/LineEchoProbe.java
 * $(./gort jdk)/bin/java -javaagent:agent/target/gort-agent-0.1.0-SNAPSHOT.jar --enable-native-access=ALL-UNNAMED \
 *     -Dgort.gomaxprocs=1 -cp /tmp/lep:bench/target/benchmarks.jar LineEchoProbe 50 2000
 * $(./gort jdk)/bin/java -cp /tmp/lep:bench/target/benchmarks.jar LineEchoProbe 50 2000 threads
 * go build -o /tmp/lep/goecho bench/probes/line_echo_server.go; GOMAXPROCS=1 /tmp/lep/goecho &amp;
 * $(./gort jdk)/bin/java -Dserver.port=PORT -cp /tmp/lep:bench/target/benchmarks.jar LineEchoProbe 50 2000
 * </pre>
 */
public class LineEchoProbe {
    static final java.util.concurrent.ConcurrentLinkedQueue<Long> LAT = new java.util.concurrent.ConcurrentLinkedQueue<>();
    public static void main(String[] a) throws Exception {
        int clients = Integer.parseInt(a[0]), rounds = Integer.parseInt(a[1]);
        boolean threads = a.length > 2 && a[2].equals("threads");
        ServerSocket ss = new ServerSocket(0, 512, InetAddress.getLoopbackAddress());
        Runnable server = () -> {
            try {
                while (true) {
                    Socket s = ss.accept();
                    Runnable h = () -> handle(s);
                    if (threads) new Thread(h).start(); else Go.go(h);
                }
            } catch (IOException e) { /* closed */ }
        };
        if (Integer.getInteger("server.port", 0) > 0) {
            long took = load(Integer.getInteger("server.port"), clients, rounds);
            long[] l = LAT.stream().mapToLong(Long::longValue).sorted().toArray();
            System.out.println("RESULT ms=" + took / 1_000_000 + " rtt-us p50=" + l[l.length / 2] / 1000 + " p99=" + l[(int) (l.length * 0.99)] / 1000 + " max=" + l[l.length - 1] / 1000);
            System.exit(0);
        }
        CountDownLatch done = new CountDownLatch(1);
        long[] took = new long[1];
        Thread load = new Thread(() -> {
            try { took[0] = load(ss.getLocalPort(), clients, rounds); } catch (Exception e) { e.printStackTrace(); }
            try { ss.close(); } catch (IOException e) {}
            done.countDown();
        });
        load.start();
        if (threads) { new Thread(server).start(); done.await(); }
        else Go.run(() -> { Go.go(server); while (done.getCount() > 0) { dev.gort.Time.sleep(java.time.Duration.ofMillis(5)); } });
        long[] l = LAT.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.println("RESULT ms=" + took[0] / 1_000_000 + " rtt-us p50=" + l[l.length / 2] / 1000 + " p99=" + l[(int) (l.length * 0.99)] / 1000 + " max=" + l[l.length - 1] / 1000);
        System.exit(0);
    }

    static void handle(Socket s) {
        try (s; BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                out.println(line);
                out.flush();
            }
        } catch (IOException e) { }
    }

    static long load(int port, int clients, int rounds) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        CyclicBarrier start = new CyclicBarrier(clients + 1);
        Future<?>[] f = new Future<?>[clients];
        for (int c = 0; c < clients; c++) {
            f[c] = pool.submit(() -> {
                try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
                     BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                     PrintWriter out = new PrintWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8))) {
                    s.setTcpNoDelay(true);
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        long t = System.nanoTime();
                        out.println("hello " + r); out.flush();
                        if (!in.readLine().equals("hello " + r)) throw new IllegalStateException("bad echo");
                        LAT.add(System.nanoTime() - t);
                    }
                }
                return null;
            });
        }
        start.await();
        long t0 = System.nanoTime();
        for (Future<?> x : f) x.get();
        long t = System.nanoTime() - t0;
        pool.shutdown();
        return t;
    }
}
