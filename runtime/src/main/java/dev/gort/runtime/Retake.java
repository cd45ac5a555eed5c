package dev.gort.runtime;

/**
 * sysmon's retake of Ps whose carrier is blocked in user code that nobody wrapped in a syscall
 * (Go's retake has the time-slice and {@code _Psyscall} branches, in {@link Sysmon#retake}; this is
 * gort's third branch, called from there for each {@code _Prunning} P). Runs on the sysmon thread
 * only (the {@code P.sysmonBlocked*} fields are sysmon's, plain).
 *
 * <h2>Blocked carriers (no Go equivalent: Go knows every blocking call)</h2>
 * A goroutine calling {@code Thread.sleep}, {@code LockSupport.park}, {@code Object.wait}, a
 * {@code BlockingQueue.take}, {@code Future.get} or entering a contended {@code synchronized} blocks
 * its carrier while its P still looks {@code _Prunning}. sysmon notices that the carrier's
 * {@link Thread#getState()} is BLOCKED, WAITING or TIMED_WAITING (a volatile read, a few ns) with the
 * same G on it and the P's schedtick unchanged, at two sysmon ticks in a row, and then retakes the P
 * as if the G had entered a syscall at the start of its block.
 *
 * <p>Some waits leave the thread RUNNABLE: waiting for a class initialiser that another goroutine
 * runs (a goroutine that parks inside an initialiser parks in place, and the goroutines that touch
 * the class meanwhile wait in the JVM; with their carriers holding every P, nobody ran the timer or
 * the goroutine that would wake the initialiser: a hang), a blocking socket, pipe or file read in
 * native code, a JNI call that waits. On Linux sysmon asks the kernel about a RUNNABLE carrier whose G
 * has outlived its 10 ms time slice (it has held its P that long: a preemption, if sent, was not honoured), once per ms at
 * most: if the carrier has used no CPU since the last look ({@link KernelThreads#cpuTime}, about 2 µs
 * here), sysmon asks the kernel whether it sleeps ({@link KernelThreads#sleeping}, a read of
 * {@code /proc}, about 15 µs here, at most {@link #KERNEL_ASKS_PER_MS} per ms in all). Asleep
 * ({@code S} or {@code D}, not waiting for a CPU) at two such looks in a row, it is blocked as above,
 * and the same steps follow:
 * <ol>
 *   <li>CAS the G {@code _Grunning -> _Gscanrunning}. From now on the G's own carrier cannot change
 *       its status (every transition waits for the scan bit, {@code casgstatus}), and runtime code
 *       on that carrier that uses the P ({@code ready}, {@code newproc}) first reads the status,
 *       also waiting for the bit ({@link Syscalls#pForRuntime}).
 *   <li>Re-check, after that CAS (a full fence): same M on the P, same G, same schedtick,
 *       {@code m.locks == 0} (the carrier is not blocked inside runtime code that holds the P, e.g.
 *       on {@code sched.lock} in runqputslow), the carrier still blocked, and then the G still on
 *       its carrier ({@code yieldReason == YIELD_NONE}: not yielded to its M, whose departure code,
 *       Go's g0, may block too but owns the G's status). If the carrier woke up
 *       meanwhile its state is RUNNABLE again and we let go ({@code _Grunning}).
 *       Why this is enough: a carrier that returns from a JVM block writes its RUNNABLE state and
 *       then passes a full fence before it runs Java code again, and its next status read comes
 *       after that; so either we see RUNNABLE and let go, or it sees our scan bit and waits. For a
 *       carrier seen asleep in the kernel, the re-check reads its CPU time again: unchanged since
 *       the look before the last one, it has run no instruction since before the stack sample and
 *       the checks, and whatever it runs after its wake-up (a context switch, itself a full
 *       barrier, outside the Java memory model) sees the scan bit. A JVM-blocked sighting never
 *       turns into a kernel one after the CAS, nor the other way: a carrier seen blocked in the
 *       JVM and RUNNABLE after the CAS is let go, whatever the kernel says.
 *   <li>Do what {@code entersyscall} would have done (m.p = nil, m.oldp = nil, p.m = nil), put the
 *       P {@code _Pidle} (nobody else writes a running P's status), bump its syscalltick, publish
 *       the G as {@code _Gsyscall} (release), raise the carrier's preemption flag (its next poll
 *       notices), and {@code handoffp}.
 * </ol>
 * Steps 1 to 3 run with one more M counted as running ({@code incidlelocked(-1)} before the CAS,
 * {@code incidlelocked(1)} after), as in Go's retake: the retaken M may stop before the P reaches
 * handoffp, and its checkdead must not call the P's queued Gs deadlocked.
 * The goroutine notices at its next gort call ({@code gopark}, {@code Gosched}, a preemption poll, a
 * {@code Syscall.block}: they call {@code exitsyscall}), or when it leaves its carrier (the M loop
 * calls exitsyscall for it); {@code ready}/{@code newproc} from such a G use the global queue.
 *
 * <p>Before the CAS, the carrier's stack is sampled (once per ms at most): if the innermost
 * non-JDK frame is gort's own code (a channel's lock, {@code sched.lock}, a timer heap), the block
 * is the runtime's, short by construction, and the P stays, as Go's M keeps its P while it waits
 * for a runtime lock. {@code m.locks != 0} (held by runtime code that uses the P) also vetoes.
 *
 * <p><b>Not detected</b>: busy-waiting (the kernel sees it run), a GC pause (sysmon stops too),
 * a RUNNABLE wait shorter than the time slice plus two looks (and the 10 ms grace above when other
 * Ps are idle), and, where the kernel or the thread's CPU time cannot be read (not Linux, no
 * {@code /proc/thread-self}, {@code java.management} absent or thread CPU time disabled), every
 * wait that leaves the thread RUNNABLE. A blocking call wrapped in {@code Syscall.block} needs no detection, and its P is
 * retaken after one sysmon tick when there is other work rather than after the time slice.
 *
 * <p>Go: proc.go retake
 */
final class Retake {
    /** As for a syscall: the 10 ms after which the P is retaken even with nothing else to run. */
    static final long SYSCALL_RETAKE_NS = 10_000_000L;

    private Retake() {}

    /**
     * The blocked-carrier branch for one P seen {@code _Prunning}: see the class comment. Returns
     * true if the P was retaken.
     */
    static boolean retakeBlocked(Scheduler s, P pp, long now) {
        M mp = pp.mOpaque();
        G gp = mp == null ? null : mp.curg;
        if (gp == null
                || gp.m != mp
                || mp.locks != 0
                || gp.yieldReason != G.YIELD_NONE
                || gp.readgstatus() != G._Grunning) {
            pp.sysmonBlockedG = null;
            return false;
        }
        Thread.State st = mp.thread.getState();
        boolean viaKernel = !blockedState(st);
        if (pp.sysmonBlockedViaKernel != viaKernel) {
            // A sighting counts for the way it was made only: a JVM block's ends at the first
            // RUNNABLE look, a kernel sleep's at a JVM block.
            pp.sysmonBlockedG = null;
        }
        if (viaKernel) {
            // RUNNABLE may still be a wait (the class comment's second kind). Only once the G has
            // outlived its time slice, and once per ms at most: has the carrier used CPU since the
            // last look (a cheap read)? If not, ask the kernel whether it sleeps (a dear one).
            if (st != Thread.State.RUNNABLE || mp.tid == 0 || now - pp.sysmonSchedwhen < Preempt.forcePreemptNS) {
                pp.sysmonBlockedG = null;
                pp.sysmonSleepChecked = 0;
                return false;
            }
            if (pp.sysmonSleepChecked != 0 && now - pp.sysmonSleepChecked < KERNEL_LOOK_NS) {
                return false; // not looked at this time: a sighting stands as it was
            }
            if (!s.sysmon.mayReadCpu(now)) {
                return false; // this ms's reads are spent: look at the next tick, nothing reset
            }
            long cpu = KernelThreads.cpuTime(mp.thread);
            boolean first = pp.sysmonSleepChecked == 0;
            pp.sysmonSleepChecked = now;
            long before = pp.sysmonSleepCpu;
            pp.sysmonSleepCpu = cpu;
            if (first || cpu < 0 || cpu != before) {
                pp.sysmonBlockedG = null; // it ran since the last look (or this is the first)
                return false;
            }
            if (!s.sysmon.mayAskKernel(now)) {
                // Ask at the next tick; the sighting and the CPU reading stand (cpu == before).
                pp.sysmonSleepChecked = now - KERNEL_LOOK_NS;
                return false;
            }
            if (!KernelThreads.sleeping(mp.tid)) {
                pp.sysmonBlockedG = null; // waiting for a CPU, not for an event
                return false;
            }
        }
        int tick = pp.schedtickOpaque();
        if (pp.sysmonBlockedG != gp || pp.sysmonBlockedTick != tick) {
            // First sighting: a block must last at least one sysmon tick to count.
            pp.sysmonBlockedG = gp;
            pp.sysmonBlockedTick = tick;
            pp.sysmonBlockedWhen = now;
            pp.sysmonBlockedChecked = 0;
            pp.sysmonBlockedViaKernel = viaKernel;
            return false;
        }
        // As for a syscall, leave it if there is nothing else to do and capacity exists elsewhere,
        // for up to 10 ms; never while the world is being stopped (the P would never stop).
        if (!s.sched.gcwaiting
                && pp.runq.runqempty()
                && s.idle.nmspinning.get() + s.idle.npidle.get() > 0
                && pp.sysmonBlockedWhen + SYSCALL_RETAKE_NS > now) {
            return false;
        }
        // Blocked inside gort itself (a channel's or the scheduler's lock)? Go's M would keep its P
        // there: such waits are short. Sample the stack (a handshake: tens of µs) at most every ms.
        if (pp.sysmonBlockedChecked == 0 || now - pp.sysmonBlockedChecked >= STACK_RECHECK_NS) {
            pp.sysmonBlockedChecked = now;
            pp.sysmonBlockedInRuntime = blockedInRuntime(mp);
        }
        if (pp.sysmonBlockedInRuntime) {
            return false;
        }
        // As Go's retake before its CAS: pretend one more M is running until the P is handed off.
        // Otherwise the M we retake from can see its G _Gsyscall, park it, find no P (ours, _Pidle
        // on its way to handoffp, is in no idle list), stop, and report a deadlock with the G that
        // waits in the P's run queue ("checkdead: runnable g" in ParkInSyscallTest: 1 to 7 in 600
        // repetitions beside a CPU hog before, none in 1,812 after). Go: proc.go retake.
        s.idle.incidlelocked(-1);
        try {
            return takeBlockedP(s, pp, mp, gp, tick, now, viaKernel);
        } finally {
            s.idle.incidlelocked(1);
        }
    }

    /**
     * retakeBlocked from the scan-bit CAS on, with one more M counted as running. {@code viaKernel}:
     * the carrier was seen RUNNABLE but asleep in the kernel, with {@code pp.sysmonSleepCpu} its CPU
     * time at this tick's look, unchanged since the look before (the stack sample was taken between
     * them or after).
     */
    private static boolean takeBlockedP(Scheduler s, P pp, M mp, G gp, int tick, long now, boolean viaKernel) {
        if (!gp.tryCasgstatus(G._Grunning, G._Gscanrunning)) {
            return false;
        }
        // The scan bit is ours: the carrier cannot change the G's status now. Re-check everything.
        // Still blocked? A JVM block: the thread state says so. A kernel sleep: no CPU used since
        // the look before this tick's, so not one instruction ran since before the stack sample
        // and the checks below; whatever it runs after its wake-up (a context switch, a full
        // barrier) comes after our CAS and sees the scan bit.
        boolean still;
        if (viaKernel) {
            long cpu;
            try {
                cpu = KernelThreads.cpuTime(mp.thread);
            } catch (Throwable t) {
                gp.setgstatusRelease(G._Grunning);
                throw t;
            }
            still = cpu >= 0 && cpu == pp.sysmonSleepCpu;
        } else {
            still = carrierBlocked(mp);
        }
        if (mp.curg != gp
                || pp.mOpaque() != mp
                || mp.p != pp
                || pp.status() != P._Prunning
                || mp.locks != 0
                || pp.schedtickOpaque() != tick
                || !still
                // After the thread state (see G.YIELD_NONE): has the G yielded to its M, whose code
                // now runs (and may block, e.g. on a trace flush) before it changes the G's status
                // itself? Then the P is the M's, as in Go (only a G's own M changes a running G's
                // status): a retake here made the M's casgstatus(_Grunning, ...) fatal. With our
                // scan bit set nothing can reset the reason to YIELD_NONE (that needs a status
                // change), so NONE here means the G was on its carrier when it was seen blocked.
                || gp.yieldReason != G.YIELD_NONE) {
            gp.setgstatusRelease(G._Grunning);
            s.syscallStats.blockedAborts.incrementAndGet();
            pp.sysmonBlockedG = null;
            return false;
        }
        // Enter a syscall on the M's behalf (Go: reentersyscall), and retake its P at once.
        if (s.trace.on) {
            s.trace.syscallEnterBlocked(mp, pp, gp);
            s.trace.handoff(pp, mp);
        }
        mp.syscalltick = pp.syscalltickOpaque();
        mp.oldp = null;
        mp.p = null;
        pp.setMOpaque(null);
        pp.setStatus(P._Pidle);
        pp.incSyscalltickOpaque();
        pp.sysmonBlockedG = null;
        // How checkRetaken watches it: by CPU time if the kernel had it asleep, else by JVM state.
        mp.sysmonAsleepLook = viaKernel ? now : 0;
        mp.sysmonAsleepCpu = viaKernel ? pp.sysmonSleepCpu : 0;
        mp.sysmonAsleepStill = viaKernel;
        gp.syscallImplicit = G.SYSCALL_RETAKE; // published by the release store below
        gp.setgstatusRelease(G._Gsyscall);
        Preempt.notice(mp); // its next poll (if instrumented) notices: Preempt.poll
        s.sysmon.watchRetaken(mp); // parked (out of Poll's armed count) while it stays blocked
        s.syscallStats.blockedRetakes.incrementAndGet();
        s.idle.handoffp(pp);
        return true;
    }

    /** How often retakeBlocked re-samples the stack of a carrier found blocked inside gort. */
    static final long STACK_RECHECK_NS = 1_000_000L;

    /**
     * Is the carrier blocked inside gort's own code? The innermost frame that is not the JDK's
     * decides: gort (runtime or api) means yes; anything else (user code, a library) means the
     * user blocked. JDK frames are those of named {@code java.*}/{@code jdk.*} modules; a
     * {@code Poll} method that stands in for a user's call site and makes the user's call
     * ({@link Poll#CALL_SITE_STAND_INS}) is looked past, as a JDK frame: the user's code called it.
     */
    static boolean blockedInRuntime(M mp) {
        for (StackTraceElement e : mp.thread.getStackTrace()) {
            String mod = e.getModuleName();
            if (mod != null && (mod.startsWith("java.") || mod.startsWith("jdk."))) {
                continue;
            }
            if (e.getClassName().equals(POLL) && Poll.CALL_SITE_STAND_INS.contains(e.getMethodName())) {
                continue;
            }
            return isGortCode(e.getClassName());
        }
        return false;
    }

    private static final String POLL = Poll.class.getName();

    private static final java.util.concurrent.ConcurrentHashMap<String, Boolean> GORT_CODE =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The resource that names, one exact package per line, the packages of gort's own runtime code
     * beyond {@code dev.gort.runtime} (the api has it). The runtime names no module above it: the
     * modules say what they are. Packages, not jars: a fat jar holds user classes beside them.
     */
    static final String MARKER = "META-INF/gort-runtime-code";

    /** The packages every {@link #MARKER} on the class path names; read once. */
    private static volatile java.util.Set<String> markedPackages;

    private static java.util.Set<String> markedPackages() {
        java.util.Set<String> s = markedPackages;
        if (s == null) {
            java.util.Set<String> found = new java.util.HashSet<>();
            try {
                ClassLoader cl = Retake.class.getClassLoader();
                java.util.Enumeration<java.net.URL> urls =
                        cl == null ? ClassLoader.getSystemResources(MARKER) : cl.getResources(MARKER);
                while (urls.hasMoreElements()) {
                    try (java.io.InputStream in = urls.nextElement().openStream()) {
                        for (String line :
                                new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                            String t = line.trim();
                            if (!t.isEmpty() && !t.startsWith("#")) {
                                found.add(t);
                            }
                        }
                    }
                }
            } catch (java.io.IOException | RuntimeException e) {
                // unreadable: only dev.gort.runtime counts
            }
            s = java.util.Set.copyOf(found);
            markedPackages = s;
        }
        return s;
    }

    /**
     * gort's own classes: package {@code dev.gort.runtime} and below, and the packages a {@link
     * #MARKER} names (the api's); the modules above (examples, benchmarks) and classes loaded from a
     * {@code test-classes} directory (gort's own tests play the user) are not. Cached per class name.
     */
    static boolean isGortCode(String className) {
        if (!className.startsWith("dev.gort.")) {
            return false;
        }
        return GORT_CODE.computeIfAbsent(className, cn -> {
            try {
                Class<?> c = Class.forName(cn, false, Retake.class.getClassLoader());
                java.security.CodeSource src = c.getProtectionDomain().getCodeSource();
                if (src != null
                        && src.getLocation() != null
                        && src.getLocation().getPath().endsWith("test-classes/")) {
                    return false;
                }
                String pkg = c.getPackageName();
                return pkg.equals("dev.gort.runtime")
                        || pkg.startsWith("dev.gort.runtime.")
                        || markedPackages().contains(pkg);
            } catch (ClassNotFoundException | LinkageError | SecurityException e) {
                return false;
            }
        });
    }

    /** The carrier is parked or blocked in the JVM (cheap: a volatile read of the thread status). */
    static boolean carrierBlocked(M mp) {
        return blockedState(mp.thread.getState());
    }

    /** The least time between two looks at one carrier's CPU time or kernel state. */
    static final long KERNEL_LOOK_NS = 1_000_000L;

    /** The most carriers' kernel states sysmon reads per ms ({@code Sysmon.mayAskKernel}). */
    static final int KERNEL_ASKS_PER_MS = 4;

    /** The most retaken carriers' CPU times sysmon reads per ms ({@code Sysmon.mayReadCpu}). */
    static final int CPU_READS_PER_MS = 32;

    /**
     * For sysmon's watch of a retaken carrier ({@code Sysmon.checkRetaken}, every tick): is it
     * still blocked? The JVM's thread state says so for a carrier retaken from a JVM block; for one
     * retaken asleep in the kernel (RUNNABLE to the JVM), it is blocked while it uses no CPU: its
     * CPU time is read once per ms at most ({@link KernelThreads#cpuTime}, about 2 µs here; at most
     * {@link #CPU_READS_PER_MS} such reads per ms in all), and between two reads the last read's
     * verdict stands (a carrier that woke meanwhile runs on without a P, as in a syscall, until the
     * next read arms its polls again, or until its next gort call).
     */
    static boolean stillBlocked(Sysmon sm, M mp, long now) {
        Thread.State st = mp.thread.getState();
        if (blockedState(st)) {
            return true;
        }
        if (st != Thread.State.RUNNABLE) {
            return false;
        }
        if (mp.sysmonAsleepLook == 0) {
            // Retaken from a JVM block, which it has left: running now, or asleep in native code
            // (a socket read). Arm its polls, and watch its CPU time from here on.
            if (mp.tid != 0 && sm.mayReadCpu(now)) {
                mp.sysmonAsleepCpu = KernelThreads.cpuTime(mp.thread);
                mp.sysmonAsleepLook = now;
                mp.sysmonAsleepStill = false;
            }
            return false;
        }
        if (now - mp.sysmonAsleepLook < KERNEL_LOOK_NS || !sm.mayReadCpu(now)) {
            return mp.sysmonAsleepStill; // the last read's verdict
        }
        long cpu = KernelThreads.cpuTime(mp.thread);
        mp.sysmonAsleepLook = now;
        // No CPU used since the last read: blocked still. Else it ran: arm its polls (a later read
        // that sees no CPU used parks them again).
        mp.sysmonAsleepStill = cpu >= 0 && cpu == mp.sysmonAsleepCpu;
        mp.sysmonAsleepCpu = cpu;
        return mp.sysmonAsleepStill;
    }

    private static boolean blockedState(Thread.State st) {
        return st == Thread.State.BLOCKED || st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING;
    }
}
