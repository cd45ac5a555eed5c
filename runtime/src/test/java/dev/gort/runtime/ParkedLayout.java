package dev.gort.runtime;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/**
 * Test access (also for the api module's tests, through the test-jar) to what a parked goroutine
 * keeps: its continuation's frames and the bytes of its objects' fields (issue 19's memory target).
 */
public final class ParkedLayout {
    private ParkedLayout() {}

    /**
     * The frames of gp's parked continuation, innermost first, as {@code Class.method} (no hidden
     * frames: neither the JDK's continuation entry and yield nor lambda proxies). Read under gp's
     * scan bit, as a dump reads them; fails unless gp is parked.
     */
    public static List<String> frames(G gp) {
        if (!gp.castogscanstatus()) {
            throw new IllegalStateException(gp + " is not parked: " + G.gstatusName(gp.readgstatus()));
        }
        try {
            List<String> out = new ArrayList<>();
            for (StackTraceElement e : gp.getStackTrace()) {
                out.add(e.getClassName() + "." + e.getMethodName());
            }
            return out;
        } finally {
            gp.casfromgscanstatus();
        }
    }

    /**
     * The bytes of {@code c}'s instance fields and its superclasses' (the object header excluded),
     * as HotSpot stores them with compressed references (4 bytes a reference, the default below a
     * 32 GB heap); what a class can shrink, whatever the header and padding are.
     */
    public static int fieldBytes(Class<?> c) {
        int n = 0;
        for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                Class<?> t = f.getType();
                n += t == long.class || t == double.class
                        ? 8
                        : t == int.class || t == float.class
                                ? 4
                                : t == short.class || t == char.class
                                        ? 2
                                        : t == byte.class || t == boolean.class ? 1 : 4;
            }
        }
        return n;
    }
}
