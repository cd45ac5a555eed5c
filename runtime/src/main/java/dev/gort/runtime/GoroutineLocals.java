package dev.gort.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Goroutine-scoped ThreadLocals ({@code -Dgort.threadlocals=goroutine}, docs/adr/0004): each G
 * carries its own {@code Thread.threadLocals} and {@code Thread.inheritableThreadLocals} maps
 * ({@code ThreadLocal.ThreadLocalMap}, a package-private JDK type, held here as {@code Object}),
 * which its M installs in the carrier thread's fields for as long as the G's continuation is
 * mounted ({@link M}'s run) and takes back when it yields, so that {@code ThreadLocal.get} (which
 * reads {@code Thread.currentThread()}'s field) finds the goroutine's values whatever carrier it
 * runs on, as a virtual thread finds its own. {@code TerminatingThreadLocal}s (the JDK's caches of
 * native resources, e.g. NIO's temporary direct buffers) live in a third map that is not swapped:
 * they stay the carrier's, as under virtual threads.
 *
 * <p>Reading Thread's private fields needs {@code java.lang} of {@code java.base} open to this
 * module: the agent opens it ({@code GortAgent}), or {@code --add-opens
 * java.base/java.lang=ALL-UNNAMED} (the launcher, the jars' {@code Add-Opens}). Whether it is open
 * is decided once, when this class initialises (the first runtime's settings read it): access
 * granted later (an agent attached at run time) is not seen.
 *
 * <p>The accessors are getter and setter method handles adapted once to {@code Object} and called
 * with {@code invokeExact} from {@code static final} fields: the JIT folds them into plain field
 * accesses plus a checkcast on the store. (A VarHandle would need a type adaptation at every call
 * site: the map's type cannot be named here.)
 */
final class GoroutineLocals {
    private GoroutineLocals() {}

    /** {@code (Thread) Object}: {@code t.threadLocals}; null when the access is not available. Immutable. */
    private static final MethodHandle GET_TL;
    /** {@code (Thread, Object) void}: {@code t.threadLocals = map}. Immutable. */
    private static final MethodHandle SET_TL;
    /** {@code (Thread) Object}: {@code t.inheritableThreadLocals}. Immutable. */
    private static final MethodHandle GET_ITL;
    /** {@code (Thread, Object) void}: {@code t.inheritableThreadLocals = map}. Immutable. */
    private static final MethodHandle SET_ITL;
    /** {@code (Object) Object}: {@code ThreadLocal.createInheritedMap(parentMap)}, what Thread's constructor copies. */
    private static final MethodHandle INHERIT;
    /** {@code (Object) int}: {@code ThreadLocalMap.size()}. Immutable. */
    private static final MethodHandle SIZE;
    /** Why the access is not available (the exception the lookup threw), or null when it is. Immutable. */
    private static final String UNAVAILABLE;

    static {
        MethodHandle gtl = null, stl = null, gitl = null, sitl = null, inherit = null, size = null;
        String why = null;
        try {
            MethodHandles.Lookup self = MethodHandles.lookup();
            MethodHandles.Lookup thread = MethodHandles.privateLookupIn(Thread.class, self);
            Class<?> map = Class.forName("java.lang.ThreadLocal$ThreadLocalMap");
            MethodType get = MethodType.methodType(Object.class, Thread.class);
            MethodType set = MethodType.methodType(void.class, Thread.class, Object.class);
            gtl = thread.findGetter(Thread.class, "threadLocals", map).asType(get);
            stl = thread.findSetter(Thread.class, "threadLocals", map).asType(set);
            gitl = thread.findGetter(Thread.class, "inheritableThreadLocals", map)
                    .asType(get);
            sitl = thread.findSetter(Thread.class, "inheritableThreadLocals", map)
                    .asType(set);
            MethodHandles.Lookup tl = MethodHandles.privateLookupIn(ThreadLocal.class, self);
            inherit = tl.findStatic(ThreadLocal.class, "createInheritedMap", MethodType.methodType(map, map))
                    .asType(MethodType.methodType(Object.class, Object.class));
            size = MethodHandles.privateLookupIn(map, self)
                    .findVirtual(map, "size", MethodType.methodType(int.class))
                    .asType(MethodType.methodType(int.class, Object.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
            why = e.toString();
            gtl = stl = gitl = sitl = inherit = size = null;
        }
        GET_TL = gtl;
        SET_TL = stl;
        GET_ITL = gitl;
        SET_ITL = sitl;
        INHERIT = inherit;
        SIZE = size;
        UNAVAILABLE = why;
    }

    /** The JVM flag that gives gort the access when no agent does. */
    static final String ADD_OPENS = "--add-opens java.base/java.lang=ALL-UNNAMED";

    /** Whether gort can swap a carrier's ThreadLocal maps ({@code java.lang} is open to it). */
    static boolean available() {
        return UNAVAILABLE == null;
    }

    /** Why it cannot ({@link #available()} false), for messages; null when it can. */
    static String unavailableReason() {
        return UNAVAILABLE;
    }

    /** {@code t.threadLocals}. Only with {@link #available()}. */
    static Object threadLocals(Thread t) {
        try {
            return (Object) GET_TL.invokeExact(t);
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    /** {@code t.threadLocals = map} (a ThreadLocalMap or null). Only with {@link #available()}. */
    static void setThreadLocals(Thread t, Object map) {
        try {
            SET_TL.invokeExact(t, map);
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    /** {@code t.inheritableThreadLocals}. Only with {@link #available()}. */
    static Object inheritableThreadLocals(Thread t) {
        try {
            return (Object) GET_ITL.invokeExact(t);
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    /** {@code t.inheritableThreadLocals = map} (a ThreadLocalMap or null). Only with {@link #available()}. */
    static void setInheritableThreadLocals(Thread t, Object map) {
        try {
            SET_ITL.invokeExact(t, map);
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    /**
     * What a new goroutine created on {@code creator} (the calling thread: a goroutine's carrier,
     * found through {@code M.current()}, whose fields hold the running goroutine's maps, or a thread
     * outside the runtime) inherits, as Thread's constructor does for a new thread: a copy of the
     * creator's inheritable map ({@code InheritableThreadLocal.childValue} of each value) when it
     * has a non-empty one, else null (nothing allocated). Only with {@link #available()}.
     */
    static Object inheritedFrom(Thread creator) {
        Object parent = inheritableThreadLocals(creator);
        if (parent == null) {
            return null;
        }
        try {
            if ((int) SIZE.invokeExact(parent) == 0) {
                return null;
            }
            return (Object) INHERIT.invokeExact(parent);
        } catch (RuntimeException | Error e) {
            throw e; // childValue is user code: its exception is the caller's (newproc's)
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    private static Error failed(Throwable e) {
        if (e instanceof Error err) {
            throw err;
        }
        if (e instanceof RuntimeException re) {
            throw re;
        }
        return new AssertionError("gort: ThreadLocal map access failed", e);
    }
}
