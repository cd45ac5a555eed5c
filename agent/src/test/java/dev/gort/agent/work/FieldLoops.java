package dev.gort.agent.work;

/**
 * Counted loops whose limit is read from a field at every test ({@code i < this.arr.length},
 * {@code i < n}, {@code i < SHARED.length}): the shapes {@code StripMiner} mines when the field
 * keeps its value through the body, and the ones it must leave with a poll at the back-edge (a
 * volatile limit, a body that assigns the field, a non-final field with a call of this class in
 * the body). {@link #all} runs them all; loaded plainly and through the instrumenting loader.
 */
public final class FieldLoops {
    static int[] shared;

    private int[] arr;
    private final long[] fixed;
    private int n;
    private volatile int vn;
    private final int[] shorter;

    public FieldLoops(int size) {
        arr = new int[size];
        fixed = new long[size];
        shorter = new int[size / 3];
        for (int i = 0; i < size; i++) {
            arr[i] = i * 7 - size;
            fixed[i] = (long) i * i;
        }
        shared = arr.clone();
        n = size;
        vn = size;
    }

    /** The lab's ArraySum: a call-free loop over an instance field's array. Mined. */
    public long sumField() {
        long s = 0;
        for (int i = 0; i < arr.length; i++) {
            s += arr[i];
        }
        return s;
    }

    /** A static field's array. Mined. */
    public static long sumStatic() {
        long s = 0;
        for (int i = 0; i < shared.length; i++) {
            s += shared[i] ^ i;
        }
        return s;
    }

    /** An int field as the limit. Mined. */
    public long countToField() {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s = s * 31 + i;
        }
        return s;
    }

    /** Another object's field, and an early return from inside a strip. Mined. */
    public static long otherObject(FieldLoops o, int stop) {
        long s = 0;
        for (int i = 0; i < o.arr.length; i++) {
            if (i == stop) {
                return s;
            }
            s += o.arr[i];
        }
        return -s;
    }

    /** A final field, a call of this class in the body (it cannot assign a final field). Mined. */
    public long finalWithCall() {
        long s = 0;
        for (int i = 0; i < fixed.length; i++) {
            s += mix(fixed[i]);
        }
        return s;
    }

    /** A non-final field and a call of this class: the call could assign it. A poll at the back-edge. */
    public long nonFinalWithCall() {
        long s = 0;
        for (int i = 0; i < arr.length; i++) {
            s += mix(arr[i]);
            if (i == arr.length / 2) {
                shrink();
            }
        }
        return s + arr.length;
    }

    /** A volatile limit: read at every test. A poll at the back-edge. */
    public long volatileLimit() {
        long s = 0;
        for (int i = 0; i < vn; i++) {
            s += i;
            if (i == 100) {
                vn = vn / 2;
            }
        }
        return s;
    }

    /** The body assigns the field the limit reads: the loop ends early. A poll at the back-edge. */
    public long bodyAssignsTheField() {
        long s = 0;
        for (int i = 0; i < arr.length; i++) {
            s += arr[i];
            if (i == arr.length / 4) {
                arr = shorter;
            }
        }
        return s;
    }

    private void shrink() {
        arr = shorter;
    }

    private static long mix(long x) {
        x ^= x >>> 7;
        return x * 0x9E3779B97F4A7C15L;
    }

    /** Everything, in a fixed order (the shrinking ones last: they change {@code arr}). */
    public static long[] all(int size) {
        FieldLoops a = new FieldLoops(size);
        FieldLoops b = new FieldLoops(size + 17);
        return new long[] {
            a.sumField(),
            sumStatic(),
            a.countToField(),
            otherObject(b, size / 2),
            otherObject(b, -1),
            a.finalWithCall(),
            a.volatileLimit(),
            a.nonFinalWithCall(),
            b.bodyAssignsTheField()
        };
    }
}
