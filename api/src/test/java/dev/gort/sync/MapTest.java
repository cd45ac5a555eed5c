package dev.gort.sync;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.Select;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's sync.Map semantics (map_test.go): the randomized comparison against a reference map
 * (TestMapMatchesRWMutex's quick.CheckEqual, here a fixed seed against a HashMap model),
 * concurrent Range, nested Range, Delete, Clear, concurrent Clear, CompareAndSwap of an absent key,
 * keys not leaked after Delete; and gort's own rules: nil keys and values, an atomic Clear.
 */
class MapTest {
    enum Op {
        LOAD,
        STORE,
        LOAD_OR_STORE,
        LOAD_AND_DELETE,
        DELETE,
        SWAP,
        COMPARE_AND_SWAP,
        COMPARE_AND_DELETE,
        CLEAR
    }

    record Call(Op op, String k, String v, String neu) {}

    record Result(Object value, boolean ok) {}

    /**
     * The reference: Go's RWMutexMap (map_reference_test.go), a plain map with Go's semantics, used
     * by one goroutine only. A present null value is {@code containsKey}.
     */
    static final class ModelMap {
        final HashMap<String, String> m = new HashMap<>();

        Result apply(Call c) {
            String k = c.k();
            return switch (c.op()) {
                case LOAD -> m.containsKey(k) ? new Result(m.get(k), true) : new Result(null, false);
                case STORE -> {
                    m.put(k, c.v());
                    yield new Result(null, false);
                }
                case LOAD_OR_STORE -> {
                    if (m.containsKey(k)) {
                        yield new Result(m.get(k), true);
                    }
                    m.put(k, c.v());
                    yield new Result(c.v(), false);
                }
                case LOAD_AND_DELETE -> {
                    boolean had = m.containsKey(k);
                    yield new Result(m.remove(k), had);
                }
                case DELETE -> {
                    m.remove(k);
                    yield new Result(null, false);
                }
                case SWAP -> {
                    boolean had = m.containsKey(k);
                    yield new Result(m.put(k, c.v()), had);
                }
                case COMPARE_AND_SWAP -> {
                    if (m.containsKey(k) && Objects.equals(c.v(), m.get(k))) {
                        m.put(k, c.neu());
                        yield new Result(null, true);
                    }
                    yield new Result(null, false);
                }
                case COMPARE_AND_DELETE -> {
                    if (m.containsKey(k) && Objects.equals(c.v(), m.get(k))) {
                        m.remove(k);
                        yield new Result(null, true);
                    }
                    yield new Result(null, false);
                }
                case CLEAR -> {
                    m.clear();
                    yield new Result(null, false);
                }
            };
        }
    }

    static Result apply(Map<String, String> m, Call c) {
        String k = c.k();
        return switch (c.op()) {
            case LOAD -> of(m.load(k));
            case STORE -> {
                m.store(k, c.v());
                yield new Result(null, false);
            }
            case LOAD_OR_STORE -> of(m.loadOrStore(k, c.v()));
            case LOAD_AND_DELETE -> of(m.loadAndDelete(k));
            case DELETE -> {
                m.delete(k);
                yield new Result(null, false);
            }
            case SWAP -> of(m.swap(k, c.v()));
            case COMPARE_AND_SWAP -> new Result(null, m.compareAndSwap(k, c.v(), c.neu()));
            case COMPARE_AND_DELETE -> new Result(null, m.compareAndDelete(k, c.v()));
            case CLEAR -> {
                m.clear();
                yield new Result(null, false);
            }
        };
    }

    static Result of(Map.Loaded<String> l) {
        return new Result(l.value(), l.ok());
    }

    /**
     * Go's randValue, over a small alphabet so that calls hit keys already present, and null one
     * time in eight (Go's nil interface value).
     */
    static String randValue(Random r) {
        if (r.nextInt(8) == 0) {
            return null;
        }
        char[] b = new char[r.nextInt(3)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (char) ('a' + r.nextInt(3));
        }
        return new String(b);
    }

    /**
     * Go: TestMapMatchesRWMutex / TestMapMatchesDeepCopy (quick.CheckEqual: 100 random call
     * sequences). Here 2,000 sequences of up to 50 calls from a fixed seed; each call's result and
     * the final contents (by Range) must equal the reference's.
     */
    @Test
    void matchesAReferenceMapOnRandomCallSequences() {
        Random r = new Random(0x5eed);
        for (int seq = 0; seq < 2000; seq++) {
            Map<String, String> m = new Map<>();
            ModelMap model = new ModelMap();
            List<Call> calls = new ArrayList<>();
            int n = r.nextInt(50);
            for (int i = 0; i < n; i++) {
                Op op = Op.values()[r.nextInt(Op.values().length)];
                Call c = new Call(op, randValue(r), randValue(r), randValue(r));
                calls.add(c);
                Result want = model.apply(c);
                Result got = apply(m, c);
                int at = seq;
                assertEquals(want, got, () -> "sequence " + at + ", after " + calls);
            }
            HashMap<String, String> fin = new HashMap<>();
            m.range((k, v) -> {
                assertFalse(fin.containsKey(k), "Range visited " + k + " twice");
                fin.put(k, v);
                return true;
            });
            int at = seq;
            assertEquals(model.m, fin, () -> "final contents, sequence " + at + ": " + calls);
        }
    }

    /**
     * Go: TestConcurrentRange. While goroutines store multiples of each key's number and load,
     * every Range sees each of the 1,024 keys exactly once, with a value that is a multiple of it.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void concurrentRangeVisitsEveryKeyOnce(int procs) {
        GortTesting.run(procs, () -> {
            final int mapSize = 1 << 10;
            Map<Long, Long> m = new Map<>();
            for (long n = 1; n <= mapSize; n++) {
                m.store(n, n);
            }
            Chan<Void> done = Chan.make();
            WaitGroup wg = new WaitGroup();
            for (long g = Go.gomaxprocs(); g > 0; g--) {
                Random r = new Random(g);
                long gg = g;
                wg.go(() -> {
                    for (long i = 0; ; i++) {
                        boolean[] stop = {false};
                        Select.select(Select.recv(done, () -> stop[0] = true), Select.defaultCase(() -> {}));
                        if (stop[0]) {
                            return;
                        }
                        for (long n = 1; n < mapSize; n++) {
                            if (r.nextInt(mapSize) == 0) {
                                m.store(n, n * i * gg);
                            } else {
                                m.load(n);
                            }
                        }
                        Go.gosched(); // GOMAXPROCS=1: let Range run (no polls in test classes)
                    }
                });
            }
            for (int it = 64; it > 0; it--) {
                Set<Long> seen = new HashSet<>();
                m.range((k, v) -> {
                    check(v % k == 0, "while storing multiples of %d, Range saw value %d", k, v);
                    check(seen.add(k), "Range visited key %d twice", k);
                    return true;
                });
                check(seen.size() == mapSize, "Range visited %d elements of %d-element Map", seen.size(), mapSize);
                Go.gosched();
            }
            done.close();
            wg.await();
        });
    }

    /**
     * Go: TestIssue40999. A deleted key is not kept alive by the map (here: a weakly held key is
     * collected after Delete; System.gc() is retried a bounded number of times).
     */
    @Test
    void aDeletedKeyIsNotLeaked() {
        Map<Object, Object> m = new Map<>();
        m.store(null, new Object());
        Object p = new Object();
        WeakReference<Object> ref = new WeakReference<>(p);
        m.store(p, new Object());
        m.delete(p);
        p = null;
        for (int i = 0; i < 100 && !ref.refersTo(null); i++) {
            System.gc();
        }
        assertTrue(ref.refersTo(null), "a deleted key was not collected");
    }

    /** Go: TestMapRangeNestedCall (issue 46399). */
    @Test
    void nestedRange() {
        Map<Integer, String> m = new Map<>();
        String[] vals = {"hello", "world", "Go"};
        for (int i = 0; i < vals.length; i++) {
            m.store(i, vals[i]);
        }
        m.range((key, value) -> {
            m.range((k2, v2) -> {
                // No concurrent delete of the keys being visited: each loads as offered.
                Map.Loaded<String> l = m.load(k2);
                assertTrue(l.ok() && Objects.equals(l.value(), v2), "nested Range loads " + l + " want " + v2);
                // 42 was never kept: LoadOrStore must store.
                assertFalse(m.loadOrStore(42, "dummy").ok(), "nested Range loads an unexpected value");
                // Store then LoadAndDelete 42: no later Range sees it.
                m.store(42, "sync.Map");
                Map.Loaded<String> d = m.loadAndDelete(42);
                assertTrue(d.ok() && d.value().equals("sync.Map"), "LoadAndDelete: " + d);
                return true;
            });
            m.delete(key); // remove the key on the fly
            return true;
        });
        int[] length = {0};
        m.range((k, v) -> {
            length[0]++;
            return true;
        });
        assertEquals(0, length[0], "Map size after a Range of Delete");
    }

    /** Go: TestCompareAndSwap_NonExistingKey (issue 51972): a null old does not match absence. */
    @Test
    void compareAndSwapOfAnAbsentKeyFails() {
        Map<Object, Object> m = new Map<>();
        assertFalse(m.compareAndSwap(m, null, 42), "CompareAndSwap on a non-existing key succeeded");
        assertFalse(m.compareAndDelete(m, null), "CompareAndDelete on a non-existing key succeeded");
        assertFalse(m.load(m).ok());
    }

    /** Go: TestMapDelete. */
    @Test
    void deleteRemovesTheKey() {
        Map<String, Double> m = new Map<>();
        m.store("go", 1.22);
        Map.Loaded<Double> v = m.load("go");
        assertTrue(v.ok() && v.value() == 1.22, "Store failed to store: " + v);
        m.delete("go");
        v = m.load("go");
        assertTrue(v.value() == null && !v.ok(), "Delete failed: " + v);
        m.delete("go"); // absent: nothing
    }

    /** Go: TestMapClear. */
    @Test
    void clearEmptiesTheMapWhichStaysUsable() {
        Map<String, Double> m = new Map<>();
        m.store("go", 1.21);
        assertTrue(m.load("go").ok());
        m.clear();
        Map.Loaded<Double> v = m.load("go");
        assertTrue(v.value() == null && !v.ok(), "Clear failed: " + v);
        m.store("go", 1.21);
        v = m.load("go");
        assertTrue(v.ok() && v.value() == 1.21, "Store failed after clear: " + v);
    }

    /** Go: TestConcurrentClear. Stores, loads and clears at once; a final Clear leaves it empty. */
    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void concurrentClear(int procs) {
        GortTesting.run(procs, () -> {
            Map<Integer, Integer> m = new Map<>();
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 10; i++) {
                int k = i;
                wg.go(() -> m.store(k, k * 10));
                wg.go(() -> m.load(k));
                wg.go(m::clear);
            }
            wg.await();
            m.clear();
            m.range((k, v) -> {
                throw new AssertionError("after Clear, Range yielded (" + k + ", " + v + ")");
            });
        });
    }

    /**
     * Clear is atomic: one goroutine stores N keys in a shuffled order while another clears once;
     * the keys left are exactly those stored after the clear, a suffix of the store order. A clear
     * that removes bin by bin (ConcurrentHashMap.clear) keeps a key stored in a bin it had passed
     * and drops a later one stored in a bin ahead of it.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void aConcurrentClearLeavesASuffixOfTheStores(int procs) {
        GortTesting.run(procs, () -> {
            final int n = 4096;
            Random r = new Random(40999);
            for (int round = 0; round < 50; round++) {
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    order.add(i);
                }
                java.util.Collections.shuffle(order, r);
                Map<Integer, Integer> m = new Map<>();
                java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
                WaitGroup wg = new WaitGroup();
                wg.go(() -> {
                    for (int i = 0; i < n; i++) {
                        m.store(order.get(i), i);
                        if (i == n / 8) {
                            started.set(true);
                        }
                    }
                });
                wg.go(() -> {
                    // Not a channel: a woken goroutine would wait in the storer's runnext until the
                    // stores were over. Waiting on another P, the clear runs amid the stores.
                    while (!started.get()) {
                        Go.gosched();
                    }
                    m.clear();
                });
                wg.await();
                boolean[] present = new boolean[n]; // by position in the store order
                m.range((k, i) -> {
                    present[i] = true;
                    return true;
                });
                int first = 0;
                while (first < n && !present[first]) {
                    first++;
                }
                for (int i = first; i < n; i++) {
                    check(present[i], "round %d: store #%d kept, later store #%d dropped by clear", round, first, i);
                }
            }
        });
    }

    /** Go's nil keys and values: a stored null is present, and null is a key like any other. */
    @Test
    void nullKeysAndValuesArePresent() {
        Map<String, String> m = new Map<>();
        m.store("k", null);
        Map.Loaded<String> l = m.load("k");
        assertTrue(l.ok(), "a stored null value reads as absent");
        assertNull(l.value());
        assertTrue(m.loadOrStore("k", "x").ok(), "LoadOrStore stored over a null value");
        assertTrue(m.compareAndSwap("k", null, "v"), "CompareAndSwap(null -> v) of a stored null");
        assertEquals("v", m.load("k").value());
        m.store(null, "nil key");
        assertEquals(new Map.Loaded<>("nil key", true), m.load(null));
        Map.Loaded<String> s = m.swap(null, null);
        assertEquals(new Map.Loaded<>("nil key", true), s);
        assertTrue(m.compareAndDelete(null, null), "CompareAndDelete(null key, null value)");
        assertFalse(m.load(null).ok());
        int[] visits = {0};
        m.store(null, null);
        m.range((k, v) -> {
            visits[0]++;
            return true;
        });
        assertEquals(2, visits[0], "Range over k and the null key");
    }

    /** CompareAndSwap and CompareAndDelete compare with equals, as Go's == compares strings. */
    @Test
    void compareUsesEquals() {
        Map<String, String> m = new Map<>();
        m.store("k", new String("v"));
        assertTrue(m.compareAndSwap("k", new String("v"), "w"), "an equal old did not match");
        assertFalse(m.compareAndSwap("k", "v", "x"), "a different old matched");
        assertFalse(m.compareAndDelete("k", "v"));
        assertTrue(m.compareAndDelete("k", new String("w")));
        assertFalse(m.load("k").ok());
    }

    /** Range stops at the first false. */
    @Test
    void rangeStopsWhenFReturnsFalse() {
        Map<Integer, Integer> m = new Map<>();
        for (int i = 0; i < 100; i++) {
            m.store(i, i);
        }
        int[] calls = {0};
        m.range((k, v) -> ++calls[0] < 3);
        assertEquals(3, calls[0]);
    }
}
