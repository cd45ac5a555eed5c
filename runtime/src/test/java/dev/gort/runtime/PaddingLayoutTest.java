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
                    long size = f.getType() == long.class || f.getType() == double.class ? 8 : 4;
                    end = Math.max(end, unsafe().objectFieldOffset(f) + size);
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

    @Test
    void anAllgsStripesFieldsAreALineFromEitherNeighbour() throws Exception {
        Class<?> stripe = Class.forName("dev.gort.runtime.AllGs$Stripe");
        long first = Math.min(offset(stripe, "word"), Math.min(offset(stripe, "n"), offset(stripe, "head")));
        long last = Math.max(offset(stripe, "word"), Math.max(offset(stripe, "n"), offset(stripe, "head"))) + 4;
        assertTrue(first >= LINE, "a stripe's fields start at " + first + ": on the line of the stripe before");
        assertTrue(end(stripe) - last >= LINE - 8, "a stripe's fields end at " + last + " of " + end(stripe));
    }
}
