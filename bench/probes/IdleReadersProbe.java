import dev.gort.Go;
import java.io.*;
import java.net.*;
import java.util.*;
import java.util.concurrent.*;

/**
 * A diagnostic, not part of the build: {@code n} idle loopback connections on java.net sockets,
 * each read by a goroutine in {@code BufferedReader.readLine}; after 1.5 s it prints the JVM's live
 * threads, then closes the clients' sides and prints how long until every reader saw the end of
 * its stream. Under the agent each reader waits in the network poller (agent/README.md, "JDK
 * calls that block"), so the threads stay near GOMAXPROCS; a reader blocked in its read's syscall
 * held a thread each.
 *
 * <pre>
 * javac -d /tmp/irp -cp bench/target/benchmarks.jar bench/probes/IdleReadersProbe.java
 * $(./gort jdk)/bin/java -javaagent:agent/target/gort-agent-0.1.0-SNAPSHOT.jar --enable-native-access=ALL-UNNAMED \
 *     -Dgort.gomaxprocs=2 -cp /tmp/irp:bench/target/benchmarks.jar IdleReadersProbe 1000
 * </pre>
 */
public class IdleReadersProbe {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        ServerSocket ss = new ServerSocket(0, 2048, InetAddress.getLoopbackAddress());
        CountDownLatch ended = new CountDownLatch(n);
        List<Socket> clients = new ArrayList<>();
        Go.run(() -> {
            Go.go(() -> {
                try {
                    while (true) {
                        Socket s = ss.accept();
                        Go.go(() -> {
                            try (BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream()))) {
                                while (in.readLine() != null) {}
                            } catch (IOException e) {}
                            ended.countDown();
                        });
                    }
                } catch (IOException e) {}
            });
            try {
                for (int i = 0; i < n; i++) clients.add(new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort()));
                dev.gort.Time.sleep(java.time.Duration.ofMillis(1500));
                System.out.println("threads=" + java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount());
                long t0 = System.nanoTime();
                for (Socket s : clients) s.close();
                ended.await();
                System.out.println("all readers ended in ms=" + (System.nanoTime() - t0) / 1_000_000);
                ss.close();
            } catch (Exception e) { throw new RuntimeException(e); }
        });
        System.exit(0);
    }
}
