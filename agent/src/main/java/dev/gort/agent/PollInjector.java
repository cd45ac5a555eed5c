package dev.gort.agent;

import dev.gort.runtime.PreemptStrategy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.FieldNode;
import org.objectweb.asm.tree.FrameNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.IntInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.tree.VarInsnNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.BasicVerifier;

/**
 * Rewrites one class file: yield points for the chosen {@link PreemptStrategy} and the monitor-depth
 * hooks that keep preemption out of Java monitors. Usable on its own (tests, benchmarks, an offline
 * build step) and by {@link GortTransformer}.
 *
 * <p><b>What is inserted</b> ({@code INVOKESTATIC dev/gort/runtime/Poll.*}; the yield points
 * {@code poll}/{@code budget} take their site, {@code "class.method"}, pushed by an {@code ldc}
 * just before them, so that a preemption is located without a stack walk):
 * <ul>
 *   <li>{@code backedge}: {@code poll()} before every backward branch: a jump or switch with a target
 *       label already seen in code order (HotSpot's rule; complete, since fall-through only goes
 *       forward);
 *   <li>{@code entry}: {@code poll()} as the first instruction of every method (but a synchronized
 *       one: its monitor is held from that instruction on);
 *   <li>{@code budget}: {@code budget()} at both places;
 *   <li>every strategy but {@code none}: {@code monitorEnter()} after each MONITORENTER (inside the
 *       block's catch-any range: {@link #hookMonitorEnter}) and first in a
 *       synchronized method; {@code monitorExit()} before each MONITOREXIT, before each return of a
 *       synchronized method, and in a catch-all handler added around a synchronized method's body
 *       (it runs the hook and rethrows; the JVM releases the monitor itself);
 *   <li>every strategy but {@code none}: around each call site of a method named {@code lock},
 *       {@code lockInterruptibly}, {@code unlock} ({@code ()V}) or {@code tryLock} ({@code ()Z},
 *       {@code (JTimeUnit)Z}) of any owner, the receiver is kept ({@code DUP}; the timed
 *       {@code tryLock} parks its arguments in two new locals first) and passed after the call to
 *       {@code lockAcquired}/{@code lockReleased}/{@code lockTried}, which count it if it is a
 *       {@code java.util.concurrent.locks.Lock} (a call that throws reaches no hook);
 *   <li>every strategy but {@code none}: each call site of {@code ThreadLocal.get()},
 *       {@code set(Object)} and {@code remove()} (owner {@code ThreadLocal} or
 *       {@code InheritableThreadLocal}) becomes {@code Poll.threadLocalGet/Set/Remove(tl, ...)}, and
 *       each of {@code Thread.currentThread()} {@code Poll.currentThread()}: the same call through a
 *       handle the JIT cannot inline, so that compiled code never reuses a carrier thread read
 *       before a yield ({@link #replacementCall}); each of {@code Thread.yield()}
 *       {@code Poll.threadYield()}: {@code runtime.Gosched()} where the goroutine may yield and
 *       other work is runnable, else the carrier's {@code Thread.yield()};
 *   <li>every strategy but {@code none}: around each call site, outside class initialisers and
 *       the code of a constructor before its {@code super(...)}/{@code this(...)} call, of a JDK
 *       collection method that runs a callback ({@link #CALLBACKS}:
 *       {@code computeIfAbsent}, {@code forEach}, ...; by name and the JDK's descriptor, whatever
 *       the owner; a {@code super.} call too), the arguments go to locals shared by the method's
 *       sites, the receiver and the method's index and arity go to {@code jdkCallbackEnter} (for a
 *       {@code super.} call, {@code jdkCallbackSuperEnter}, with the superclass named at the call
 *       site: the implementation reached is that class's, not the receiver's), whose result (1: the implementation
 *       reached holds a lock around the callback, counted) is kept in a local and passed to
 *       {@code jdkCallbackExit} after the call and in a handler of the call alone, first in the
 *       exception table, which rethrows ({@link #hookCallbackCall});
 *   <li>every strategy but {@code none}: a method that calls {@code LockSupport.park*} gets
 *       {@code parkerEnter()} first and {@code parkerExit()} on every exit, as a synchronized
 *       method gets its monitor hooks: its goroutine stays on its carrier while it runs
 *       ({@link #parksCarrier});
 *   <li>every strategy but {@code none}: around each call site, outside class initialisers, of a
 *       JDK method known to block its thread ({@link #isBlockingCall}: a {@code java.util.concurrent}
 *       queue's {@code take}/{@code put}/timed {@code poll}/{@code offer}, {@code Future.get},
 *       {@code CountDownLatch.await}, {@code Condition.await}, {@code LockSupport.park*},
 *       {@code Thread.join}, {@code ServerSocket.accept}, {@code Selector.select}, ...,
 *       {@code Object.wait} whatever the owner, and the reads, writes and flushes of the JDK's
 *       stream wrappers, {@link #STREAM_WRAPPER_CALLS}), {@code blockingEnter()} before it (a
 *       syscall for the call, as Go's syscall wrappers enter one; {@code blockingEnter(receiver)}
 *       or {@code blockingEnterStream(receiver)} where the receiver decides), {@code blockingExit()}
 *       after it and in a handler of the call alone, first in the exception table, which rethrows
 *       (in a constructor before its {@code super(...)} call, no handler: see
 *       {@link #hookBlockingCall}); each of {@code Thread.sleep}
 *       ({@code (J)}, {@code (JI)}, {@code (Duration)}) becomes {@code Poll.threadSleep} and
 *       {@code TimeUnit.sleep} {@code Poll.timeUnitSleep}: the goroutine's sleep where it may
 *       yield, else the carrier's in a syscall;
 *   <li>every strategy but {@code none}: a method, not a class initialiser, with a read of a
 *       stream wrapper or a stream read's stand-in ({@code Poll.streamRead}, ...) takes
 *       {@code Poll.waitFrame()} into a new local before anything else, and each such read's hook
 *       gets it last: a token for the invocation, so that the runtime's look at the stack for JDK
 *       frames' locks before a socket wait runs once per invocation after a clean look
 *       ({@link #addFrameToken});
 *   <li>every strategy but {@code none}: {@code <clinit>} gets {@code clinitEnter()} first and
 *       {@code clinitExit()} on every exit (before its return and in a catch-all handler), and no
 *       poll: a class initialiser pins the continuation and holds the class's init lock.
 * </ul>
 *
 * <p><b>Strip-mining</b> ({@code backedge} with a stride &gt; 0, the default 1024): javac's counted
 * loops poll once per strip of {@code stride} iterations instead of at every back-edge, so C2 still
 * unrolls and vectorises them; see {@link StripMiner} for the shape, the rewrite and its limits.
 *
 * <p><b>Why frames stay valid without COMPUTE_FRAMES.</b> A hook call {@code ()V} pushes and pops
 * nothing, and a yield point's {@code ldc site; invokestatic (String)V} pops what it pushed; neither
 * adds a branch target or a local, so every existing StackMapTable frame (they sit on labels) still
 * describes its offset. max_stack grows by one for the site string (it may sit above a branch's
 * compare operands).
 * The new frame at the added handler declares no locals (all TOP: a supertype of anything in
 * the range) and one {@code Throwable} on the stack, which holds for every instruction it covers;
 * the handler follows the method's last instruction, which can only be a return, throw or goto, so
 * nothing falls into it. max_stack is raised to 1 for it. Strip-mining adds a local, a label and a
 * frame per loop and edits the frames inside the loop explicitly (the class is read with
 * {@code EXPAND_FRAMES}, so every frame is complete). The frame token's local is stored before the
 * method's own first instruction (only the entry poll and the entry hooks come before it), so every
 * frame of the method's own code gains it as a long; the catch-all handler of the entry hooks,
 * whose range begins before the store, declares no locals.
 * The class is written with
 * {@code new ClassWriter(reader, 0)}: no frame or max computation, no class loading.
 *
 * <p><b>Never instrumented</b>: native and abstract methods, methods with JSR/RET (class files
 * before 51). A lock call site's hook leaves existing frames valid for the same reason as a poll:
 * its new locals are used only in straight-line code between two instructions, and no frame
 * mentions them.
 * Methods whose transformation fails a check are reported by exception; the caller keeps the
 * original class.
 */
public final class PollInjector {
    static final String POLL = "dev/gort/runtime/Poll";

    /** What one call did. */
    public record Result(
            byte[] bytes, int methods, int backedgePolls, int entryPolls, int monitorHooks, int methodsSkipped) {
        public boolean changed() {
            return bytes != null;
        }
    }

    private final Strategy strategy;
    private final boolean verify;

    /**
     * @param strategy where to put polls ({@link PreemptStrategy#NONE}: the class is never changed)
     * @param verify   run ASM's {@link BasicVerifier} over every changed method before writing (always
     *                 done for synchronized methods, the only edit that adds a handler and a frame)
     */
    public PollInjector(PreemptStrategy strategy, boolean verify) {
        this(strategy, verify, PreemptStrategy.DEFAULT_STRIDE);
    }

    /**
     * @param stride {@code backedge} only: javac's counted loops are strip-mined to poll once per
     *               {@code stride} iterations ({@link StripMiner}); 0 keeps a poll at every back-edge
     */
    public PollInjector(PreemptStrategy strategy, boolean verify, int stride) {
        this(strategy, verify, stride, true);
    }

    /**
     * @param callerEntries {@code backedge} only: also poll at the entry of every method that calls
     *                      another (not counting a constructor's {@code super(...)}/{@code this(...)}),
     *                      so that recursion without loops is preemptible; leaf methods (the small
     *                      ones C2 inlines into hot loops) stay free of polls
     */
    public PollInjector(PreemptStrategy strategy, boolean verify, int stride, boolean callerEntries) {
        this(Strategies.of(strategy, stride, callerEntries), verify);
    }

    /** Polls where {@code strategy} says ({@link Strategy}); the hooks as for every strategy. */
    public PollInjector(Strategy strategy, boolean verify) {
        this.strategy = java.util.Objects.requireNonNull(strategy, "strategy");
        this.verify = verify;
    }

    /** The strategy's family. */
    public PreemptStrategy strategy() {
        return strategy.family();
    }

    /** The strategy itself. */
    public Strategy placement() {
        return strategy;
    }

    /**
     * Instruments {@code classfile}; {@code bytes == null} in the result means "leave it as it is".
     *
     * @throws IllegalStateException if a changed method fails verification (nothing is returned)
     */
    public Result instrument(byte[] classfile) {
        if (strategy.family() == PreemptStrategy.NONE) {
            return new Result(null, 0, 0, 0, 0, 0);
        }
        ClassReader cr = new ClassReader(classfile);
        ClassNode cn = new ClassNode(Opcodes.ASM9);
        // Expanded frames: StripMiner edits them (every frame lists all its locals).
        cr.accept(cn, ClassReader.EXPAND_FRAMES);
        if ((cn.access & Opcodes.ACC_MODULE) != 0 || cn.name.endsWith("package-info")) {
            return new Result(null, 0, 0, 0, 0, 0);
        }
        boolean frames = (cn.version & 0xFFFF) >= Opcodes.V1_6;
        int methods = 0;
        int backedges = 0;
        int entries = 0;
        int hooks = 0;
        int skipped = 0;
        // The fields this class declares (name:desc to flags): StripMiner mines loops whose limit
        // reads one of them only if it is not volatile.
        Map<String, Integer> fields = new HashMap<>();
        for (FieldNode f : cn.fields) {
            fields.put(f.name + ":" + f.desc, f.access);
        }
        for (MethodNode mn : cn.methods) {
            if ((mn.access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) != 0 || mn.instructions.size() == 0) {
                continue;
            }
            if (hasJsr(mn)) {
                skipped++;
                continue;
            }
            int[] c = instrumentMethod(cn.name, fields, mn, frames);
            if (c[0] + c[1] + c[2] > 0) {
                methods++;
                backedges += c[0];
                entries += c[1];
                hooks += c[2];
            }
        }
        if (methods == 0) {
            return new Result(null, 0, 0, 0, 0, skipped);
        }
        ClassWriter cw = new ClassWriter(cr, 0);
        cn.accept(cw);
        return new Result(cw.toByteArray(), methods, backedges, entries, hooks, skipped);
    }

    /**
     * The method calls another (so it may recurse): any invoke but a constructor's chaining to
     * {@code <init>} (every constructor makes one; counting it would poll in every {@code new}).
     */
    static boolean callsAnother(MethodNode mn) {
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in.getType() == AbstractInsnNode.INVOKE_DYNAMIC_INSN) {
                return true;
            }
            if (in instanceof MethodInsnNode m
                    && !(m.getOpcode() == Opcodes.INVOKESPECIAL && m.name.equals("<init>"))) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasJsr(MethodNode mn) {
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            int op = in.getOpcode();
            if (op == Opcodes.JSR || op == Opcodes.RET) {
                return true;
            }
        }
        return false;
    }

    private static MethodInsnNode call(String name) {
        return new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, name, "()V", false);
    }

    /** {@code ldc "class.method"; invokestatic Poll.<name>(String)}: a yield point that knows its site. */
    static InsnList pollAt(String name, String site) {
        return pollAt(POLL, name, site);
    }

    /** {@code ldc "class.method"; invokestatic owner.name(String)}: a strategy's yield point. */
    static InsnList pollAt(String owner, String name, String site) {
        InsnList l = new InsnList();
        l.add(new LdcInsnNode(site));
        l.add(new MethodInsnNode(Opcodes.INVOKESTATIC, owner, name, "(Ljava/lang/String;)V", false));
        return l;
    }

    /** The site string of a method's polls: the class's binary name, a dot, the method's name. */
    static String site(String owner, MethodNode mn) {
        return owner.replace('/', '.') + "." + mn.name;
    }

    /** {@code Lock} methods whose call sites are counted; see {@link #lockHook}. */
    static final String TRY_TIMED = "(JLjava/util/concurrent/TimeUnit;)Z";

    /**
     * The hook after a call site of a {@code java.util.concurrent.locks.Lock} method, or null: any
     * non-static call named {@code lock}/{@code lockInterruptibly}/{@code unlock} {@code ()V} or
     * {@code tryLock} {@code ()Z}/{@code (JTimeUnit)Z}, whatever its owner (a class extending
     * {@code ReentrantLock}, such as Guava's {@code LocalCache$Segment}, calls {@code this.lock()}
     * with its own name as the owner); the hook gets the receiver and counts it only if it is a
     * {@code Lock} at run time.
     */
    static String lockHook(AbstractInsnNode in) {
        if (!(in instanceof MethodInsnNode m) || m.getOpcode() == Opcodes.INVOKESTATIC) {
            return null;
        }
        return switch (m.name) {
            case "lock", "lockInterruptibly" -> m.desc.equals("()V") ? "lockAcquired" : null;
            case "unlock" -> m.desc.equals("()V") ? "lockReleased" : null;
            case "tryLock" -> m.desc.equals("()Z") || m.desc.equals(TRY_TIMED) ? "lockTried" : null;
            default -> null;
        };
    }

    /**
     * A call of {@code Object.wait()}, {@code wait(long)} or {@code wait(long, int)}, whatever the
     * owner javac named (they are final in {@code Object}: no class declares its own): one of the
     * blocking calls ({@link #isBlockingCall}), a syscall for the goroutine while it waits.
     */
    static boolean isObjectWait(AbstractInsnNode in) {
        return in instanceof MethodInsnNode m
                && (m.getOpcode() == Opcodes.INVOKEVIRTUAL || m.getOpcode() == Opcodes.INVOKEINTERFACE)
                && m.name.equals("wait")
                && (m.desc.equals("()V") || m.desc.equals("(J)V") || m.desc.equals("(JI)V"));
    }

    private static final String TU = "Ljava/util/concurrent/TimeUnit;";
    private static final String OBJ = "Ljava/lang/Object;";

    /**
     * The blocking methods of {@code java.util.concurrent}'s queues ({@code BlockingQueue},
     * {@code BlockingDeque}, {@code TransferQueue}, {@code CompletionService}), by name and
     * descriptor: a call site of one of them whose owner is a class or interface of the package
     * itself (not a subpackage: {@code atomic}, {@code locks}) blocks until the queue gives or takes.
     */
    private static final Set<String> QUEUE_BLOCKING = Set.of(
            "take()" + OBJ,
            "put(" + OBJ + ")V",
            "poll(J" + TU + ")" + OBJ,
            "offer(" + OBJ + "J" + TU + ")Z",
            "takeFirst()" + OBJ,
            "takeLast()" + OBJ,
            "putFirst(" + OBJ + ")V",
            "putLast(" + OBJ + ")V",
            "pollFirst(J" + TU + ")" + OBJ,
            "pollLast(J" + TU + ")" + OBJ,
            "offerFirst(" + OBJ + "J" + TU + ")Z",
            "offerLast(" + OBJ + "J" + TU + ")Z",
            "transfer(" + OBJ + ")V",
            "tryTransfer(" + OBJ + "J" + TU + ")Z",
            "take()Ljava/util/concurrent/Future;",
            "poll(J" + TU + ")Ljava/util/concurrent/Future;");

    /** Owners whose {@code get}/{@code join} wait for a result. */
    private static final Set<String> FUTURES = Set.of(
            "java/util/concurrent/Future",
            "java/util/concurrent/RunnableFuture",
            "java/util/concurrent/ScheduledFuture",
            "java/util/concurrent/RunnableScheduledFuture",
            "java/util/concurrent/CompletableFuture",
            "java/util/concurrent/FutureTask");

    /**
     * Owners whose {@code awaitTermination} and {@code close} wait for tasks. Not
     * {@code invokeAll}/{@code invokeAny}: a saturated pool's {@code CallerRunsPolicy} runs a task
     * in the caller; not a {@code ForkJoinPool} nor a {@code ForkJoinTask}'s {@code join}/{@code get}
     * (the caller may run the task itself): user code must not run inside the syscall.
     */
    private static final Set<String> EXECUTORS = Set.of(
            "java/util/concurrent/ExecutorService",
            "java/util/concurrent/ScheduledExecutorService",
            "java/util/concurrent/AbstractExecutorService",
            "java/util/concurrent/ThreadPoolExecutor",
            "java/util/concurrent/ScheduledThreadPoolExecutor");

    /** Owners whose {@code await*} methods are {@code Condition}'s. */
    private static final Set<String> CONDITIONS = Set.of(
            "java/util/concurrent/locks/Condition",
            "java/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject",
            "java/util/concurrent/locks/AbstractQueuedLongSynchronizer$ConditionObject");

    /**
     * The reads, writes and flushes of the JDK's stream wrappers, by owner (exactly as the call site
     * names it), then name and descriptor: a syscall where the wrapper's chain ends at a socket's or
     * a pipe's stream, known only at run time ({@code Poll.blockingEnterStream}). The array reads
     * and writes of a stream named {@code InputStream} or {@code OutputStream} are
     * {@link #STREAM_CALLS}. Not a single byte's or char's {@code read()} or {@code write(int)}
     * (common in parsers over buffered files, which the run-time look would slow), nor the
     * {@code Writer}s' writes (a socket's writes wait only for a full send buffer; their
     * {@code flush} is here). A {@code transferTo} writes to its target inside the call: its hook
     * looks at the target too ({@code Poll.blockingEnterTransfer}).
     */
    static final Map<String, Set<String>> STREAM_WRAPPER_CALLS = streamWrapperCalls();

    private static Map<String, Set<String>> streamWrapperCalls() {
        Set<String> in = Set.of(
                "read([BII)I",
                "read([B)I",
                "readNBytes([BII)I",
                "readNBytes(I)[B",
                "readAllBytes()[B",
                "transferTo(Ljava/io/OutputStream;)J");
        Set<String> data = new HashSet<>(in);
        data.addAll(Set.of(
                "readFully([B)V",
                "readFully([BII)V",
                "readShort()S",
                "readUnsignedShort()I",
                "readChar()C",
                "readInt()I",
                "readLong()J",
                "readFloat()F",
                "readDouble()D",
                "readUTF()Ljava/lang/String;",
                "readLine()Ljava/lang/String;"));
        Set<String> out = Set.of("write([BII)V", "write([B)V", "flush()V");
        Set<String> reader =
                Set.of("read([CII)I", "read([C)I", "read(Ljava/nio/CharBuffer;)I", "transferTo(Ljava/io/Writer;)J");
        Set<String> buffered = new HashSet<>(reader);
        buffered.add("readLine()Ljava/lang/String;");
        Map<String, Set<String>> t = new java.util.HashMap<>();
        for (String c :
                List.of("java/io/FilterInputStream", "java/io/BufferedInputStream", "java/io/PushbackInputStream")) {
            t.put(c, in);
        }
        t.put("java/io/DataInputStream", Set.copyOf(data));
        t.put("java/io/OutputStream", Set.of("flush()V")); // its array writes: STREAM_CALLS
        for (String c : List.of(
                "java/io/FilterOutputStream",
                "java/io/BufferedOutputStream",
                "java/io/DataOutputStream",
                "java/io/PrintStream")) {
            t.put(c, out);
        }
        for (String c : List.of("java/io/Reader", "java/io/InputStreamReader", "java/io/PushbackReader")) {
            t.put(c, reader);
        }
        t.put("java/io/BufferedReader", Set.copyOf(buffered));
        t.put("java/io/LineNumberReader", Set.copyOf(buffered));
        for (String c : List.of(
                "java/io/Writer", "java/io/BufferedWriter", "java/io/OutputStreamWriter", "java/io/PrintWriter")) {
            t.put(c, Set.of("flush()V"));
        }
        return Map.copyOf(t);
    }

    /**
     * A non-static call of a method {@code close()V}, whatever its owner ({@code Socket},
     * {@code Closeable}, {@code AutoCloseable}, a stream's, a reader's, a library's class): it
     * gets {@code Poll.closeTarget(receiver)} before it (the JDK socket the call closes, looked at
     * while the wrappers still hold their streams) and {@code Poll.closed(target)} after it, which
     * wakes a goroutine waiting in the netpoller to read that socket (a close wakes a thread
     * blocked in the socket's read; a goroutine waiting there is no thread in the read). A close
     * that throws skips the second: its waiter wakes at its runtime's next sweep (within a second).
     * The run-time cost is a look at the receiver's class (a few ns) and, for a socket's, one map
     * look.
     */
    static boolean isCloseCall(AbstractInsnNode in) {
        return in instanceof MethodInsnNode m
                && (m.getOpcode() == Opcodes.INVOKEVIRTUAL || m.getOpcode() == Opcodes.INVOKEINTERFACE)
                && m.name.equals("close")
                && m.desc.equals("()V");
    }

    /**
     * Before a close call ({@link #isCloseCall}), its receiver on top: {@code dup;
     * invokestatic Poll.closeTarget(Object)Object; swap}, which leaves the target under the
     * receiver for {@link #closedHook}.
     */
    private static InsnList closeTargetHook() {
        InsnList l = new InsnList();
        l.add(new InsnNode(Opcodes.DUP));
        l.add(new MethodInsnNode(
                Opcodes.INVOKESTATIC, POLL, "closeTarget", "(Ljava/lang/Object;)Ljava/lang/Object;", false));
        l.add(new InsnNode(Opcodes.SWAP));
        return l;
    }

    /** After a close call: {@code invokestatic Poll.closed(Object)} on the target {@link #closeTargetHook} left. */
    private static InsnList closedHook() {
        InsnList l = new InsnList();
        l.add(new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, "closed", "(Ljava/lang/Object;)V", false));
        return l;
    }

    /** Whether a call is one of {@link #STREAM_WRAPPER_CALLS}. */
    static boolean isStreamWrapperCall(MethodInsnNode m) {
        Set<String> methods = STREAM_WRAPPER_CALLS.get(m.owner);
        return methods != null && m.getOpcode() == Opcodes.INVOKEVIRTUAL && methods.contains(m.name + m.desc);
    }

    /**
     * The other JDK methods that block their thread, by owner (exactly as the call site names it),
     * then name and descriptor.
     */
    private static final Map<String, Set<String>> BLOCKING = blockingTable();

    /** Every method name in {@link #QUEUE_BLOCKING} and {@link #BLOCKING}, and {@code wait}. */
    private static final Set<String> BLOCKING_NAMES = blockingNames();

    private static Set<String> blockingNames() {
        Set<String> names = new HashSet<>();
        names.add("wait");
        for (String nd : QUEUE_BLOCKING) {
            names.add(nd.substring(0, nd.indexOf('(')));
        }
        for (Set<String> methods : BLOCKING.values()) {
            for (String nd : methods) {
                names.add(nd.substring(0, nd.indexOf('(')));
            }
        }
        for (Set<String> methods : STREAM_WRAPPER_CALLS.values()) {
            for (String nd : methods) {
                names.add(nd.substring(0, nd.indexOf('(')));
            }
        }
        return Set.copyOf(names);
    }

    private static Map<String, Set<String>> blockingTable() {
        Map<String, Set<String>> t = new java.util.HashMap<>();
        for (String f : FUTURES) {
            t.put(f, Set.of("get()" + OBJ, "get(J" + TU + ")" + OBJ, "join()" + OBJ));
        }
        for (String e : EXECUTORS) {
            t.put(e, Set.of("awaitTermination(J" + TU + ")Z", "close()V"));
        }
        for (String c : CONDITIONS) {
            t.put(
                    c,
                    Set.of(
                            "await()V",
                            "await(J" + TU + ")Z",
                            "awaitNanos(J)J",
                            "awaitUninterruptibly()V",
                            "awaitUntil(Ljava/util/Date;)Z"));
        }
        t.put("java/util/concurrent/CountDownLatch", Set.of("await()V", "await(J" + TU + ")Z"));
        t.put("java/util/concurrent/CyclicBarrier", Set.of("await()I", "await(J" + TU + ")I"));
        t.put(
                "java/util/concurrent/Semaphore",
                Set.of(
                        "acquire()V",
                        "acquire(I)V",
                        "acquireUninterruptibly()V",
                        "acquireUninterruptibly(I)V",
                        "tryAcquire(J" + TU + ")Z",
                        "tryAcquire(IJ" + TU + ")Z"));
        t.put(
                "java/util/concurrent/Phaser",
                Set.of(
                        "awaitAdvance(I)I",
                        "awaitAdvanceInterruptibly(I)I",
                        "awaitAdvanceInterruptibly(IJ" + TU + ")I",
                        "arriveAndAwaitAdvance()I"));
        t.put(
                "java/util/concurrent/Exchanger",
                Set.of("exchange(" + OBJ + ")" + OBJ, "exchange(" + OBJ + "J" + TU + ")" + OBJ));
        t.put(
                "java/util/concurrent/locks/LockSupport",
                Set.of(
                        "park()V",
                        "park(" + OBJ + ")V",
                        "parkNanos(J)V",
                        "parkNanos(" + OBJ + "J)V",
                        "parkUntil(J)V",
                        "parkUntil(" + OBJ + "J)V"));
        t.put("java/lang/Thread", Set.of("join()V", "join(J)V", "join(JI)V", "join(Ljava/time/Duration;)Z"));
        t.put("java/lang/Process", Set.of("waitFor()I", "waitFor(J" + TU + ")Z"));
        t.put("java/net/ServerSocket", Set.of("accept()Ljava/net/Socket;"));
        t.put("java/net/Socket", Set.of("connect(Ljava/net/SocketAddress;)V", "connect(Ljava/net/SocketAddress;I)V"));
        t.put("java/net/DatagramSocket", Set.of("receive(Ljava/net/DatagramPacket;)V"));
        t.put(
                "java/net/InetAddress",
                Set.of(
                        "getByName(Ljava/lang/String;)Ljava/net/InetAddress;",
                        "getAllByName(Ljava/lang/String;)[Ljava/net/InetAddress;",
                        "getLocalHost()Ljava/net/InetAddress;"));
        t.put("java/nio/channels/ServerSocketChannel", Set.of("accept()Ljava/nio/channels/SocketChannel;"));
        t.put(
                "java/nio/channels/SocketChannel",
                Set.of(
                        "connect(Ljava/net/SocketAddress;)Z",
                        "read(Ljava/nio/ByteBuffer;)I",
                        "write(Ljava/nio/ByteBuffer;)I"));
        t.put("java/nio/channels/Selector", Set.of("select()I", "select(J)I"));
        t.put(
                "java/net/http/HttpClient",
                Set.of(
                        "send(Ljava/net/http/HttpRequest;Ljava/net/http/HttpResponse$BodyHandler;)Ljava/net/http/HttpResponse;"));
        return Map.copyOf(t);
    }

    /**
     * A call of a JDK method known to block its thread: the blocking methods of
     * {@code java.util.concurrent}'s queues ({@link #QUEUE_BLOCKING}), the waits in
     * {@link #BLOCKING} ({@code Future.get}, {@code CountDownLatch.await}, {@code Condition.await},
     * {@code LockSupport.park*}, {@code Thread.join}, {@code ServerSocket.accept},
     * {@code Selector.select}, ...) and {@code Object.wait} ({@link #isObjectWait}). The owner is
     * the one the call site names, exactly: a library's own class that extends a JDK queue and is
     * called through its own type is not recognised (its calls into the JDK inside are, if the
     * agent instruments it). The agent wraps each such call in {@code Poll.blockingEnter} /
     * {@code blockingExit}: the goroutine is in a syscall for the call, as Go's syscall wrappers
     * enter one, and sysmon retakes its P at its next tick if the call blocks while other work
     * waits. An interface's or overridable method's call is a syscall only on a receiver of a JDK
     * class ({@link #blockingEnter(MethodInsnNode, int, int)}): a library's implementation runs user code.
     */
    static boolean isBlockingCall(AbstractInsnNode in) {
        if (!(in instanceof MethodInsnNode m)
                || m.getOpcode() == Opcodes.INVOKESPECIAL
                || !BLOCKING_NAMES.contains(m.name)) {
            return false; // most calls: one lookup of a hash the name's String caches
        }
        if (isObjectWait(in)) {
            return true;
        }
        String nameDesc = m.name + m.desc;
        if (m.getOpcode() != Opcodes.INVOKESTATIC
                && m.owner.startsWith("java/util/concurrent/")
                && m.owner.indexOf('/', "java/util/concurrent/".length()) < 0
                && QUEUE_BLOCKING.contains(nameDesc)) {
            return true;
        }
        Set<String> methods = BLOCKING.get(m.owner);
        return methods != null && methods.contains(nameDesc) || isStreamWrapperCall(m);
    }

    /**
     * The {@code InputStream} and {@code OutputStream} calls replaced by a {@code Poll} method
     * (name and descriptor to the method's name): the ones that move an array, where a socket's
     * stream blocks. Not {@code read()} or {@code write(int)}: a byte at a time through a stream
     * typed {@code InputStream} is common in parsers, and the run-time look at the stream's class
     * would cost them more than it saves.
     */
    static final Map<String, String> STREAM_CALLS = Map.of(
            "read([BII)I", "streamRead",
            "read([B)I", "streamRead",
            "readNBytes([BII)I", "streamReadNBytes",
            "readNBytes(I)[B", "streamReadNBytes",
            "readAllBytes()[B", "streamReadAllBytes",
            "transferTo(Ljava/io/OutputStream;)J", "streamTransferTo",
            "write([BII)V", "streamWrite",
            "write([B)V", "streamWrite");

    static final String THREAD_LOCAL = "java/lang/ThreadLocal";
    static final String INHERITABLE_THREAD_LOCAL = "java/lang/InheritableThreadLocal";

    /**
     * The static {@code Poll} method that replaces a call site, or null; the receiver, if any,
     * becomes the first argument, so the stack is the same before and after and no frame changes
     * (but for a stream read's stand-in, {@link #isStreamReadStandIn}, which takes the invocation's
     * frame token last: the caller pushes it, {@link #frameToken}):
     * {@code Thread.currentThread()}, {@code Thread.yield()}, {@code Thread.sleep} and
     * {@code TimeUnit.sleep} (see the class comment); the array reads and writes of a stream the
     * call site names {@code java.io.InputStream} or {@code OutputStream} ({@link #STREAM_CALLS}:
     * {@code Poll.streamRead}, ... are a syscall where the stream is a socket's or a process
     * pipe's, known only at run time); and {@code ThreadLocal.get()}, {@code set(Object)} or
     * {@code remove()} (owner {@code ThreadLocal} or {@code InheritableThreadLocal}, as javac writes
     * it for a field of either type): {@code Poll.threadLocalGet/Set/Remove}. They reach the real method through a handle the JIT cannot inline, so that the
     * caller's compiled code never keeps a {@code Thread.currentThread()} across a yield (see
     * {@code Poll}). A subclass named as the owner is left alone (it may not be a ThreadLocal at
     * all without a look at its hierarchy, which the agent does not load).
     */
    static MethodInsnNode replacementCall(AbstractInsnNode in) {
        if (in instanceof MethodInsnNode m
                && m.getOpcode() == Opcodes.INVOKESTATIC
                && m.owner.equals("java/lang/Thread")
                && m.name.equals("currentThread")
                && m.desc.equals("()Ljava/lang/Thread;")) {
            // Thread.currentThread() itself: the same carrier, read afresh (Poll.currentThread)
            return new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, "currentThread", m.desc, false);
        }
        if (in instanceof MethodInsnNode m
                && m.getOpcode() == Opcodes.INVOKESTATIC
                && m.owner.equals("java/lang/Thread")
                && m.name.equals("yield")
                && m.desc.equals("()V")) {
            // Thread.yield(): Gosched where the goroutine may yield and others wait (Poll.threadYield)
            return new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, "threadYield", m.desc, false);
        }
        if (in instanceof MethodInsnNode m
                && m.getOpcode() == Opcodes.INVOKESTATIC
                && m.owner.equals("java/lang/Thread")
                && m.name.equals("sleep")
                && (m.desc.equals("(J)V") || m.desc.equals("(JI)V") || m.desc.equals("(Ljava/time/Duration;)V"))) {
            // Thread.sleep: the goroutine's sleep where it may yield (Poll.threadSleep)
            return new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, "threadSleep", m.desc, false);
        }
        if (in instanceof MethodInsnNode m
                && m.getOpcode() == Opcodes.INVOKEVIRTUAL
                && m.owner.equals("java/util/concurrent/TimeUnit")
                && m.name.equals("sleep")
                && m.desc.equals("(J)V")) {
            // TimeUnit.sleep, which calls Thread.sleep inside the JDK: the same (Poll.timeUnitSleep)
            return new MethodInsnNode(
                    Opcodes.INVOKESTATIC, POLL, "timeUnitSleep", "(Ljava/util/concurrent/TimeUnit;J)V", false);
        }
        if (in instanceof MethodInsnNode m
                && m.getOpcode() == Opcodes.INVOKEVIRTUAL
                && (m.owner.equals("java/io/InputStream") || m.owner.equals("java/io/OutputStream"))
                && STREAM_CALLS.get(m.name + m.desc) instanceof String helper) {
            // A stream's read or write that may block on a socket (Poll.streamRead, ...); a read's
            // stand-in takes the invocation's frame token last (isStreamReadStandIn)
            String args = m.desc.substring(1, m.desc.indexOf(')'));
            String ret = m.desc.substring(m.desc.indexOf(')'));
            String token = helper.startsWith("streamRead") ? "J" : "";
            return new MethodInsnNode(
                    Opcodes.INVOKESTATIC, POLL, helper, "(L" + m.owner + ";" + args + token + ret, false);
        }
        if (!(in instanceof MethodInsnNode m)
                || m.getOpcode() != Opcodes.INVOKEVIRTUAL
                || !(m.owner.equals(THREAD_LOCAL) || m.owner.equals(INHERITABLE_THREAD_LOCAL))) {
            return null;
        }
        String helper;
        String desc;
        switch (m.name + m.desc) {
            case "get()Ljava/lang/Object;" -> {
                helper = "threadLocalGet";
                desc = "(Ljava/lang/ThreadLocal;)Ljava/lang/Object;";
            }
            case "set(Ljava/lang/Object;)V" -> {
                helper = "threadLocalSet";
                desc = "(Ljava/lang/ThreadLocal;Ljava/lang/Object;)V";
            }
            case "remove()V" -> {
                helper = "threadLocalRemove";
                desc = "(Ljava/lang/ThreadLocal;)V";
            }
            default -> {
                return null;
            }
        }
        return new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, helper, desc, false);
    }

    /**
     * The JDK collection methods that run a caller's callback, in the order of the runtime's
     * {@code LockFrames.CALLBACKS} (the index is what {@code Poll.jdkCallbackEnter} gets; a test
     * checks the two lists agree).
     */
    static final List<String> CALLBACKS = List.of(
            "computeIfAbsent", "computeIfPresent", "compute", "merge", "forEach", "removeIf", "replaceAll", "sort");

    /**
     * The erased descriptors of the callback methods as the JDK's collection types declare them,
     * by name: a call site names one of these whatever its owner (a user subclass of
     * {@code ConcurrentHashMap} called through its own type included).
     */
    private static final Map<String, Set<String>> CALLBACK_DESCS = Map.of(
            "computeIfAbsent", Set.of("(Ljava/lang/Object;Ljava/util/function/Function;)Ljava/lang/Object;"),
            "computeIfPresent", Set.of("(Ljava/lang/Object;Ljava/util/function/BiFunction;)Ljava/lang/Object;"),
            "compute", Set.of("(Ljava/lang/Object;Ljava/util/function/BiFunction;)Ljava/lang/Object;"),
            "merge", Set.of("(Ljava/lang/Object;Ljava/lang/Object;Ljava/util/function/BiFunction;)Ljava/lang/Object;"),
            "forEach", Set.of("(Ljava/util/function/Consumer;)V", "(Ljava/util/function/BiConsumer;)V"),
            "removeIf", Set.of("(Ljava/util/function/Predicate;)Z"),
            "replaceAll", Set.of("(Ljava/util/function/UnaryOperator;)V", "(Ljava/util/function/BiFunction;)V"),
            "sort", Set.of("(Ljava/util/Comparator;)V"));

    /**
     * The index in {@link #CALLBACKS} of a call site to count around, or -1: a virtual, interface or
     * {@code super.} ({@code INVOKESPECIAL}) call of one of those names with the descriptor a JDK
     * collection type declares for it ({@link #CALLBACK_DESCS}), whatever its owner. Whether it
     * holds a lock is decided at run time from the receiver's class (a {@code Map} may be a
     * {@code HashMap} or a {@code ConcurrentHashMap}, a {@code Cache} a subclass of either), or for
     * a {@code super.} call from the class it names (a user override of
     * {@code Hashtable.computeIfAbsent} that calls {@code super.computeIfAbsent} reaches the
     * JDK's synchronized method, though the receiver's own method holds no lock).
     */
    static int callbackIndex(AbstractInsnNode in) {
        if (!(in instanceof MethodInsnNode m)
                || (m.getOpcode() != Opcodes.INVOKEVIRTUAL
                        && m.getOpcode() != Opcodes.INVOKEINTERFACE
                        && m.getOpcode() != Opcodes.INVOKESPECIAL)) {
            return -1;
        }
        Set<String> descs = CALLBACK_DESCS.get(m.name);
        return descs != null && descs.contains(m.desc) ? CALLBACKS.indexOf(m.name) : -1;
    }

    /**
     * The bit of {@link #CALLBACKS}' method {@code index} called with {@code args} arguments in the
     * runtime's per-class mask, as {@code LockFrames.callbackBit} computes it (a test checks the
     * two agree): what {@code Poll.jdkCallbackEnter} gets.
     */
    static int callbackBit(int index, int args) {
        return index * 3 + args - 1;
    }

    /**
     * Wraps a callback call site ({@link #callbackIndex}), or returns false and changes nothing.
     * The arguments go to the method's callback locals (from {@code first}: the arguments, then
     * the count), the receiver (DUP) and the method's bit ({@link #callbackBit}: index and arity)
     * to {@code Poll.jdkCallbackEnter} (for a {@code super.} call, with the binary name of the class
     * it names in between, to {@code jdkCallbackSuperEnter}), whose result goes to the count's local, the arguments come
     * back, and after the call that local goes to {@code jdkCallbackExit}. A handler of the call
     * instruction alone, first in the exception table (before any of the method's own handlers
     * around it), runs the same exit and rethrows: an exception from the callback must not leave
     * the count behind. The handler goes at the end of the method, after its last instruction (a
     * return, throw or goto: nothing falls into it); the handlers that covered the call get a
     * copy of their entries covering the handler's code, in their order, so that the rethrown
     * exception reaches the same handler it would have reached from the call.
     *
     * <p>The handler's frame: a {@code Throwable} on the stack; as locals, for each slot the type
     * that every frame of the handlers that covered the call gives it (the state at the call fits
     * each of those frames, so it fits their common types; the handler's code keeps it, so it fits
     * them again at the rethrow), TOP where none does, and the result's int. Where two of those
     * frames give a slot different types (no class hierarchy is loaded to choose), the call site
     * is left alone. The locals are used only there and in straight-line code around each call
     * (an argument's own callback call completes before the outer call's locals are written), so
     * no other frame changes and every site of a method can share them.
     */
    private static boolean hookCallbackCall(MethodNode mn, MethodInsnNode call, int index, int first, boolean frames) {
        InsnList insns = mn.instructions;
        List<TryCatchBlockNode> around = new ArrayList<>();
        int nargs = Type.getArgumentTypes(call.desc).length;
        int counted = first + CALLBACK_LOCALS - 1;
        Object[] slots = handlerLocals(mn, call, counted + 1, counted, frames, around);
        if (slots == null) {
            return false;
        }
        slots[counted] = Opcodes.INTEGER;
        LabelNode start = new LabelNode();
        LabelNode end = new LabelNode();
        InsnList before = new InsnList();
        for (int i = nargs - 1; i >= 0; i--) {
            before.add(new VarInsnNode(Opcodes.ASTORE, first + i));
        }
        before.add(new InsnNode(Opcodes.DUP));
        boolean superCall = call.getOpcode() == Opcodes.INVOKESPECIAL;
        if (superCall) {
            before.add(new LdcInsnNode(call.owner.replace('/', '.'))); // the class the call names
        }
        before.add(new IntInsnNode(Opcodes.BIPUSH, callbackBit(index, nargs)));
        before.add(
                superCall
                        ? new MethodInsnNode(
                                Opcodes.INVOKESTATIC,
                                POLL,
                                "jdkCallbackSuperEnter",
                                "(Ljava/lang/Object;Ljava/lang/String;I)I",
                                false)
                        : new MethodInsnNode(
                                Opcodes.INVOKESTATIC, POLL, "jdkCallbackEnter", "(Ljava/lang/Object;I)I", false));
        before.add(new VarInsnNode(Opcodes.ISTORE, counted));
        for (int i = 0; i < nargs; i++) {
            before.add(new VarInsnNode(Opcodes.ALOAD, first + i));
        }
        before.add(start);
        insns.insertBefore(call, before);
        InsnList after = new InsnList();
        after.add(end);
        after.add(new VarInsnNode(Opcodes.ILOAD, counted));
        after.add(new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, "jdkCallbackExit", "(I)V", false));
        insns.insert(call, after);
        InsnList exit = new InsnList();
        exit.add(new VarInsnNode(Opcodes.ILOAD, counted));
        exit.add(new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, "jdkCallbackExit", "(I)V", false));
        addRethrowingHandler(mn, start, end, around, frames ? slots : null, exit);
        return true;
    }

    /**
     * The locals of a handler for {@code call} alone ({@link #hookCallbackCall}): one entry per
     * slot of {@code length}, the type every frame of the handlers that cover the call gives it
     * below {@code limit} (with {@code frames}), TOP elsewhere; null where two of those frames
     * disagree. The covering entries go to {@code around}, in their order.
     */
    private static Object[] handlerLocals(
            MethodNode mn, MethodInsnNode call, int length, int limit, boolean frames, List<TryCatchBlockNode> around) {
        Object[] slots = new Object[length];
        java.util.Arrays.fill(slots, Opcodes.TOP);
        for (TryCatchBlockNode tcb : mn.tryCatchBlocks) {
            if (covers(tcb, call)) {
                around.add(tcb);
                if (frames && !(frameAt(tcb.handler) instanceof FrameNode f && meet(slots, f.local, limit))) {
                    return null;
                }
            }
        }
        return slots;
    }

    /**
     * A handler of the instructions from {@code start} to {@code end}, first in the exception
     * table, that runs {@code exit} and rethrows, at the end of the method (after its last
     * instruction: nothing falls into it), with the locals {@code slots} (null: the class has no
     * frames; trailing TOPs left out) and a {@code Throwable} on the stack; the entries
     * {@code around} that covered the hooked call get a copy covering the handler, in their order,
     * so that the rethrown exception reaches the handler it would have reached from the call.
     */
    private static void addRethrowingHandler(
            MethodNode mn,
            LabelNode start,
            LabelNode end,
            List<TryCatchBlockNode> around,
            Object[] slots,
            InsnList exit) {
        LabelNode h = new LabelNode();
        LabelNode hEnd = new LabelNode();
        InsnList code = new InsnList();
        code.add(h);
        if (slots != null) {
            List<Object> locals = fromSlots(slots);
            while (!locals.isEmpty() && locals.get(locals.size() - 1) == Opcodes.TOP) {
                locals.remove(locals.size() - 1);
            }
            code.add(new FrameNode(
                    Opcodes.F_NEW, locals.size(), locals.toArray(), 1, new Object[] {"java/lang/Throwable"}));
        }
        code.add(exit);
        code.add(new InsnNode(Opcodes.ATHROW));
        code.add(hEnd);
        mn.instructions.add(code);
        mn.tryCatchBlocks.add(0, new TryCatchBlockNode(start, end, h, null));
        for (TryCatchBlockNode tcb : around) {
            mn.tryCatchBlocks.add(new TryCatchBlockNode(h, hEnd, tcb.handler, tcb.type));
        }
    }

    /**
     * The hook before a blocking call site: {@code Poll.blockingEnter()} for a static call and for
     * {@code Object.wait} and {@code Thread.join} (final in the JDK: whatever the receiver, the JDK's
     * code runs); else {@code Poll.blockingEnter(receiver)}, which enters the syscall only for a
     * receiver of a JDK class (a user's or a library's implementation of {@code BlockingQueue},
     * {@code Future} or {@code ExecutorService} may run user code there, which must not run in a
     * syscall: without a P once sysmon retakes it, beyond GOMAXPROCS, never preempted). The
     * receiver lies under the call's arguments: they go to the method's blocking-call locals (from
     * {@code argLocals}: at most {@link #BLOCKING_ARG_SLOTS} slots, used only in this straight-line
     * code, so no frame mentions them), the receiver is copied, and they come back.
     */
    private static InsnList blockingEnter(MethodInsnNode call, int argLocals, int frameLocal) {
        InsnList l = new InsnList();
        if (!needsReceiverCheck(call)) {
            l.add(call("blockingEnter"));
            return l;
        }
        Type[] args = Type.getArgumentTypes(call.desc);
        int[] at = new int[args.length];
        int next = argLocals;
        for (int i = 0; i < args.length; i++) {
            at[i] = next;
            next += args[i].getSize();
        }
        for (int i = args.length - 1; i >= 0; i--) {
            l.add(new VarInsnNode(args[i].getOpcode(Opcodes.ISTORE), at[i]));
        }
        l.add(new InsnNode(Opcodes.DUP));
        if (isStreamWrapperCall(call) && call.name.equals("transferTo")) {
            // The target too (its writes run inside the call): its only argument, from its local
            // (the stack holds no more than at the call: the argument went to its local first).
            l.add(new VarInsnNode(Opcodes.ALOAD, at[0]));
            l.add(new MethodInsnNode(
                    Opcodes.INVOKESTATIC,
                    POLL,
                    "blockingEnterTransfer",
                    "(Ljava/lang/Object;Ljava/lang/Object;)V",
                    false));
        } else if (isStreamWrapperCall(call) && call.name.startsWith("read") && args.length > 0) {
            // A read into a buffer: the hook sees its arguments, so that it waits for no read of
            // nothing nor one the JDK rejects.
            // And the invocation's frame token (waitFrame, at the method's entry), last.
            if (args[0].getSort() == Type.INT) { // readNBytes(int)
                l.add(new VarInsnNode(Opcodes.ILOAD, at[0]));
                l.add(frameToken(frameLocal));
                l.add(new MethodInsnNode(
                        Opcodes.INVOKESTATIC, POLL, "blockingEnterStreamReadN", "(Ljava/lang/Object;IJ)V", false));
            } else if (args.length == 3) { // (array, off, len)
                l.add(new VarInsnNode(Opcodes.ALOAD, at[0]));
                l.add(new VarInsnNode(Opcodes.ILOAD, at[1]));
                l.add(new VarInsnNode(Opcodes.ILOAD, at[2]));
                l.add(frameToken(frameLocal));
                l.add(new MethodInsnNode(
                        Opcodes.INVOKESTATIC,
                        POLL,
                        "blockingEnterStreamReadRange",
                        "(Ljava/lang/Object;Ljava/lang/Object;IIJ)V",
                        false));
            } else { // the whole array, or a CharBuffer
                l.add(new VarInsnNode(Opcodes.ALOAD, at[0]));
                l.add(frameToken(frameLocal));
                l.add(new MethodInsnNode(
                        Opcodes.INVOKESTATIC,
                        POLL,
                        "blockingEnterStreamReadAll",
                        "(Ljava/lang/Object;Ljava/lang/Object;J)V",
                        false));
            }
        } else if (isStreamRead(call)) {
            l.add(frameToken(frameLocal));
            l.add(new MethodInsnNode(
                    Opcodes.INVOKESTATIC, POLL, "blockingEnterStreamRead", "(Ljava/lang/Object;J)V", false));
        } else {
            String hook = isStreamWrapperCall(call) ? "blockingEnterStream" : "blockingEnter";
            l.add(new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, hook, "(Ljava/lang/Object;)V", false));
        }
        for (int i = 0; i < args.length; i++) {
            l.add(new VarInsnNode(args[i].getOpcode(Opcodes.ILOAD), at[i]));
        }
        return l;
    }

    /**
     * Whether a blocking call site is a read of a JDK stream wrapper, whose hook may wait in the
     * netpoller and takes the invocation's frame token ({@link #addFrameToken}).
     */
    private static boolean isStreamRead(MethodInsnNode call) {
        return needsReceiverCheck(call) && isStreamWrapperCall(call) && call.name.startsWith("read");
    }

    /** Whether a replacement call is a stream read's stand-in, which takes the frame token last. */
    private static boolean isStreamReadStandIn(MethodInsnNode helper) {
        return helper.owner.equals(POLL) && helper.name.startsWith("streamRead");
    }

    /** Whether the method has a read that takes the frame token ({@link #addFrameToken}). */
    private static boolean readsStreams(MethodNode mn) {
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof MethodInsnNode m
                    && ((isBlockingCall(m) && isStreamRead(m))
                            || (replacementCall(m) instanceof MethodInsnNode h && isStreamReadStandIn(h)))) {
                return true;
            }
        }
        return false;
    }

    /** Pushes the invocation's frame token from its local, or 0 (none: a look at every wait). */
    private static AbstractInsnNode frameToken(int frameLocal) {
        return frameLocal < 0 ? new InsnNode(Opcodes.LCONST_0) : new VarInsnNode(Opcodes.LLOAD, frameLocal);
    }

    /**
     * Gives the method a local holding {@code Poll.waitFrame()}, taken at its entry: a token for the
     * invocation, which each stream read's hook gets ({@link #blockingEnter(MethodInsnNode, int,
     * int)}), so that after a clean look at the stack for JDK frames' locks before a socket wait the
     * invocation's later waits need none (the frames below it do not change while it lives). The
     * local is set before the method's own code runs, so every frame there gains it as a long.
     * Returns its slot.
     */
    private static int addFrameToken(MethodNode mn, boolean frames) {
        int slot = mn.maxLocals;
        mn.maxLocals += 2;
        if (frames) {
            for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
                if (in instanceof FrameNode f) {
                    f.local = StripMiner.withLocal(f.local, slot, Opcodes.LONG, "frame token");
                }
            }
        }
        InsnList entry = new InsnList();
        entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, "waitFrame", "()J", false));
        entry.add(new VarInsnNode(Opcodes.LSTORE, slot));
        mn.instructions.insert(entry);
        mn.maxStack = Math.max(mn.maxStack, 2);
        return slot;
    }

    /** Whether a blocking call site's hook looks at its receiver ({@link #blockingEnter(MethodInsnNode, int, int)}). */
    private static boolean needsReceiverCheck(MethodInsnNode call) {
        return call.getOpcode() != Opcodes.INVOKESTATIC
                && !isObjectWait(call)
                && !(call.owner.equals("java/lang/Thread") && call.name.equals("join"));
    }

    /** The most local slots a blocking call's arguments take ({@code offer(Object, long, TimeUnit)}: 4). */
    static final int BLOCKING_ARG_SLOTS = 4;

    /**
     * Wraps a blocking call site ({@link #isBlockingCall}): {@code Poll.blockingEnter()} before it
     * (its arguments are on the stack already: a {@code ()V} call changes nothing there) and
     * {@code Poll.blockingExit()} after it, and, if {@code handler}, a handler of the call
     * instruction alone, first in the exception table, that runs {@code blockingExit()} and
     * rethrows (a timed wait's {@code TimeoutException}, an {@code InterruptedException}: the
     * goroutine must not go on in the syscall). The handler goes at the end of the method with the
     * copies of the entries that covered the call, and its frame's locals are the types the
     * frames of those entries' handlers agree on, as for a callback call site
     * ({@link #hookCallbackCall}); where they disagree, the call gets no handler. No local is
     * added.
     */
    private static void hookBlockingCall(
            MethodNode mn, MethodInsnNode call, boolean frames, boolean handler, int argLocals, int frameLocal) {
        InsnList insns = mn.instructions;
        insns.insertBefore(call, blockingEnter(call, argLocals, frameLocal));
        List<TryCatchBlockNode> around = new ArrayList<>();
        Object[] slots = handler ? handlerLocals(mn, call, mn.maxLocals, mn.maxLocals, frames, around) : null;
        if (slots == null) {
            insns.insert(call, call("blockingExit"));
            return;
        }
        LabelNode start = new LabelNode();
        LabelNode end = new LabelNode();
        insns.insertBefore(call, start);
        InsnList after = new InsnList();
        after.add(end);
        after.add(call("blockingExit"));
        insns.insert(call, after);
        InsnList exit = new InsnList();
        exit.add(call("blockingExit"));
        addRethrowingHandler(mn, start, end, around, frames ? slots : null, exit);
        mn.maxStack = Math.max(mn.maxStack, 1);
    }

    /** The locals a method's callback sites share: up to three arguments, then the count. */
    private static final int CALLBACK_LOCALS = 4;

    /** Whether {@code in} lies in {@code tcb}'s range. */
    private static boolean covers(TryCatchBlockNode tcb, AbstractInsnNode in) {
        for (AbstractInsnNode n = tcb.start; n != null && n != tcb.end; n = n.getNext()) {
            if (n == in) {
                return true;
            }
        }
        return false;
    }

    /** The frame at {@code label} (a handler's: with EXPAND_FRAMES, a full one), or null. */
    private static FrameNode frameAt(LabelNode label) {
        for (AbstractInsnNode n = label.getNext(); n != null && n.getOpcode() < 0; n = n.getNext()) {
            if (n instanceof FrameNode f) {
                return f;
            }
        }
        return null;
    }

    /**
     * Narrows {@code slots} (one entry per local slot, TOP where nothing is known yet) by a frame's
     * locals (one entry per variable, a long or double covering two slots); false if a slot at or
     * beyond {@code limit} is used or two types differ.
     */
    private static boolean meet(Object[] slots, List<Object> locals, int limit) {
        int slot = 0;
        for (Object t : locals) {
            int size = t == Opcodes.LONG || t == Opcodes.DOUBLE ? 2 : 1;
            if (t != Opcodes.TOP) {
                if (slot + size > limit) {
                    return false;
                }
                if (slots[slot] == Opcodes.TOP) {
                    slots[slot] = t;
                } else if (!slots[slot].equals(t)) {
                    return false;
                }
            }
            slot += size;
        }
        return true;
    }

    /** {@link #meet}'s slots back as a frame's locals: a long or double's second slot dropped. */
    private static List<Object> fromSlots(Object[] slots) {
        List<Object> locals = new ArrayList<>(slots.length);
        for (int i = 0; i < slots.length; i++) {
            Object t = slots[i];
            locals.add(t);
            if (t == Opcodes.LONG || t == Opcodes.DOUBLE) {
                i++; // its second slot
            }
        }
        return locals;
    }

    /**
     * Wraps a {@code Lock} call site: the receiver is kept (DUP; the timed {@code tryLock}'s two
     * arguments go through two new locals first) and handed to the hook after the call returns;
     * a call that throws reaches no hook (nothing was taken, or nothing released).
     */
    private static void hookLockCall(MethodNode mn, MethodInsnNode call, String hook) {
        InsnList insns = mn.instructions;
        InsnList before = new InsnList();
        if (call.desc.equals(TRY_TIMED)) {
            int t = mn.maxLocals;
            int u = t + 2;
            mn.maxLocals += 3;
            before.add(new VarInsnNode(Opcodes.ASTORE, u));
            before.add(new VarInsnNode(Opcodes.LSTORE, t));
            before.add(new InsnNode(Opcodes.DUP));
            before.add(new VarInsnNode(Opcodes.LLOAD, t));
            before.add(new VarInsnNode(Opcodes.ALOAD, u));
        } else {
            before.add(new InsnNode(Opcodes.DUP));
        }
        insns.insertBefore(call, before);
        String desc = hook.equals("lockTried") ? "(Ljava/lang/Object;Z)Z" : "(Ljava/lang/Object;)V";
        insns.insert(call, new MethodInsnNode(Opcodes.INVOKESTATIC, POLL, hook, desc, false));
    }

    /**
     * {@code Poll.monitorEnter()} right after a MONITORENTER, inside the catch-any ranges that begin
     * at the labels just after it (javac's synchronized-block handler, which releases the monitor):
     * a call between MONITORENTER and the range's start could throw with the monitor held and no
     * handler to release it, and HotSpot then finds the method's monitors unbalanced and never
     * compiles it (C1 and C2: "not compilable (unbalanced monitors)"). Those ranges are made to
     * start at a new label before the hook; the old labels stay where they are (one may be a
     * jump target, such as a loop head, and the hook must not run again on that jump).
     */
    private static void hookMonitorEnter(MethodNode mn, AbstractInsnNode enter) {
        Set<LabelNode> after = new HashSet<>();
        for (AbstractInsnNode n = enter.getNext(); n != null && n.getOpcode() < 0; n = n.getNext()) {
            if (n instanceof LabelNode l) {
                after.add(l);
            }
        }
        LabelNode start = new LabelNode();
        InsnList l = new InsnList();
        l.add(start);
        l.add(call("monitorEnter"));
        mn.instructions.insert(enter, l);
        for (TryCatchBlockNode tcb : mn.tryCatchBlocks) {
            if (after.contains(tcb.start)) {
                tcb.start = start;
            }
        }
    }

    /**
     * Does {@code mn} call a static {@code park*} method of a class named {@code LockSupport}
     * ({@code java.util.concurrent.locks.LockSupport}, or a library's wrapper of it: Guava's
     * {@code OverflowAvoidingLockSupport.parkNanos}, called by {@code AbstractFuture.get(long,
     * TimeUnit)}'s wait loop, and relocated copies), or {@code Unsafe.park}? Such a method names
     * the thread to wake by {@code Thread.currentThread()} (a waiter node built before the park, as
     * in Guava's {@code AbstractFuture.get}) and loops around the park (a CAS retry before it, a
     * spurious return after it), and its back-edges poll: a goroutine moved to another carrier
     * there parks a thread that nobody will unpark, while the waker unparks its old carrier. So the
     * whole method keeps its goroutine on its carrier ({@code Poll.parkerEnter}/{@code parkerExit},
     * counted as a lock: preemption refused, a syscall exit waits for a P in place). Constructors
     * are left out (see instrumentMethod).
     */
    static boolean parksCarrier(MethodNode mn) {
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof MethodInsnNode m && parks(m)) {
                return true;
            }
        }
        return false;
    }

    private static boolean parks(MethodInsnNode m) {
        if (m.getOpcode() == Opcodes.INVOKESTATIC) {
            return m.name.startsWith("park")
                    && m.owner.endsWith("LockSupport"); // java/util/concurrent/locks/ or a wrapper
        }
        return m.getOpcode() == Opcodes.INVOKEVIRTUAL
                && m.name.equals("park")
                && (m.owner.equals("sun/misc/Unsafe") || m.owner.equals("jdk/internal/misc/Unsafe"));
    }

    /** Returns {backedge polls, entry polls, monitor hooks}. */
    private int[] instrumentMethod(String owner, Map<String, Integer> fields, MethodNode mn, boolean frames) {
        InsnList insns = mn.instructions;
        // A class initialiser gets hooks only: a yield there is refused (pinned) anyway.
        boolean clinit = "<clinit>".equals(mn.name);
        String pollOwner = strategy.pollOwner();
        String pollName = strategy.pollName();
        // Asked before any edit: the strategy sees the method as javac wrote it.
        boolean atEntry = !clinit && strategy.pollAtEntry(owner, mn);
        int stride = clinit ? 0 : strategy.stride(owner, mn);
        int backedges = 0;
        int entries = 0;
        int hooks = 0;
        int maxStack = mn.maxStack;

        Set<AbstractInsnNode> mined =
                stride > 0 ? StripMiner.stripMine(owner, fields, mn, stride, frames, site(owner, mn)) : Set.of();
        // Each strip-mined loop polls once in its outer head.
        backedges += mined.size() / 2;
        // One pass in code order: labels seen so far decide which branches go backwards.
        Set<LabelNode> seen = new HashSet<>();
        boolean sync = (mn.access & Opcodes.ACC_SYNCHRONIZED) != 0;
        // A synchronized method holds its monitor from its first instruction: an entry poll would
        // come before the monitorEnter hook (a preemption inside the monitor at depth 0), and
        // every poll inside is refused anyway. (Its back-edges poll, counted and refused.)
        atEntry &= !sync;
        // The hooks that wrap the whole body: entered first, exited on every return and by a
        // catch-all handler. A synchronized method's monitor, a class initialiser, and a method that
        // parks its carrier (parksCarrier: it keeps its goroutine there, as a lock would).
        List<String> enters = new ArrayList<>(2);
        List<String> exits = new ArrayList<>(2);
        if (sync) {
            enters.add("monitorEnter");
            exits.add(0, "monitorExit");
        }
        if (clinit) {
            enters.add("clinitEnter");
            exits.add(0, "clinitExit");
        } else if (!"<init>".equals(mn.name) && parksCarrier(mn)) {
            // Not a constructor: a catch-all range before its super() call would hold an
            // uninitialised this, which the handler's frame cannot describe (VerifyError).
            enters.add("parkerEnter");
            exits.add(0, "parkerExit");
        }
        int lockSites = 0;
        int callbackSites = 0;
        List<MethodInsnNode> callbacks = new ArrayList<>();
        List<MethodInsnNode> blocking = new ArrayList<>();
        // The blocking call sites that may get a handler: in a constructor, only those after its
        // super(...) or this(...) call (a handler's range before it would hold an uninitialised
        // this, which the handler's frame cannot describe: VerifyError).
        Set<MethodInsnNode> handled = new HashSet<>();
        boolean constructor = "<init>".equals(mn.name);
        boolean initialised = !constructor;
        int pendingNews = 0;
        // The invocation's frame token for its stream reads' hooks, taken before anything else,
        // so that every frame of the method, the hooks' handlers' included, has it.
        int frameLocal = !clinit && readsStreams(mn) ? addFrameToken(mn, frames) : -1;
        for (AbstractInsnNode in = insns.getFirst(); in != null; ) {
            AbstractInsnNode next = in.getNext();
            if (!initialised) {
                // In code order, every NEW is initialised by an <init> call before the constructor's
                // own (javac evaluates super(...)'s arguments first, a flexible constructor body's
                // statements before them): the first <init> call with no NEW pending is this one's.
                if (in.getOpcode() == Opcodes.NEW) {
                    pendingNews++;
                } else if (in instanceof MethodInsnNode m
                        && m.getOpcode() == Opcodes.INVOKESPECIAL
                        && m.name.equals("<init>")) {
                    if (pendingNews == 0) {
                        initialised = true;
                    } else {
                        pendingNews--;
                    }
                }
            }
            if (in instanceof LabelNode l) {
                seen.add(l);
            } else if (!clinit
                    && !mined.contains(in)
                    && backwardTarget(in, seen) instanceof LabelNode target
                    && strategy.pollAtBackedge(owner, mn, in, target)) {
                insns.insertBefore(in, pollAt(pollOwner, pollName, site(owner, mn)));
                backedges++;
            } else {
                int op = in.getOpcode();
                if (isCloseCall(in)) {
                    // Around the call, whatever else wraps it (an ExecutorService's close blocks:
                    // its syscall hooks come between these and the call).
                    insns.insertBefore(in, closeTargetHook());
                    insns.insert(in, closedHook());
                    mn.maxStack = Math.max(mn.maxStack, maxStack + 2);
                    hooks += 2;
                }
                if (op == Opcodes.MONITORENTER) {
                    hookMonitorEnter(mn, in);
                    hooks++;
                } else if (op == Opcodes.MONITOREXIT) {
                    // Before the exit, so that the hook runs with the monitor held: inside javac's
                    // catch-any range, as HotSpot's monitor matching requires (no poll comes between).
                    insns.insertBefore(in, call("monitorExit"));
                    hooks++;
                } else if (!exits.isEmpty() && op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
                    for (String exit : exits) {
                        insns.insertBefore(in, call(exit));
                        hooks++;
                    }
                } else if (lockHook(in) instanceof String hook) {
                    hookLockCall(mn, (MethodInsnNode) in, hook);
                    lockSites++;
                    hooks++;
                } else if (replacementCall(in) instanceof MethodInsnNode helper) {
                    insns.set(in, helper);
                    if (isStreamReadStandIn(helper)) {
                        insns.insertBefore(helper, frameToken(frameLocal));
                        mn.maxStack = Math.max(mn.maxStack, maxStack + 2);
                    }
                    hooks++;
                } else if (isBlockingCall(in)) {
                    // Wrapped after this pass, as the callbacks are.
                    blocking.add((MethodInsnNode) in);
                    if (initialised) {
                        handled.add((MethodInsnNode) in);
                    }
                } else if (!clinit && initialised && callbackIndex(in) >= 0) {
                    // Not in a constructor before its super() call: the hook's handler range would
                    // hold an uninitialised this. Wrapped after this pass, so that a strategy
                    // measuring a loop's body (looplen) sees it as javac wrote it.
                    callbacks.add((MethodInsnNode) in);
                }
            }
            in = next;
        }
        if (!callbacks.isEmpty()) {
            // One set of locals for every site: each is used only around its own call.
            int first = mn.maxLocals;
            mn.maxLocals += CALLBACK_LOCALS;
            for (MethodInsnNode call : callbacks) {
                if (hookCallbackCall(mn, call, callbackIndex(call), first, frames)) {
                    callbackSites++;
                    hooks += 3;
                }
            }
        }
        int argLocals = -1;
        for (MethodInsnNode call : blocking) {
            // Not in a class initialiser (where the runtime would not enter the syscall anyway);
            // no handler in a constructor before its super() call (its range would hold an
            // uninitialised this, as for parkerEnter): an exception there leaves the syscall at
            // the goroutine's next gort call.
            if (!clinit) {
                if (argLocals < 0 && needsReceiverCheck(call)) {
                    // One set of locals for every site: each is used only around its own call.
                    argLocals = mn.maxLocals;
                    mn.maxLocals += BLOCKING_ARG_SLOTS;
                    // The receiver's copy above the receiver (its arguments wait in locals), and
                    // a buffered read's three arguments above that.
                    mn.maxStack = Math.max(mn.maxStack, maxStack + 4);
                }
                hookBlockingCall(mn, call, frames, handled.contains(call), argLocals, frameLocal);
                hooks += 2;
            }
        }
        if (!enters.isEmpty()) {
            // monitorEnter (clinitEnter, parkerEnter) first, then the body in a catch-all whose
            // handler runs monitorExit (clinitExit, parkerExit) and rethrows. The handler entry
            // goes last in the exception table, so it only sees what the method's own handlers let
            // through.
            LabelNode start = new LabelNode();
            LabelNode end = new LabelNode();
            LabelNode handler = new LabelNode();
            insns.insert(start);
            for (int i = enters.size() - 1; i >= 0; i--) {
                insns.insert(call(enters.get(i)));
            }
            insns.add(end);
            insns.add(handler);
            if (frames) {
                insns.add(new FrameNode(Opcodes.F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"}));
            }
            for (String exit : exits) {
                insns.add(call(exit));
            }
            insns.add(new InsnNode(Opcodes.ATHROW));
            mn.tryCatchBlocks.add(new TryCatchBlockNode(start, end, handler, null));
            mn.maxStack = Math.max(mn.maxStack, 1);
            hooks += enters.size() + exits.size();
        }
        if (lockSites > 0) {
            // A lock call site keeps its receiver below the call's arguments (one more slot).
            mn.maxStack = Math.max(mn.maxStack, maxStack + 1);
        }
        if (callbackSites > 0) {
            // A callback call site pushes the receiver's copy and the index above the receiver
            // (its arguments wait in locals meanwhile), and the count above the call's result.
            mn.maxStack = Math.max(mn.maxStack, maxStack + 2);
        }
        if (atEntry) {
            insns.insert(
                    pollAt(pollOwner, pollName, site(owner, mn))); // first, so loop headers at offset 0 stay after it
            entries++;
        }
        if (backedges + entries > 0) {
            // The site string is pushed right before each poll, maybe above a branch's operands.
            mn.maxStack += 1;
        }
        if ((!enters.isEmpty() || lockSites > 0 || callbackSites > 0 || verify) && backedges + entries + hooks > 0) {
            try {
                new Analyzer<BasicValue>(new BasicVerifier()).analyze(owner, mn);
            } catch (AnalyzerException e) {
                throw new IllegalStateException(owner + "." + mn.name + mn.desc + ": " + e.getMessage(), e);
            }
        }
        return new int[] {backedges, entries, hooks};
    }

    /**
     * The head of the loop that {@code in} closes: its target label already seen in code order (for
     * a switch, the earliest seen of its targets), or null if {@code in} is not a backward branch.
     */
    private static LabelNode backwardTarget(AbstractInsnNode in, Set<LabelNode> seen) {
        if (in instanceof JumpInsnNode j) {
            return j.getOpcode() != Opcodes.JSR && seen.contains(j.label) ? j.label : null;
        }
        List<LabelNode> targets;
        LabelNode dflt;
        if (in instanceof TableSwitchInsnNode t) {
            targets = t.labels;
            dflt = t.dflt;
        } else if (in instanceof LookupSwitchInsnNode l) {
            targets = l.labels;
            dflt = l.dflt;
        } else {
            return null;
        }
        if (!seen.contains(dflt) && !anySeen(targets, seen)) {
            return null;
        }
        // The earliest seen target in code order (the longest loop this switch closes): walking
        // back, the last target label met.
        LabelNode head = null;
        for (AbstractInsnNode p = in.getPrevious(); p != null; p = p.getPrevious()) {
            if (p instanceof LabelNode l && (l == dflt || targets.contains(l))) {
                head = l;
            }
        }
        return head;
    }

    private static boolean anySeen(List<LabelNode> labels, Set<LabelNode> seen) {
        for (LabelNode l : labels) {
            if (seen.contains(l)) {
                return true;
            }
        }
        return false;
    }
}
