package dev.gort.bench.lab.work;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gort.bench.lab.LabWorkload;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * The preemption lab's workloads: each a nested class named as the lab's row (see
 * {@code PreemptLab.WORKLOADS}). They are plain user code; the lab loads this class and its nested
 * classes, and Jackson, through a loader that rewrites them for each strategy.
 */
public final class Workloads {
    private Workloads() {}

    /** A call-free counted loop over an array (the kernels' arraySum): strip-mined under backedge. */
    public static final class ArraySum implements LabWorkload {
        private final int[] a = new SplittableRandom(7).ints(4096, -1000, 1000).toArray();

        @Override
        public long run(int n) {
            long s = 0;
            for (int r = 0; r < n; r++) {
                for (int i = 0; i < a.length; i++) {
                    s += a[i];
                }
            }
            return s;
        }

        @Override
        public int unit() {
            return 300;
        }
    }

    /** A call-free loop that is not counted (a long-indexed xorshift chain): the {@code none} check. */
    public static final class Spin implements LabWorkload {
        @Override
        public long run(int n) {
            long x = 88172645463325252L;
            long k = (long) n * 1000;
            while (k-- > 0) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            return x;
        }

        @Override
        public int unit() {
            return 1000;
        }
    }

    /** A JSON round trip with Jackson: build a tree, write it, parse it back, sum its numbers. */
    public static final class Json implements LabWorkload {
        private static final ObjectMapper MAPPER = new ObjectMapper();

        @Override
        public long run(int n) {
            try {
                ObjectNode root = MAPPER.createObjectNode();
                ArrayNode items = root.putArray("items");
                for (int i = 0; i < n; i++) {
                    ObjectNode o = items.addObject();
                    o.put("id", i);
                    o.put("name", "item-" + i);
                    o.put("price", i * 0.25);
                    o.putArray("tags").add("t" + (i % 7)).add("u" + (i % 3));
                }
                String text = MAPPER.writeValueAsString(root);
                JsonNode back = MAPPER.readTree(text);
                long s = text.length();
                for (JsonNode o : back.get("items")) {
                    s += o.get("id").asLong()
                            + o.get("name").asText().length()
                            + o.get("tags").size();
                }
                return s;
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public int unit() {
            return 200;
        }
    }

    /** Regex matching over generated log lines (java.util.regex: JDK code). */
    public static final class Regex implements LabWorkload {
        private static final Pattern P = Pattern.compile("user=(\\w+) id=(\\d+) ms=(\\d+(?:\\.\\d+)?)");

        @Override
        public long run(int n) {
            long s = 0;
            for (int i = 0; i < n; i++) {
                String line = "ts=" + i + " user=u" + (i % 97) + " id=" + (i * 31) + " ms=" + (i % 1000) + ".5 ok";
                Matcher m = P.matcher(line);
                if (m.find()) {
                    s += m.group(1).length()
                            + Long.parseLong(m.group(2))
                            + m.group(3).length();
                }
            }
            return s;
        }

        @Override
        public int unit() {
            return 2000;
        }
    }

    /** Arrays.sort (JDK code: no polls inside, so not preemptible while it runs). */
    public static final class Sort implements LabWorkload {
        @Override
        public long run(int n) {
            int[] a = new SplittableRandom(n).ints(n * 100, 0, 1 << 30).toArray();
            Arrays.sort(a);
            return a[0] + a[a.length / 2] + (long) a[a.length - 1];
        }

        @Override
        public int unit() {
            return 200;
        }
    }

    /** A stream pipeline (JDK's streams driving this class's lambdas). */
    public static final class Stream implements LabWorkload {
        @Override
        public long run(int n) {
            return IntStream.range(0, n * 100)
                    .map(i -> i * 31 + 7)
                    .filter(i -> (i & 3) != 0)
                    .mapToLong(i -> (long) i * i % 1000)
                    .sum();
        }

        @Override
        public int unit() {
            return 1000;
        }
    }

    /** Naive recursive Fibonacci: no loops at all. */
    public static final class Fib implements LabWorkload {
        static int fib(int k) {
            return k < 2 ? k : fib(k - 1) + fib(k - 2);
        }

        @Override
        public long run(int n) {
            return fib(n);
        }

        @Override
        public int unit() {
            return 24;
        }
    }

    /** Recursive descent over a binary tree. */
    public static final class TreeWalk implements LabWorkload {
        record Node(int v, Node l, Node r) {}

        private static Node build(int depth, int v) {
            return depth == 0 ? null : new Node(v, build(depth - 1, v * 2), build(depth - 1, v * 2 + 1));
        }

        private static long walk(Node t) {
            return t == null ? 0 : t.v() + walk(t.l()) + 3 * walk(t.r());
        }

        private final Node tree = build(14, 1);

        @Override
        public long run(int n) {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += walk(tree) ^ i;
            }
            return s;
        }

        @Override
        public int unit() {
            return 5;
        }
    }

    /** A HashMap-heavy loop: boxing, hashing, resizing (JDK code under a user loop). */
    public static final class HashMapLoop implements LabWorkload {
        @Override
        public long run(int n) {
            Map<Integer, Integer> m = new HashMap<>();
            for (int i = 0; i < n * 100; i++) {
                m.merge(i % 4099, i, Integer::sum);
            }
            long s = 0;
            for (Map.Entry<Integer, Integer> e : m.entrySet()) {
                s += (long) e.getKey() * e.getValue();
            }
            return s;
        }

        @Override
        public int unit() {
            return 300;
        }
    }

    /** Polymorphic calls through an interface (three receivers, megamorphic at the call site). */
    public static final class Iface implements LabWorkload {
        interface Shape {
            long area(int k);
        }

        record Sq(int s) implements Shape {
            public long area(int k) {
                return (long) s * s + k;
            }
        }

        record Rect(int w, int h) implements Shape {
            public long area(int k) {
                return (long) w * h - k;
            }
        }

        record Tri(int b, int h) implements Shape {
            public long area(int k) {
                return (long) b * h / 2 ^ k;
            }
        }

        private final Shape[] shapes = {new Sq(3), new Rect(4, 5), new Tri(6, 7)};

        @Override
        public long run(int n) {
            long s = 0;
            for (int i = 0; i < n * 1000; i++) {
                s += shapes[i % 3].area(i);
            }
            return s;
        }

        @Override
        public int unit() {
            return 500;
        }
    }

    /**
     * A long loop-free method of this class called from a counted loop: strip mining keeps the
     * call in the strip (own class), so one strip is {@code stride} long calls (the known late case).
     */
    public static final class LongMethod implements LabWorkload {
        static long mix(long x, int i) {
            x = x * 6364136223846793005L + 1442695040888963407L + i;
            x ^= x >>> 33;
            x *= 0xff51afd7ed558ccdL;
            x ^= x >>> 33;
            x *= 0xc4ceb9fe1a85ec53L;
            x ^= x >>> 33;
            x = Long.rotateLeft(x, i & 63) + 0x9e3779b97f4a7c15L;
            x ^= x >>> 29;
            x *= 0xbf58476d1ce4e5b9L;
            x ^= x >>> 27;
            x *= 0x94d049bb133111ebL;
            x ^= x >>> 31;
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 33;
            x *= 0xff51afd7ed558ccdL;
            x ^= x >>> 33;
            x *= 0xc4ceb9fe1a85ec53L;
            x ^= x >>> 33;
            x = Long.rotateRight(x, (i >>> 3) & 63) ^ 0x2545f4914f6cdd1dL;
            x ^= x >>> 29;
            x *= 0xbf58476d1ce4e5b9L;
            x ^= x >>> 27;
            x *= 0x94d049bb133111ebL;
            x ^= x >>> 31;
            return x;
        }

        @Override
        public long run(int n) {
            long x = 1;
            for (int i = 0; i < n * 1000; i++) {
                x = mix(x, i);
            }
            return x;
        }

        @Override
        public int unit() {
            return 100;
        }
    }

    /**
     * A loop whose every iteration holds a Java monitor for an inner loop: the polls inside are
     * refused (refusedMonitor) and the request is re-armed at the exit, honoured at the outer
     * loop's next back-edge poll.
     */
    public static final class Monitor implements LabWorkload {
        private final Object lock = new Object();
        private long total;

        @Override
        public long run(int n) {
            for (int b = 0; b < n; b++) {
                synchronized (lock) {
                    long s = total;
                    for (long k = 0; k < 1000L; k++) {
                        s += k ^ (k >>> 3) ^ b;
                    }
                    total = s;
                }
            }
            long t = total;
            total = 0;
            return t;
        }

        @Override
        public int unit() {
            return 1000;
        }
    }
}
