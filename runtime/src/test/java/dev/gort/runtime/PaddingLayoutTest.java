package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

/**
 * The padded classes really pad: HotSpot lays out a superclass's fields first but fills its holes
 * with a subclass's (the 4 bytes after a 12-byte object header take the first int that comes), so
 * a padding superclass of longs alone leaves an int field at offset 12, on the line of the object
 * allocated before it (RunQueue.head sat there, and AllGs' stripe words beside the next stripe's
 * fields). Offsets are the JVM's own ({@code Unsafe.objectFieldOffset}).
 */
class PaddingLayoutTest {
    private static final int LINE = 64;

    private static long offset(Class<?> c, String name) throws ReflectiveOperationException {
        for (Class<?> k = c; k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (f.getName().equals(name) && !Modifier.isStatic(f.getModifiers())) {
                    return unsafe().objectFieldOffset(f);
                }
            }
        }
        throw new NoSuchFieldException(c + "." + name);
    }

    /** The end of the object's last field: the object's size, give or take its alignment. */
    private static long end(Class<?> c) throws ReflectiveOperationException {
        long end = 0;
        for (Class<?> k = c; k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers())) {
                    end = Math.max(end, unsafe().objectFieldOffset(f) + size(f.getType()));
                }
            }
        }
        return end;
    }

    @SuppressWarnings("removal")
    private static sun.misc.Unsafe unsafe() throws ReflectiveOperationException {
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return (sun.misc.Unsafe) f.get(null);
    }

    @Test
    void runQueueHeadIsALineFromTheObjectBeforeItAndFromTail() throws Exception {
        long head = offset(RunQueue.class, "head");
        long tail = offset(RunQueue.class, "tail");
        assertTrue(head >= LINE, "head at " + head + ": on the line of the object allocated before the queue");
        assertTrue(tail - head >= LINE, "head at " + head + ", tail at " + tail);
    }

    /** A field's bytes: its primitive's size, or a reference's (4 with compressed oops). */
    private static long size(Class<?> t) throws ReflectiveOperationException {
        if (t == long.class || t == double.class) {
            return 8;
        } else if (t == int.class || t == float.class) {
            return 4;
        } else if (t == short.class || t == char.class) {
            return 2;
        } else if (t == byte.class || t == boolean.class) {
            return 1;
        }
        return unsafe().arrayIndexScale(Object[].class);
    }

    /** The first and the end of the last of the instance fields that {@code c} itself declares. */
    private static long[] ownFields(Class<?> c) throws ReflectiveOperationException {
        long first = Long.MAX_VALUE;
        long last = 0;
        for (Field f : c.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers())) {
                long at = unsafe().objectFieldOffset(f);
                first = Math.min(first, at);
                last = Math.max(last, at + size(f.getType()));
            }
        }
        return new long[] {first, last};
    }

    /**
     * The objects a carrier writes on every switch (CacheLinePad): the runtime makes them through
     * their Padded subclasses, whose fields take the last line; every field of the class itself is
     * at least a line from the object's start (but the carrier thread's, which come after the JDK's
     * Thread fields) and a line from its end.
     */
    @Test
    void perCarrierObjectsHaveALineBeforeAndAfterTheirFields() throws Exception {
        Class<?> mthread = Class.forName("dev.gort.runtime.M$MThread");
        Class<?>[][] pairs = {
            {M.class, M.Padded.class},
            {P.class, P.Padded.class},
            {Found.class, Found.Padded.class},
            {RunQueue.class, RunQueue.Padded.class},
            {mthread, Class.forName("dev.gort.runtime.M$MThread$Padded")},
        };
        for (Class<?>[] pair : pairs) {
            long[] own = ownFields(pair[0]);
            long end = end(pair[1]);
            if (pair[0] != mthread) {
                assertTrue(own[0] >= LINE, pair[0].getSimpleName() + "'s first field at " + own[0]);
            }
            assertTrue(
                    end - own[1] >= LINE,
                    pair[0].getSimpleName() + "'s fields end at " + own[1] + " of " + end + " in " + pair[1].getName());
        }
    }

    @Test
    void anAllgsStripesFieldsAreALineFromEitherNeighbour() throws Exception {
        Class<?> stripe = Class.forName("dev.gort.runtime.AllGs$Stripe");
        long first = Math.min(offset(stripe, "word"), Math.min(offset(stripe, "n"), offset(stripe, "head")));
        long last = Math.max(offset(stripe, "word"), Math.max(offset(stripe, "n"), offset(stripe, "head"))) + 4;
        assertTrue(first >= LINE, "a stripe's fields start at " + first + ": on the line of the stripe before");
        assertTrue(end(stripe) - last >= LINE - 8, "a stripe's fields end at " + last + " of " + end(stripe));
    }
}
