package dev.gort.sync;

import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiPredicate;

/**
 * Go's {@code sync.Map}: a map safe for concurrent use by many goroutines without further locking,
 * with Go's method set. As Go says, most code should use a plain map with its own locking; this one
 * suits caches whose entries are written once and read many times, and goroutines working on
 * disjoint sets of keys.
 *
 * <h2>Not a port</h2>
 * The entries live in a {@link ConcurrentHashMap}: Go 1.24+ uses a concurrent hash-trie
 * (internal/sync.HashTrieMap), earlier Go a read-only map plus a locked dirty map; neither is ported.
 * No operation parks the goroutine: ConcurrentHashMap's updates lock one bin briefly with a Java
 * monitor (with no gort park inside it), its reads lock nothing. What the port keeps is Go's
 * contract, method by method:
 *
 * <ul>
 *   <li><b>Memory model.</b> A write "synchronizes before" every read that observes it, as in Go:
 *       ConcurrentHashMap's update of a key happens-before any retrieval that sees the update.
 *       Load, LoadAndDelete, LoadOrStore, Swap, CompareAndSwap and CompareAndDelete are reads;
 *       Delete, LoadAndDelete, Store, Swap are writes, LoadOrStore when it stores, CompareAndSwap
 *       and CompareAndDelete when they succeed.
 *   <li><b>nil.</b> Go's keys and values may be nil. Here null is a key and a value like any other:
 *       it is stored as a private sentinel (ConcurrentHashMap refuses null) and given back as null,
 *       so {@code store(k, null)} then {@code load(k)} is {@code (null, ok = true)}, not absent.
 *   <li><b>Equality.</b> Keys are compared with {@code equals}/{@code hashCode} (Go: {@code ==} on
 *       comparable keys; a key must not change while in the map). CompareAndSwap and
 *       CompareAndDelete compare the stored value with {@code old} by {@code old.equals(stored)}
 *       (Go: {@code ==}, which panics when old is not of a comparable type; every Java object has
 *       an equals, so nothing panics, and a value whose equals is identity compares by identity).
 *   <li><b>Range</b> visits no key twice and may reflect any mapping of a key from any point
 *       during the call, as Go says. ConcurrentHashMap's iterator alone may return a key twice if
 *       it is deleted and stored again while the iteration is in its bin, so Range remembers the keys
 *       it has visited (one HashSet, allocated at the first entry: O(n) memory per call that visits
 *       n entries; an empty map allocates nothing).
 *   <li><b>Clear</b> is atomic, as Go's: it replaces the whole table, so an operation that overlaps
 *       it acts entirely before or entirely after it (ConcurrentHashMap.clear removes bin by bin,
 *       and a store that ran after a store it kept could be dropped).
 * </ul>
 *
 * <p>The zero Map of Go is {@code new Map<>()}. {@code Map} clashes with {@code java.util.Map} by
 * name: import one of them by its full name.
 *
 * <p>Go: sync/map.go (Go 1.9; Swap, CompareAndSwap, CompareAndDelete 1.20; Clear 1.23)
 */
public final class Map<K, V> {
    /** Stands for a null key or value inside the ConcurrentHashMap (Go's nil interface value). */
    private static final Object NIL = new Object() {
        @Override
        public String toString() {
            return "nil";
        }
    };

    /**
     * The entries, keys and values masked by {@link #mask}. Replaced whole by clear (volatile
     * write); read volatile once by every operation, which then works on the table it read.
     */
    private volatile ConcurrentHashMap<Object, Object> m = new ConcurrentHashMap<>();

    public Map() {}

    /**
     * Go's {@code value, ok} pair: {@code ok} is Go's second result (ok for Load; loaded for
     * LoadOrStore, LoadAndDelete and Swap). {@code value} is null when absent, and may be null when
     * present (a stored null).
     */
    public record Loaded<V>(V value, boolean ok) {
        private static final Loaded<?> ABSENT = new Loaded<>(null, false);

        @SuppressWarnings("unchecked")
        static <V> Loaded<V> absent() {
            return (Loaded<V>) ABSENT;
        }
    }

    /**
     * The value stored for key, with ok false (and a null value) if there is none.
     *
     * <p>Go: (*Map).Load
     */
    public Loaded<V> load(K key) {
        return loaded(m.get(mask(key)));
    }

    /**
     * Sets the value for key.
     *
     * <p>Go: (*Map).Store
     */
    public void store(K key, V value) {
        m.put(mask(key), mask(value));
    }

    /**
     * The existing value for key if present ({@code loaded} true); otherwise stores value and
     * returns it ({@code loaded} false).
     *
     * <p>Go: (*Map).LoadOrStore
     */
    public Loaded<V> loadOrStore(K key, V value) {
        Object prev = m.putIfAbsent(mask(key), mask(value));
        return prev == null ? new Loaded<>(value, false) : loaded(prev);
    }

    /**
     * Deletes the value for key, returning the previous value if any; {@code loaded} reports
     * whether the key was present.
     *
     * <p>Go: (*Map).LoadAndDelete
     */
    public Loaded<V> loadAndDelete(K key) {
        return loaded(m.remove(mask(key)));
    }

    /**
     * Deletes the value for key; nothing if the key is not in the map.
     *
     * <p>Go: (*Map).Delete
     */
    public void delete(K key) {
        m.remove(mask(key));
    }

    /**
     * Stores value for key and returns the previous value if any; {@code loaded} reports whether
     * the key was present.
     *
     * <p>Go 1.20: (*Map).Swap
     */
    public Loaded<V> swap(K key, V value) {
        return loaded(m.put(mask(key), mask(value)));
    }

    /**
     * Stores {@code neu} for key if the value stored there equals {@code old} ({@code
     * old.equals(stored)}, null only to a stored null); false if it does not or if key is absent
     * (even for a null old: Go issue 51972).
     *
     * <p>Go 1.20: (*Map).CompareAndSwap
     */
    public boolean compareAndSwap(K key, V old, V neu) {
        return m.replace(mask(key), mask(old), mask(neu));
    }

    /**
     * Deletes the entry for key if its value equals {@code old} (as compareAndSwap compares). If
     * there is no value for key it returns false, even for a null old.
     *
     * <p>Go 1.20: (*Map).CompareAndDelete
     */
    public boolean compareAndDelete(K key, V old) {
        return m.remove(mask(key), mask(old));
    }

    /**
     * Calls f for each key and value present in the map, in no particular order, until f returns
     * false. Not a snapshot: no key is visited more than once, but if a key's value is stored or
     * deleted concurrently (f included) Range may reflect any of its mappings from any point during
     * the call; keys stored during the call may or may not be visited. Range blocks no other method;
     * f may call any method of this map. O(n) even if f stops early, as Go warns.
     *
     * <p>Go: (*Map).Range
     */
    @SuppressWarnings("unchecked")
    public void range(BiPredicate<? super K, ? super V> f) {
        Objects.requireNonNull(f, "f");
        Set<Object> seen = null;
        for (java.util.Map.Entry<Object, Object> e : m.entrySet()) {
            Object k = e.getKey();
            if (seen == null) {
                seen = new HashSet<>();
            }
            if (!seen.add(k)) {
                continue; // deleted and stored again behind the iterator: visited already
            }
            if (!f.test((K) unmask(k), (V) unmask(e.getValue()))) {
                return;
            }
        }
    }

    /**
     * Deletes every entry, atomically with respect to the other operations (see the class comment).
     *
     * <p>Go 1.23: (*Map).Clear
     */
    public void clear() {
        m = new ConcurrentHashMap<>();
    }

    @Override
    public String toString() {
        return "sync.Map@" + Integer.toHexString(System.identityHashCode(this));
    }

    private static Object mask(Object o) {
        return o == null ? NIL : o;
    }

    private static Object unmask(Object o) {
        return o == NIL ? null : o;
    }

    /** A ConcurrentHashMap result (null: absent) as Go's (value, ok). */
    @SuppressWarnings("unchecked")
    private static <V> Loaded<V> loaded(Object v) {
        return v == null ? Loaded.absent() : new Loaded<>((V) unmask(v), true);
    }
}
