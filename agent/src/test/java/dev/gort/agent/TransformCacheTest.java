package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.InstrumentationStats;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * The agent's on-disk cache ({@code -Dgort.agent.cache}, {@link TransformCache}): a second
 * transformer reading the same directory returns what the first computed, byte for byte, without
 * rewriting; anything the output depends on (the strategy's settings) keys a different entry; a
 * damaged entry is a miss and is written again; a strategy of one's own turns the cache off.
 */
class TransformCacheTest {
    /** A class with what every rewrite touches: a counted loop, an uncounted one, a monitor, calls. */
    static final class Work {
        int[] a = new int[100];

        int sum() {
            int s = 0;
            for (int i = 0; i < a.length; i++) {
                s += a[i];
            }
            return s;
        }

        synchronized int spin(int n) {
            while (n > 0) {
                n = n / 2 + (sum() & 0);
            }
            return n;
        }
    }

    /** Nothing to instrument: a leaf method and a constructor that only chains to Object's. */
    static final class Plain {
        int x;

        int get() {
            return x;
        }
    }

    private static byte[] bytes(Class<?> c) throws Exception {
        try (InputStream in = c.getClassLoader().getResourceAsStream(c.getName().replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }

    private static List<byte[]> classes() throws Exception {
        return List.of(
                bytes(Work.class), bytes(TransformCacheTest.class), bytes(ClassReader.class), bytes(MethodNode.class));
    }

    private static List<Path> entries(Path dir) throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).sorted().toList();
        }
    }

    @Test
    void aSecondTransformerReadsWhatTheFirstWroteByteForByte(@TempDir Path dir) throws Exception {
        Strategy backedge = Strategies.backedge(1024, true);
        GortTransformer uncached = new GortTransformer(backedge, false, List.of(), List.of());
        GortTransformer first = new GortTransformer(backedge, false, dir.toString());
        List<byte[]> in = classes();
        long hits0 = InstrumentationStats.cacheHits.get();
        for (byte[] b : in) {
            assertArrayEquals(uncached.transform("x", b), first.transform("x", b));
        }
        assertEquals(hits0, InstrumentationStats.cacheHits.get(), "an empty cache has nothing to hit");
        assertEquals(in.size(), entries(dir).size(), "one entry per class");

        GortTransformer second = new GortTransformer(backedge, false, dir.toString());
        long transformed0 = InstrumentationStats.classesTransformed.get();
        for (byte[] b : in) {
            byte[] want = uncached.transform("x", b);
            assertNotNull(want);
            assertArrayEquals(want, second.transform("x", b));
        }
        // Every class was a hit (other tests in this JVM only add to the counter, never take away).
        assertTrue(InstrumentationStats.cacheHits.get() - hits0 >= in.size(), "each class read from the cache");
        assertTrue(InstrumentationStats.classesTransformed.get() - transformed0 >= 2L * in.size());
        assertEquals(in.size(), entries(dir).size(), "nothing written again");
    }

    @Test
    void anotherStrideIsAnotherEntry(@TempDir Path dir) throws Exception {
        byte[] work = bytes(Work.class);
        byte[] mined = new GortTransformer(Strategies.backedge(1024, true), false, dir.toString()).transform("x", work);
        byte[] everyEdge =
                new GortTransformer(Strategies.backedge(0, true), false, dir.toString()).transform("x", work);
        assertFalse(java.util.Arrays.equals(mined, everyEdge), "stride 0 polls at every back-edge of sum()");
        assertArrayEquals(
                new GortTransformer(Strategies.backedge(0, true), false, List.of(), List.of()).transform("x", work),
                everyEdge);
        assertEquals(2, entries(dir).size(), "one entry per strategy");
        // and a verify switch is a third
        new GortTransformer(Strategies.backedge(0, true), true, dir.toString()).transform("x", work);
        assertEquals(3, entries(dir).size());
    }

    @Test
    void aDamagedEntryIsAMissAndIsWrittenAgain(@TempDir Path dir) throws Exception {
        byte[] work = bytes(Work.class);
        Strategy backedge = Strategies.backedge(1024, true);
        byte[] want = new GortTransformer(backedge, false, dir.toString()).transform("x", work);
        Path entry = entries(dir).getFirst();
        byte[] good = Files.readAllBytes(entry);

        byte[] flipped = good.clone();
        flipped[good.length / 2] ^= 1; // one bit of the class's bytes: the CRC no longer matches
        Files.write(entry, flipped);
        assertArrayEquals(want, new GortTransformer(backedge, false, dir.toString()).transform("x", work));
        assertArrayEquals(good, Files.readAllBytes(entry), "rewritten whole");

        Files.write(entry, java.util.Arrays.copyOf(good, good.length - 100)); // a torn write
        assertArrayEquals(want, new GortTransformer(backedge, false, dir.toString()).transform("x", work));
        assertArrayEquals(good, Files.readAllBytes(entry));
    }

    /**
     * An entry answers only for the class file it was made from: one found under another class's key
     * (as two keys alike would put it) is a miss, and that class gets its own rewrite.
     */
    @Test
    void anEntryMadeFromAnotherClassIsAMiss(@TempDir Path dir) throws Exception {
        Strategy backedge = Strategies.backedge(1024, true);
        byte[] work = bytes(Work.class);
        byte[] other = bytes(TransformCacheTest.class);
        GortTransformer t = new GortTransformer(backedge, false, dir.toString());
        t.transform("x", work);
        TransformCache cache = TransformCache.open(dir.toString(), backedge, false);
        Path workEntry = cache.entry(work);
        Path otherEntry = cache.entry(other);
        Files.createDirectories(otherEntry.getParent());
        Files.copy(workEntry, otherEntry);
        assertNull(cache.get(other), "Work's entry under the other class's key");
        byte[] want = new GortTransformer(backedge, false, List.of(), List.of()).transform("x", other);
        assertArrayEquals(want, new GortTransformer(backedge, false, dir.toString()).transform("x", other));
        assertNotNull(cache.get(other), "written again, its own");
    }

    @Test
    void aClassLeftAsItWasIsCachedAsSuch(@TempDir Path dir) throws Exception {
        byte[] iface = bytes(Plain.class); // a leaf method, no loop: nothing to do
        assertNull(new GortTransformer(Strategies.backedge(1024, true), false, dir.toString()).transform("x", iface));
        long hits0 = InstrumentationStats.cacheHits.get();
        assertNull(new GortTransformer(Strategies.backedge(1024, true), false, dir.toString()).transform("x", iface));
        assertEquals(1, entries(dir).size());
        assertTrue(InstrumentationStats.cacheHits.get() > hits0);
    }

    /** A strategy of one's own, whose settings the cache cannot see. */
    public static final class Mine implements Strategy {
        @Override
        public String name() {
            return "mine";
        }

        @Override
        public dev.gort.runtime.PreemptStrategy family() {
            return dev.gort.runtime.PreemptStrategy.BACKEDGE;
        }

        @Override
        public boolean pollAtEntry(String owner, MethodNode mn) {
            return true;
        }

        @Override
        public boolean pollAtBackedge(
                String owner, MethodNode mn, AbstractInsnNode branch, org.objectweb.asm.tree.LabelNode target) {
            return true;
        }
    }

    @Test
    void aStrategyOfOnesOwnTurnsTheCacheOffAndSaysSo(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        System.setErr(new PrintStream(err, true));
        try {
            assertNull(TransformCache.open(dir.toString(), new Mine(), false));
        } finally {
            System.setErr(saved);
        }
        assertTrue(
                err.toString().contains("gort-agent: not using -Dgort.agent.cache=" + dir)
                        && err.toString().contains(Mine.class.getName()),
                err.toString());
        byte[] work = bytes(Work.class);
        assertNotNull(new GortTransformer(new Mine(), false, dir.toString()).transform("x", work));
        assertEquals(0, entries(dir).size());
    }

    @Test
    void aDirectoryThatCannotBeMadeTurnsTheCacheOff(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        PrintStream saved = System.err;
        System.setErr(new PrintStream(new ByteArrayOutputStream(), true));
        try {
            assertNull(TransformCache.open(file.resolve("cache").toString(), Strategies.backedge(1024, true), false));
        } finally {
            System.setErr(saved);
        }
    }
}
