package dev.gort.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import jdk.internal.vm.Continuation;

/**
 * The preemption slow path's look at the goroutine's own stack for locks that no injected counter
 * sees: the JDK's code is never instrumented, yet some of it holds a lock while it calls back into
 * user code (instrumented, so it polls). Also finds class initialisers, instrumented or not.
 * Runs when a preemption was requested of this very carrier (a few times per 10 ms slice at
 * most), answered in a poll or at a syscall's exit ({@code Preempt.preemptAtExit}); when the
 * budget strategy's slice is spent with work waiting; when the exit from a "syscall" that sysmon
 * made of a blocked carrier found no P ({@code Syscalls.exitsyscallSlow}: may the G leave its
 * carrier?); at a {@code Thread.sleep}, {@code TimeUnit.sleep} or {@code Thread.yield} in
 * instrumented code (may the goroutine park or yield instead of its carrier?); and before a
 * goroutine waits in the netpoller to read a JDK socket ({@code Poll.framesClean}: after a clean
 * look, not again for the same invocation of the method that reads, whose frames below cannot
 * change while it lives). Never on the poll's or a syscall's fast path.
 *
 * <p><b>Two walks.</b> {@link #scan()} first walks the frames' classes alone ({@link #screen()}:
 * no method to resolve per frame) and clears the stack if no class has a lock-holding method and
 * every class is initialised (a class initialiser's frame is a frame of a class being initialised);
 * only where one is a suspect does it walk every frame's method ({@link #walk()}). On this machine
 * (bench/probes/LockFramesProbe.java, 8 to 40 frames) the screen costs 1.1-4.5 µs and the full walk
 * 2.2-13.6 µs. The screen needs {@code jdk.internal.misc} (the agent exports it); without it every
 * scan is the full walk.
 *
 * <p><b>Which JDK frames count as holding a lock</b> (a frame of a class of the bootstrap or
 * platform loader):
 * <ul>
 *   <li>a {@code synchronized} method (by name: one synchronized overload marks them all):
 *       {@code Hashtable}, {@code Properties}, {@code Vector}, {@code StringBuffer} (its
 *       {@code append(Object)} calls {@code toString()} inside), ...;
 *   <li>methods that run user code inside a {@code synchronized} block or a
 *       {@code ReentrantLock}, listed in {@link #METHODS} and {@link #CLASSES}:
 *       {@code ConcurrentHashMap}'s bin-locked {@code computeIfAbsent}, {@code compute},
 *       {@code computeIfPresent}, {@code merge}, {@code putVal}, {@code replaceNode} (mapping
 *       functions, {@code equals}); every method of {@code Collections.synchronized*} wrappers;
 *       the lock-holding mutators of {@code CopyOnWriteArrayList}; every method of the
 *       lock-based blocking queues ({@code compareTo}, {@code equals}, {@code toString} under
 *       their lock), but the linked ones' {@code forEach} and {@code removeIf} family, which run
 *       the callback on a batch copied under the lock, unlocked ({@link #UNLOCKED});
 *       {@code ClassLoader.loadClass} (its class-loading lock around a user
 *       {@code findClass}); {@code Throwable.printStackTrace}; every method of {@code PrintStream}
 *       and {@code PrintWriter} (their lock around {@code format}'s {@code toString} calls and
 *       around the stream they wrap), of {@code BufferedReader} and {@code BufferedWriter} and of the
 *       charset encoder and decoder behind {@code InputStreamReader} / {@code OutputStreamWriter}
 *       (their lock around the wrapped stream or reader, which may be user code; the buffered
 *       byte streams' are synchronized methods);
 *   <li>not a lock, but thread identity: {@code ObjectOutputStream.writeSerialData} and
 *       {@code ObjectInputStream.readSerialData}, inside which a class's own {@code writeObject} /
 *       {@code readObject} runs: its {@code defaultWriteObject}/{@code defaultReadObject} must run
 *       on the thread that called it, so a preemption there (resumed on another carrier) would
 *       throw {@code NotActiveException}. This covers the whole nested graph written or read from
 *       such a method. A park on a gort primitive inside one is not refused (ADR 0004).
 * </ul>
 * <p>The same rule, per receiver class instead of per frame ({@link #callbackLocks}), lets the agent
 * count the calls that instrumented code makes of the callback-taking collection methods
 * ({@link #CALLBACKS}; {@code Poll.jdkCallbackEnter}): inside them a park on a gort primitive parks
 * in place and preemption is refused without a walk (ADR 0004, "Parks inside a JDK lock").
 *
 * <p>Not covered: any other JDK {@code synchronized} block around a callback, locks taken by
 * uninstrumented non-JDK code ({@code -Dgort.agent.exclude}), and a park on a gort primitive or
 * an explicit {@code Syscall.block} inside one of the frames above reached other than through a
 * counted call (from uninstrumented or JDK code, or a method outside {@link #CALLBACKS}), or inside
 * a JDK monitor around I/O (a shared {@code PrintStream} over a gort connection's stream): those
 * paths walk no frames (a walk per park would cost more than the park), so the goroutine may leave
 * its carrier there, and the JDK's lock with it. The frames walked end at the
 * continuation's entry: the carrier's own frames (the M's loop) hold nothing.
 *
 * <p>No Go equivalent: Go has no carrier-owned locks (preempt.go's {@code canPreemptM} checks the
 * M's own locks only).
 */
final class LockFrames {
    private LockFrames() {}

    static final int NONE = 0;
    /** A JDK frame that holds a lock while calling into the code that polled. */
    static final int JDK_LOCK = 1;
    /** A class initialiser ({@code <clinit>}) is running on this goroutine. */
    static final int CLINIT = 2;

    /** JDK methods that hold a lock around a user callback, by declaring class. */
    static final Map<String, Set<String>> METHODS = Map.ofEntries(
            Map.entry(
                    "java.util.concurrent.ConcurrentHashMap",
                    Set.of("computeIfAbsent", "computeIfPresent", "compute", "merge", "putVal", "replaceNode")),
            // a ReentrantLock the JDK takes around a user's callback: the barrier action (a new
            // user's CyclicBarrier: IllegalMonitorStateException, then a hang, 8 of 13 runs); the
            // executor's terminated() and onShutdown() hooks; a subscriber's equals
            Map.entry("java.util.concurrent.CyclicBarrier", Set.of("dowait")),
            Map.entry("java.util.concurrent.ThreadPoolExecutor", Set.of("tryTerminate", "shutdown")),
            Map.entry("java.util.concurrent.SubmissionPublisher", Set.of("subscribe")),
            // not synchronized, but each calls a synchronized or lock-holding method around the callback
            Map.entry("java.util.Vector", Set.of("removeIf")),
            Map.entry("java.util.concurrent.CopyOnWriteArraySet", Set.of("removeIf")),
            Map.entry(
                    "java.util.concurrent.CopyOnWriteArrayList$COWSubList",
                    Set.of("forEach", "removeIf", "replaceAll", "sort")),
            Map.entry("java.util.concurrent.CopyOnWriteArrayList$Reversed", Set.of("removeIf", "replaceAll", "sort")),
            Map.entry(
                    "java.util.concurrent.CopyOnWriteArrayList",
                    Set.of(
                            "addIfAbsent",
                            "addAllAbsent",
                            "remove",
                            "removeAll",
                            "retainAll",
                            "removeIf",
                            "bulkRemove",
                            "replaceAll",
                            "replaceAllRange",
                            "sort")),
            Map.entry("java.lang.ClassLoader", Set.of("loadClass")),
            Map.entry("java.lang.Throwable", Set.of("printStackTrace")),
            // not a lock but the same rule: a class's own writeObject/readObject runs inside these,
            // and its defaultWriteObject/defaultReadObject (SerialCallbackContext.check) must run on
            // the thread that called it (issue 12: EventListenerSupportTest.testSerialization)
            Map.entry("java.io.ObjectOutputStream", Set.of("writeSerialData")),
            Map.entry("java.io.ObjectInputStream", Set.of("readSerialData")));

    /** JDK classes (or class-name prefixes ending in '$') every method of which counts. */
    static final List<String> CLASSES = List.of(
            "java.util.Collections$Synchronized",
            "java.util.concurrent.PriorityBlockingQueue",
            "java.util.concurrent.ArrayBlockingQueue",
            "java.util.concurrent.LinkedBlockingQueue",
            "java.util.concurrent.LinkedBlockingDeque",
            "java.util.concurrent.DelayQueue",
            // java.io's wrappers whose lock is a synchronized block (their synchronized methods
            // count already): held around every call of the stream they wrap, which may be user
            // code, and in PrintStream / PrintWriter around format's toString calls as well: a
            // goroutine preempted in a printf argument's toString let the next goroutine on its
            // carrier into the same PrintStream (lines interleaved), or resumed on another carrier
            // that then waited for a lock its first carrier still held (a hang, GOMAXPROCS=2)
            "java.io.PrintStream",
            "java.io.PrintWriter",
            "java.io.BufferedWriter",
            "java.io.BufferedReader",
            "sun.nio.cs.StreamEncoder",
            "sun.nio.cs.StreamDecoder");

    /**
     * In {@link #CLASSES}' classes, the methods that run their callback with the lock released: the
     * linked blocking queues copy a batch of up to 64 elements under the lock, then run the action
     * or filter on it unlocked ({@code forEachFrom}, {@code bulkRemove}, and the public methods on
     * them). Every other method of those classes counts.
     */
    static final Map<String, Set<String>> UNLOCKED = Map.of(
            "java.util.concurrent.LinkedBlockingQueue",
            Set.of("forEach", "forEachFrom", "removeIf", "removeAll", "retainAll", "bulkRemove"),
            "java.util.concurrent.LinkedBlockingDeque",
            Set.of("forEach", "forEachFrom", "removeIf", "removeAll", "retainAll", "bulkRemove"));

    /**
     * The JDK collection methods that run a caller's callback, by the index the agent passes to
     * {@code Poll.jdkCallbackEnter} (the agent's {@code PollInjector} keeps the same order): the
     * call sites of these names that instrumented code makes on a JDK type are counted while the
     * implementation they reach holds a lock ({@link #callbackLocks}).
     */
    static final List<String> CALLBACKS = List.of(
            "computeIfAbsent", "computeIfPresent", "compute", "merge", "forEach", "removeIf", "replaceAll", "sort");

    /**
     * The bit of a callback method in {@link #callbackLocks}' mask, as the agent computes it from a
     * call site: {@link #CALLBACKS}' index {@code method} of a call with {@code args} (1 to 3)
     * arguments.
     */
    static int callbackBit(int method, int args) {
        return method * 3 + args - 1;
    }

    /**
     * Per receiver class: bit {@link #callbackBit}{@code (i, n)} set if the {@code n}-argument
     * {@link #CALLBACKS}{@code .get(i)}, as a call on an instance of the class reaches it, is a JDK
     * method that holds a lock around the callback (the rule of {@link #lockingMethods}). Computed
     * once per class.
     */
    private static final ClassValue<Integer> CALLBACK_LOCKS = new ClassValue<>() {
        @Override
        protected Integer computeValue(Class<?> c) {
            int mask = 0;
            for (int i = 0; i < CALLBACKS.size(); i++) {
                for (int n = 1; n <= 3; n++) {
                    Class<?> d = declaring(c, CALLBACKS.get(i), n);
                    if (d != null) {
                        Set<String> locking = LOCKING.get(d);
                        if (locking == ALL || locking.contains(CALLBACKS.get(i))) {
                            mask |= 1 << callbackBit(i, n);
                        }
                    }
                }
            }
            return mask;
        }
    };

    /** {@link #CALLBACK_LOCKS} of {@code c}. */
    static int callbackLocks(Class<?> c) {
        return CALLBACK_LOCKS.get(c);
    }

    /**
     * The class whose {@code args}-argument instance method named {@code name} a call on an
     * instance of {@code c} reaches: the first of {@code c} and its superclasses that declares a
     * concrete one (by name and arity: the overloads of these methods that take references lock
     * alike), or null (an interface's default method, which holds no lock). A class whose methods
     * cannot be listed counts as declaring it if it is the JDK's (lockingMethods then assumes the
     * worst), else is passed over.
     */
    private static Class<?> declaring(Class<?> c, String name, int args) {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            try {
                for (Method m : k.getDeclaredMethods()) {
                    int mod = m.getModifiers();
                    if (m.getName().equals(name)
                            && m.getParameterCount() == args
                            && !m.isBridge()
                            && !Modifier.isAbstract(mod)
                            && !Modifier.isStatic(mod)) {
                        return k;
                    }
                }
            } catch (LinkageError | SecurityException e) {
                if (isJdk(k)) {
                    return k;
                }
            }
        }
        return null;
    }

    /** Marker: every method of the class holds a lock. */
    private static final Set<String> ALL = Set.of("*");

    /** Per class: the names of its lock-holding methods (empty for non-JDK classes). */
    private static final ClassValue<Set<String>> LOCKING = new ClassValue<>() {
        @Override
        protected Set<String> computeValue(Class<?> c) {
            return lockingMethods(c);
        }
    };

    private static final StackWalker WALKER =
            StackWalker.getInstance(Set.of(StackWalker.Option.RETAIN_CLASS_REFERENCE), 32);

    /** The screen's walker: the frames' classes only, no method (no name to resolve per frame). */
    private static final StackWalker CLASS_WALKER = StackWalker.getInstance(
            Set.of(StackWalker.Option.RETAIN_CLASS_REFERENCE, StackWalker.Option.DROP_METHOD_INFO), 12);

    /**
     * {@code jdk.internal.misc.Unsafe.shouldBeInitialized(Class)}, bound to the JDK's Unsafe, or null
     * where {@code java.base/jdk.internal.misc} is not exported to gort (the agent exports it; else
     * {@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED}): without it every scan is the
     * full walk.
     */
    private static final MethodHandle SHOULD_BE_INITIALIZED = shouldBeInitialized();

    private static MethodHandle shouldBeInitialized() {
        try {
            Class<?> u = Class.forName("jdk.internal.misc.Unsafe");
            MethodHandles.Lookup l = MethodHandles.lookup();
            Object unsafe =
                    l.findStatic(u, "getUnsafe", MethodType.methodType(u)).invoke();
            return l.findVirtual(u, "shouldBeInitialized", MethodType.methodType(boolean.class, Class.class))
                    .bindTo(unsafe)
                    .asType(MethodType.methodType(boolean.class, Class.class));
        } catch (Throwable e) {
            return null; // not exported to gort: the full walk every time
        }
    }

    /** The screen's verdicts: nothing on the stack can hold a lock or be an initialiser. */
    static final int CLEAR = 0;
    /** A frame the screen cannot judge by its class alone: the full walk decides. */
    static final int SUSPECT = 1;

    /**
     * Per class, what the screen knows of it ({@link Look}): one look-up per frame. Not a
     * {@code ClassValue<Boolean>} for the initialisation, with {@code remove} for a class not yet
     * initialised: each {@code remove} makes every class's cached value stale for the next look (a
     * scan inside a long class initialiser would slow every carrier's scans).
     */
    private static final ClassValue<Look> LOOKS = new ClassValue<>() {
        @Override
        protected Look computeValue(Class<?> c) {
            return new Look(!LOCKING.get(c).isEmpty());
        }
    };

    /** {@link #LOOKS}' value. */
    private static final class Look {
        /** A frame of the class is a {@link #SUSPECT} by its class: it has lock-holding methods. */
        final boolean lockSuspect;
        /** Set (never cleared) by any scanning thread once the class was seen initialised. Plain: a stale false only asks again. */
        boolean initialised;

        Look(boolean lockSuspect) {
            this.lockSuspect = lockSuspect;
        }
    }

    /** Whether {@code look}'s class {@code c} is initialised: asked of the JVM until it is. */
    private static boolean initialised(Look look, Class<?> c) {
        if (look.initialised) {
            return true;
        }
        try {
            if ((boolean) SHOULD_BE_INITIALIZED.invokeExact(c)) {
                return false;
            }
        } catch (Throwable e) {
            return false; // cannot tell: the full walk decides
        }
        look.initialised = true;
        return true;
    }

    /** The screen's body as a plain class (see {@link Scan}). */
    private static final class Screen implements Function<Stream<StackWalker.StackFrame>, Integer> {
        @Override
        public Integer apply(Stream<StackWalker.StackFrame> frames) {
            return screen(frames);
        }
    }

    private static final Screen SCREEN = new Screen();

    /** The walk's body as a plain class: no lambda bootstrap inside the first preemption. */
    private static final class Scan implements Function<Stream<StackWalker.StackFrame>, Integer> {
        @Override
        public Integer apply(Stream<StackWalker.StackFrame> frames) {
            return scan(frames);
        }
    }

    private static final Scan SCAN = new Scan();

    static {
        // Bootstrap the walkers now (Poll's initialiser gets here), not inside a preemption: the
        // screen finds this class's initialiser and sends this scan on to the full walk.
        scan();
    }

    /**
     * {@link #NONE}, {@link #JDK_LOCK} or {@link #CLINIT} for the calling goroutine's frames: the
     * screen ({@link #screen()}), then the full walk only where the screen found a suspect.
     */
    static int scan() {
        if (SHOULD_BE_INITIALIZED != null && CLASS_WALKER.walk(SCREEN) == CLEAR) {
            return NONE;
        }
        return walk();
    }

    /** Whether {@link #scan()} screens (else it is the full walk every time). */
    static boolean screened() {
        return SHOULD_BE_INITIALIZED != null;
    }

    /** The full walk of {@link #scan()}: every frame's class and method. */
    static int walk() {
        return WALKER.walk(SCAN);
    }

    /**
     * The cheap first look of {@link #scan()}: a walk of the frames' classes alone (a half to a
     * third of the full walk's cost: no method to resolve, no frame object made by reflection),
     * {@link #CLEAR} if no frame down to the continuation's entry is of a class that has a
     * lock-holding method ({@link #lockingMethods}: the JDK's) or of a class not yet initialised,
     * else {@link #SUSPECT}. A frame of a class being initialised is found so: a class initialiser
     * runs while its class is not initialised, and so does every method it calls of its own class
     * (other threads wait for the initialisation to end), so any {@code <clinit>} frame on the stack
     * is a frame of such a class. The full walk then tells which. Without
     * {@code jdk.internal.misc} ({@link #SHOULD_BE_INITIALIZED}) not used.
     */
    static int screen() {
        return CLASS_WALKER.walk(SCREEN);
    }

    private static int screen(Stream<StackWalker.StackFrame> frames) {
        for (Iterator<StackWalker.StackFrame> it = frames.iterator(); it.hasNext(); ) {
            Class<?> c = it.next().getDeclaringClass();
            if (c == Continuation.class) {
                break; // the continuation's entry: below are the carrier's frames
            }
            Look look = LOOKS.get(c);
            if (look.lockSuspect || !initialised(look, c)) {
                return SUSPECT;
            }
        }
        return CLEAR;
    }

    private static int scan(Stream<StackWalker.StackFrame> frames) {
        int found = NONE;
        for (Iterator<StackWalker.StackFrame> it = frames.iterator(); it.hasNext(); ) {
            StackWalker.StackFrame f = it.next();
            Class<?> c = f.getDeclaringClass();
            if (c == Continuation.class) {
                break; // the continuation's entry: below are the carrier's frames
            }
            String name = f.getMethodName();
            if ("<clinit>".equals(name)) {
                return CLINIT; // the stronger verdict: it also forbids waiting for a P
            }
            if (found == NONE) {
                Set<String> locking = LOCKING.get(c);
                if (!locking.isEmpty() && (locking == ALL || locking.contains(name))) {
                    found = JDK_LOCK; // keep walking: a class initialiser further down matters more
                }
            }
        }
        return found;
    }

    static boolean isJdk(Class<?> c) {
        ClassLoader l = c.getClassLoader();
        return l == null || l == ClassLoader.getPlatformClassLoader();
    }

    static Set<String> lockingMethods(Class<?> c) {
        if (!isJdk(c)) {
            return Set.of(); // instrumented (its monitors and locks are counted) or gort's own
        }
        String cn = c.getName();
        for (String p : CLASSES) {
            if (cn.equals(p) || (p.endsWith("$Synchronized") && cn.startsWith(p))) {
                Set<String> unlocked = UNLOCKED.get(cn);
                return unlocked == null ? ALL : allBut(c, unlocked);
            }
        }
        Set<String> names = new HashSet<>(METHODS.getOrDefault(cn, Set.of()));
        try {
            for (Method m : c.getDeclaredMethods()) {
                if (Modifier.isSynchronized(m.getModifiers())) {
                    names.add(m.getName());
                }
            }
        } catch (LinkageError | SecurityException e) {
            return ALL; // cannot tell: assume the worst (a refusal only delays a preemption)
        }
        return names.isEmpty() ? Set.of() : Set.copyOf(names);
    }

    /** The names of {@code c}'s own methods but {@code unlocked}; all of them if they cannot be listed. */
    private static Set<String> allBut(Class<?> c, Set<String> unlocked) {
        Set<String> names = new HashSet<>();
        try {
            for (Method m : c.getDeclaredMethods()) {
                names.add(m.getName());
            }
        } catch (LinkageError | SecurityException e) {
            return ALL;
        }
        names.removeAll(unlocked);
        return Set.copyOf(names);
    }
}
