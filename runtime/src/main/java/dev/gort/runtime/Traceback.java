package dev.gort.runtime;

/**
 * Goroutine dumps in Go's layout (Go 1.21+):
 * <pre>
 * goroutine 7 [chan receive, 3 minutes]:
 * com.example.Sieve.filter(...)
 * 	Sieve.java:42
 * created by com.example.Sieve.main in goroutine 1
 * 	Sieve.java:17
 * 	[waiting on chan#3 int (len 0/cap 0, 1 waiting receiver)]
 * </pre>
 *
 * <p>A frame is its function line ({@code Class.method(...)}: Go's form for a frame whose arguments
 * it does not print) and a tab-indented {@code File.java:line}; an unknown file or line prints as
 * Go prints them, {@code ?} and {@code 0}. Runtime frames (the classes of gort's runtime packages:
 * {@code dev.gort}, {@code dev.gort.runtime.*}, {@code dev.gort.internal}, {@code dev.gort.agent},
 * and the continuation's own {@code jdk.internal.vm} frames) are hidden unless {@code
 * GOTRACEBACK=system} or {@code crash}, as Go hides {@code runtime.*} ({@link #showframe}); test
 * classes ({@code *Test}, {@code *IT}) count as the user's code wherever they live.
 * {@code dev.gort.sync}, {@code dev.gort.context} and {@code dev.gort.net} are shown, as Go shows
 * {@code sync}, {@code context} and {@code net}.
 *
 * <p>gort beyond Go: the last line of a waiting goroutine names what it waits on, tab-indented and
 * in brackets, so that a Go-dump parser (panicparse's grammar) takes it for text between dumps: it
 * is neither a function line (those end in {@code )}) nor a file line (those end in {@code :N}).
 *
 * <p>{@code GOTRACEBACK} ({@code -Dgort.traceback} wins over the variable) is read as Go reads it:
 * {@code none} (0), {@code single} (the default, 1), {@code all} (1, every goroutine), {@code
 * system} (2: runtime frames, and {@code gp= m=} in headers), {@code crash} (system, and then the
 * JVM's own threads); a number is that level with all goroutines. Anything else is a malformed
 * setting.
 *
 * <p>Go: traceback.go goroutineheader, traceback, printcreatedby, showframe; runtime1.go gotraceback
 */
public final class Traceback {
    private Traceback() {}

    private static final java.util.Set<String> RUNTIME_FRAMES = java.util.Set.of(
            "dev.gort.runtime.Scheduler", "dev.gort.runtime.Traceback", "dev.gort.Go", "dev.gort.Runtimes");

    // GOTRACEBACK, packed as Go packs traceback_cache: level << 2 | all << 0 | crash << 1.
    private static final int TRACEBACK_ALL = 1;
    private static final int TRACEBACK_CRASH = 2;
    private static final int TRACEBACK_SHIFT = 2;

    /**
     * The GOTRACEBACK setting. Written by {@link #setTraceback} (any thread), read by every dump:
     * volatile.
     */
    private static volatile int tracebackCache = parseTraceback(Config.setting("gort.traceback", "GOTRACEBACK"));

    /** Go: runtime1.go setTraceback. A value Go would not accept is a malformed setting. */
    static int parseTraceback(String v) {
        if (v == null) {
            return 1 << TRACEBACK_SHIFT;
        }
        return switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "none" -> 0;
            case "single" -> 1 << TRACEBACK_SHIFT;
            case "all" -> 1 << TRACEBACK_SHIFT | TRACEBACK_ALL;
            case "system" -> 2 << TRACEBACK_SHIFT | TRACEBACK_ALL;
            case "crash" -> 2 << TRACEBACK_SHIFT | TRACEBACK_ALL | TRACEBACK_CRASH;
            default -> {
                try {
                    int n = Integer.parseInt(v);
                    if (n < 0) {
                        throw new NumberFormatException();
                    }
                    yield n << TRACEBACK_SHIFT | TRACEBACK_ALL;
                } catch (NumberFormatException e) {
                    throw Config.malformed(
                            "gort.traceback", "GOTRACEBACK", "none, single, all, system, crash or a level >= 0");
                }
            }
        };
    }

    /**
     * Sets GOTRACEBACK for this JVM ({@code none}, {@code single}, {@code all}, {@code system},
     * {@code crash}, or a number). Unlike Go's, it may lower the level below the environment's.
     *
     * <p>Go: runtime/debug.SetTraceback
     */
    static void setTraceback(String level) {
        tracebackCache = parseTraceback(level == null || level.isBlank() ? null : level.trim());
    }

    /** The GOTRACEBACK setting by Go's name ({@code ./gort env} prints it): none, single, all, system, crash, or N. */
    public static String setting() {
        int t = tracebackCache;
        return switch (t) {
            case 0 -> "none";
            case 1 << TRACEBACK_SHIFT -> "single";
            case 1 << TRACEBACK_SHIFT | TRACEBACK_ALL -> "all";
            case 2 << TRACEBACK_SHIFT | TRACEBACK_ALL -> "system";
            case 2 << TRACEBACK_SHIFT | TRACEBACK_ALL | TRACEBACK_CRASH -> "crash";
            default -> Integer.toString(t >>> TRACEBACK_SHIFT);
        };
    }

    /** Go: gotraceback's level: 0 none, 1 user frames, 2 runtime frames too. */
    static int level() {
        return tracebackCache >>> TRACEBACK_SHIFT;
    }

    /** Go: gotraceback's all: a crash prints every goroutine, not only the one that failed. */
    static boolean all() {
        return (tracebackCache & TRACEBACK_ALL) != 0;
    }

    /** Go: gotraceback's crash: after the dump, crash (here: print the JVM's threads too). */
    static boolean crash() {
        return (tracebackCache & TRACEBACK_CRASH) != 0;
    }

    /**
     * Whether a frame of class {@code cn} is shown at {@code level}: everything at 2 and above,
     * otherwise everything but the runtime's frames.
     *
     * <p>Go: traceback.go showframe, showfuncinfo
     */
    static boolean showframe(String cn, int level) {
        return level > 1 || !isRuntimeClass(cn);
    }

    /** A class of gort's runtime (its {@code runtime.*}), or of the continuation machinery. */
    public static boolean isRuntimeClass(String cn) {
        if (cn.startsWith("jdk.internal.vm.Continuation")) {
            return true;
        }
        if (!cn.startsWith("dev.gort.")) {
            return false;
        }
        int dot = cn.lastIndexOf('.');
        String pkg = cn.substring(0, dot);
        String top = cn.substring(dot + 1);
        int dollar = top.indexOf('$');
        if (dollar > 0) {
            top = top.substring(0, dollar);
        }
        if (top.endsWith("Test") || top.endsWith("IT")) {
            return false; // a test is the user's code, even in a runtime package
        }
        return pkg.equals("dev.gort")
                || pkg.equals("dev.gort.runtime")
                || pkg.startsWith("dev.gort.runtime.")
                || pkg.equals("dev.gort.internal")
                || pkg.startsWith("dev.gort.internal.")
                || pkg.equals("dev.gort.agent");
    }

    /**
     * The frame that called {@code go}: the first frame outside the runtime's spawning code. Costs a
     * stack walk (~1-2 us), so newproc takes it only while tracing (Go keeps the creator's PC always).
     *
     * <p>Go: proc.go newproc1 (newg.gopc = callerpc)
     */
    static StackTraceElement callerFrame() {
        return StackWalker.getInstance()
                .walk(s -> s.filter(f -> !RUNTIME_FRAMES.contains(f.getClassName()))
                        .findFirst()
                        .map(StackWalker.StackFrame::toStackTraceElement)
                        .orElse(null));
    }

    /** Go: traceback.go goroutineheader, at the GOTRACEBACK level. */
    static String header(G gp, long now) {
        return header(gp, now, level());
    }

    /** Go: traceback.go gStatusStrings. */
    private static String gStatusString(int st) {
        return switch (st) {
            case G._Gidle -> "idle";
            case G._Grunnable -> "runnable";
            case G._Grunning -> "running";
            case G._Gsyscall -> "syscall";
            case G._Gwaiting -> "waiting";
            case G._Gdead -> "dead";
            case G._Gpreempted -> "preempted";
            default -> "???";
        };
    }

    /** Go: traceback.go goroutineheader. */
    static String header(G gp, long now, int level) {
        return header(gp, now, level, false);
    }

    /**
     * Go: traceback.go goroutineheader; {@code leaked}: the header of a goroutine the leak profile
     * found ({@code [chan send (leaked)]}, Go's _Gleaked), whose scan bit the profile holds.
     */
    static String header(G gp, long now, int level, boolean leaked) {
        int raw = gp.readgstatusRaw();
        boolean isScan = !leaked && (raw & G._Gscan) != 0;
        int st = raw & ~G._Gscan;
        String status = gStatusString(st);
        WaitReason wr = gp.waitReason();
        if (st == G._Gwaiting && wr != WaitReason.ZERO) {
            status = wr.go();
        }
        if (leaked) {
            status += " (leaked)";
        }
        StringBuilder sb = new StringBuilder("goroutine ").append(gp.goid);
        if (level >= 2) {
            M m = gp.m;
            sb.append(" gp=0x").append(Integer.toHexString(System.identityHashCode(gp)));
            if (m != null) {
                sb.append(" m=").append(m.id).append(" mp=0x").append(Integer.toHexString(System.identityHashCode(m)));
            } else {
                sb.append(" m=nil");
            }
        }
        sb.append(" [").append(status);
        if (isScan) {
            sb.append(" (scan)");
        }
        long since = gp.waitsince;
        if ((st == G._Gwaiting || st == G._Gsyscall) && since != 0) {
            long mins = (now - since) / 60_000_000_000L;
            if (mins >= 1) {
                sb.append(", ").append(mins).append(" minutes"); // Go prints "1 minutes" too
            }
        }
        if (gp.lockedm() != null) {
            sb.append(", locked to thread");
        }
        return sb.append("]:").toString();
    }

    /**
     * The header of a goroutine the leak profile found, from what it captured under the G's scan
     * bit: {@code header(gp, now, level, true)} of a waiting G with no M and no locked thread (the
     * profile's candidates), {@code gpHash} the G's identity hash.
     */
    static String leakedHeader(long goid, int gpHash, WaitReason wr, long waitsince, long now, int level) {
        StringBuilder sb = new StringBuilder("goroutine ").append(goid);
        if (level >= 2) {
            sb.append(" gp=0x").append(Integer.toHexString(gpHash)).append(" m=nil");
        }
        sb.append(" [")
                .append(wr != WaitReason.ZERO ? wr.go() : gStatusString(G._Gwaiting))
                .append(" (leaked)");
        if (waitsince != 0) {
            long mins = (now - waitsince) / 60_000_000_000L;
            if (mins >= 1) {
                sb.append(", ").append(mins).append(" minutes");
            }
        }
        return sb.append("]:").toString();
    }

    /** Go's frame: {@code pkg.Func(...)}, then a tab and {@code file:line} ({@code ?} and 0 when unknown). */
    static void frame(StringBuilder sb, StackTraceElement e) {
        sb.append(e.getClassName()).append('.').append(e.getMethodName()).append("(...)\n");
        fileLine(sb, e.getFileName(), e.getLineNumber());
    }

    private static void fileLine(StringBuilder sb, String file, int line) {
        sb.append('\t')
                .append(file == null ? "?" : file)
                .append(':')
                .append(Math.max(line, 0))
                .append('\n');
    }

    /** The frames of a Java stack that {@link #showframe} keeps at {@code level}, in Go's layout. */
    static void frames(StringBuilder sb, StackTraceElement[] st, int level) {
        int count = 0;
        for (StackTraceElement e : st) {
            if (showframe(e.getClassName(), level)) {
                count++;
            }
        }
        int shown = 0;
        for (StackTraceElement e : st) {
            if (!showframe(e.getClassName(), level)) {
                continue;
            }
            if (count > INNER_FRAMES + OUTER_FRAMES && shown >= INNER_FRAMES && shown < count - OUTER_FRAMES) {
                if (shown == INNER_FRAMES) {
                    sb.append("...").append(count - INNER_FRAMES - OUTER_FRAMES).append(" frames elided...\n");
                }
                shown++;
                continue;
            }
            shown++;
            frame(sb, e);
        }
    }

    /**
     * A deep stack shows its innermost and outermost frames, and says how many it left out between
     * (a stack overflow's thousand frames). Go: traceback.go tracebackInnerFrames,
     * tracebackOuterFrames (Go 1.21).
     */
    static final int INNER_FRAMES = 50;

    static final int OUTER_FRAMES = 50;

    /** Go: traceback.go printcreatedby, at the GOTRACEBACK level; null when Go prints none. */
    static String createdBy(G gp) {
        return createdBy(gp, frames(gp), level());
    }

    /**
     * {@code created by <function> in goroutine N} and, on the next line, the go statement's
     * {@code file:line}. With {@code -Dgort.creators=stack} (or while tracing) that is the exact
     * frame. Otherwise gort knows only the go function: a lambda {@code lambda$main$0} of class
     * {@code C} was written in {@code C.main}, which is then named with line 0 (unknown, as Go
     * prints it); anything else names the function's class at {@code ?:0}. None for goroutine 1, and
     * none when the creator is a runtime frame that {@link #showframe} hides (as Go).
     *
     * <p>Go: traceback.go printcreatedby, printcreatedby1
     */
    static String createdBy(G gp, StackTraceElement[] st, int level) {
        return createdBy(gp.goid, gp.parentGoid, gp.createdAt(), gp.fn.getClass(), st, level);
    }

    /**
     * {@link #createdBy(G, StackTraceElement[], int)} from the G's fields alone (the leak profile
     * keeps these, never the G or its function, which may reach what the G waits on).
     */
    static String createdBy(
            long goid, long parentGoid, StackTraceElement at, Class<?> fnClass, StackTraceElement[] st, int level) {
        if (parentGoid == 0 && goid == 1) {
            return null; // main
        }
        String fn;
        String file;
        int line;
        if (at != null) {
            fn = at.getClassName() + "." + at.getMethodName();
            file = at.getFileName();
            line = at.getLineNumber();
            if (!showframe(at.getClassName(), level)) {
                return null;
            }
        } else {
            StackTraceElement bottom = null;
            for (int i = st.length - 1; i >= 0; i--) {
                if (!isRuntimeClass(st[i].getClassName())) {
                    bottom = st[i];
                    break;
                }
            }
            java.util.regex.Matcher lm = bottom == null ? null : LAMBDA.matcher(bottom.getMethodName());
            if (lm != null && lm.matches()) {
                String enclosing = switch (lm.group(1)) {
                    case "static" -> "<clinit>";
                    case "new" -> "<init>";
                    default -> lm.group(1);
                };
                fn = bottom.getClassName() + "." + enclosing;
                file = bottom.getFileName();
            } else {
                // A lambda's class is named after its enclosing class: Foo$$Lambda/0x... -> Foo.
                String cn = fnClass.getName();
                int i = cn.indexOf("$$Lambda");
                fn = i > 0 ? cn.substring(0, i) : cn;
                file = null;
            }
            line = 0;
        }
        StringBuilder sb = new StringBuilder("created by ").append(fn);
        if (parentGoid != 0) {
            sb.append(" in goroutine ").append(parentGoid);
        }
        sb.append('\n');
        fileLine(sb, file, line);
        return sb.toString();
    }

    private static final java.util.regex.Pattern LAMBDA = java.util.regex.Pattern.compile("lambda\\$(.+)\\$\\d+");

    /**
     * One goroutine at the GOTRACEBACK level: header, frames (of its parked continuation, or above
     * the continuation entry on its carrier's stack while it runs), {@code created by}, and what it
     * waits on.
     *
     * <p>A parked continuation's frames are read under the G's scan bit ({@link G#castogscanstatus},
     * Go's _Gscan), so no M can mount it while {@code getStackTrace} walks it: an M that wants to run
     * it (or a waker that wants to ready it) spins in casgstatus for those few microseconds.
     */
    public static String dump(G gp, long now) {
        return dump(gp, now, level());
    }

    /** Go: traceback.go goroutineheader + traceback + printcreatedby for one G, at {@code level}. */
    static String dump(G gp, long now, int level) {
        String header = header(gp, now, level);
        StackTraceElement[] st = frames(gp);
        StringBuilder sb = new StringBuilder(header).append('\n');
        int before = sb.length();
        frames(sb, st, level);
        if (sb.length() == before) {
            if (gp.readgstatus() == G._Grunning) {
                // Go: tracebackothers
                sb.append("\tgoroutine running on other thread; stack unavailable\n");
            } else {
                // Not started yet (Go prints its entry function at the function's first line):
                // the go function, at an unknown line.
                String cn = gp.fn.getClass().getName();
                int slash = cn.indexOf('/'); // a lambda's hidden class: Foo$$Lambda/0x... -> Foo$$Lambda
                sb.append(slash > 0 ? cn.substring(0, slash) : cn).append(".run(...)\n");
                fileLine(sb, null, 0);
            }
        }
        String cb = createdBy(gp, st, level);
        if (cb != null) {
            sb.append(cb);
        }
        Object on = gp.waitingOn;
        if (on != null && gp.readgstatus() == G._Gwaiting) {
            String what = on instanceof Describable d
                    ? safeDescribe(d)
                    : on.getClass().getName();
            sb.append("\t[waiting on ").append(what.replace('\n', ' ')).append("]\n");
        }
        return sb.toString();
    }

    /**
     * The goroutine's stack, innermost first, runtime frames included (as Go's goroutine profile
     * records them), the carrier's scheduling loop and a dump's own frames excluded.
     */
    public static StackTraceElement[] stack(G gp) {
        return frames(gp);
    }

    /** The goroutine's own frames, innermost first, without the runtime's frames below it. */
    static StackTraceElement[] frames(G gp) {
        for (int tries = 0; tries < 100; tries++) {
            M m = gp.m;
            if (gp.readgstatus() == G._Grunning && m != null) {
                return goFrames(m.thread.getStackTrace(), m == M.current());
            }
            if (m != null && m.curg == gp) {
                // Parked or waiting for a P with its continuation still mounted (Syscalls.parkInPlace,
                // waitForP: pinned, monitor held, locked): its frames are on its carrier's stack.
                return goFrames(m.thread.getStackTrace(), m == M.current());
            }
            if (gp.castogscanstatus()) {
                try {
                    return goFrames(gp.stackTrace(), false);
                } finally {
                    gp.casfromgscanstatus();
                }
            }
            if (gp.readgstatus() == G._Gdead || gp.readgstatus() == G._Gsyscall) {
                break; // a dead G has no frames; a G in a syscall runs on its M: below
            }
            Thread.onSpinWait(); // changing state: look again
        }
        M m = gp.m;
        return m == null ? new StackTraceElement[0] : goFrames(m.thread.getStackTrace(), m == M.current());
    }

    /** Frames above the continuation's entry (the goroutine's), minus the dump's own frames. */
    static StackTraceElement[] goFrames(StackTraceElement[] st, boolean self) {
        java.util.List<StackTraceElement> out = new java.util.ArrayList<>();
        for (StackTraceElement e : st) {
            String cn = e.getClassName();
            if (cn.equals("jdk.internal.vm.Continuation")
                    && (e.getMethodName().startsWith("enter")
                            || e.getMethodName().equals("run"))) {
                break; // below this: the carrier's scheduling loop
            }
            if (self && (cn.equals("java.lang.Thread") || cn.equals("dev.gort.runtime.Traceback"))) {
                continue;
            }
            out.add(e);
        }
        return out.toArray(new StackTraceElement[0]);
    }

    /**
     * Every goroutine as JSON, shaped like JDK 25's {@code jcmd <pid> Thread.dump_to_file -format=json}:
     * {@code {"goroutineDump":{"processId":..,"time":..,"runtime":..,"goroutines":[{"goid":7,
     * "state":"waiting","waitReason":"chan receive","waitingOn":{"object":"chan#3 ..."},
     * "waitSinceNanos":..,"m":null,"p":null,"createdBy":{"goid":1,"frame":".."},"stack":[..]}]}}}.
     */
    public static String dumpJson(Scheduler s) {
        long now = System.nanoTime();
        StringBuilder sb = new StringBuilder(4096);
        sb.append("{\"goroutineDump\":{\"processId\":")
                .append(ProcessHandle.current().pid())
                .append(",\"time\":")
                .append(jstr(java.time.Instant.now().toString()))
                .append(",\"runtime\":")
                .append(jstr(s.config().name()))
                .append(",\"goroutines\":[");
        boolean first = true;
        for (G gp : s.allgs()) {
            int st = gp.readgstatus();
            StackTraceElement[] frames = frames(gp);
            M m = gp.m;
            P p = m == null ? null : m.p;
            sb.append(first ? "\n" : ",\n")
                    .append("{\"goid\":")
                    .append(gp.goid)
                    .append(",\"state\":")
                    .append(jstr(G.gstatusName(st)));
            if (st == G._Gwaiting) {
                sb.append(",\"waitReason\":").append(jstr(gp.waitReason().go()));
                Object on = gp.waitingOn;
                if (on != null) {
                    sb.append(",\"waitingOn\":{\"object\":")
                            .append(jstr(
                                    on instanceof Describable d
                                            ? safeDescribe(d)
                                            : on.getClass().getName()))
                            .append('}');
                }
                if (gp.waitsince != 0) {
                    sb.append(",\"waitSinceNanos\":").append(now - gp.waitsince);
                }
            }
            sb.append(",\"m\":")
                    .append(m == null ? "null" : Long.toString(m.id))
                    .append(",\"p\":")
                    .append(p == null ? "null" : Integer.toString(p.id));
            StackTraceElement createdAt = gp.createdAt();
            if (gp.parentGoid != 0 || createdAt != null) {
                sb.append(",\"createdBy\":{\"goid\":").append(gp.parentGoid);
                if (createdAt != null) {
                    sb.append(",\"frame\":").append(jstr(createdAt.toString()));
                }
                sb.append('}');
            }
            sb.append(",\"stack\":[");
            for (int i = 0; i < frames.length; i++) {
                sb.append(i == 0 ? "" : ",").append(jstr(frames[i].toString()));
            }
            sb.append("]}");
            first = false;
        }
        return sb.append("\n]}}\n").toString();
    }

    private static String jstr(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    /** Prints every goroutine of {@code s} (Go: runtime.Stack(buf, true) / SIGQUIT's dump). */
    static void dumpAll(Scheduler s, java.io.PrintStream out) {
        String d = dumpAll(s);
        synchronized (out) {
            out.print(d);
            out.flush();
        }
    }

    /**
     * Every goroutine of {@code s}, as Go's all-goroutines dump ({@code runtime.Stack(buf, true)}):
     * the calling goroutine first when it is one of them, then the others in goid order (Go's
     * tracebackothers walks allgs), separated by blank lines; the text ends with the last
     * goroutine's last line, as Go's (no blank line after it).
     *
     * <p>Go: mprof.go Stack, traceback.go tracebackothers
     */
    public static String dumpAll(Scheduler s) {
        return dumpAll(s, level(), Scheduler.getg());
    }

    /**
     * {@link #dumpAll(Scheduler)} at {@code level} (a runtime throw dumps at 2, as Go's), with
     * {@code first} (when it is one of {@code s}'s live goroutines) before the others, as Go prints
     * the goroutine that called Stack or that failed before tracebackothers; null: goid order.
     */
    static String dumpAll(Scheduler s, int level, G first) {
        long now = System.nanoTime();
        java.util.List<G> gs = s.allgs();
        StringBuilder sb = new StringBuilder();
        if (first != null && gs.contains(first)) {
            sb.append(dump(first, now, level));
        }
        for (G gp : gs) {
            if (gp == first) {
                continue;
            }
            if (!sb.isEmpty()) {
                sb.append('\n');
            }
            sb.append(dump(gp, now, level));
        }
        return sb.toString();
    }

    /**
     * {@code GOTRACEBACK=crash}'s extra: the JVM's threads, each as {@code jstack} prints its name
     * line and {@code at} frames (Go dumps the crashing threads' registers and aborts; the JVM's
     * threads are the carriers that hold what a Go core dump would show).
     */
    static String jvmThreads() {
        StringBuilder sb = new StringBuilder("JVM threads:\n");
        java.util.Map<Thread, StackTraceElement[]> all = Thread.getAllStackTraces();
        java.util.List<Thread> ts = new java.util.ArrayList<>(all.keySet());
        ts.sort(java.util.Comparator.comparingLong(Thread::threadId));
        for (Thread t : ts) {
            sb.append('"')
                    .append(t.getName())
                    .append("\" #")
                    .append(t.threadId())
                    .append(t.isDaemon() ? " daemon" : "")
                    .append(" prio=")
                    .append(t.getPriority())
                    .append('\n')
                    .append("   java.lang.Thread.State: ")
                    .append(t.getState())
                    .append('\n');
            for (StackTraceElement e : all.get(t)) {
                sb.append("\tat ").append(e).append('\n');
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /**
     * gort beyond Go: the wait-for graph of the parked goroutines. One line per goroutine waiting on
     * a {@link Describable} ({@code G6 [sync.Mutex.Lock] waits on sync.Mutex@1b6d3586 (locked;
     * waiters: G6) held by G7}), then the chains that follow holders ({@link WaitTarget}:
     * {@code G6 -> sync.Mutex@1b6d3586 -> G7 -> chan#4}), marking cycles. Lines start with "G", never
     * with "goroutine ", so dump parsers that count goroutine headers are not confused. Empty when
     * no goroutine waits on a Describable.
     */
    public static String waitForGraph(Scheduler s) {
        StringBuilder sb = new StringBuilder();
        java.util.Map<G, Describable> waits = new java.util.LinkedHashMap<>();
        for (G gp : s.allgs()) {
            if (gp.readgstatus() == G._Gwaiting && gp.waitingOn instanceof Describable d) {
                waits.put(gp, d);
            }
        }
        if (waits.isEmpty()) {
            return "";
        }
        sb.append("\nwait-for graph:\n");
        for (java.util.Map.Entry<G, Describable> e : waits.entrySet()) {
            G gp = e.getKey();
            G holder = holder(e.getValue(), gp);
            sb.append("  G")
                    .append(gp.goid)
                    .append(" [")
                    .append(gp.waitReason().go())
                    .append("] waits on ")
                    .append(safeDescribe(e.getValue()));
            if (holder != null) {
                sb.append(" held by G").append(holder.goid);
            }
            sb.append('\n');
        }
        // Chains: follow "waits on X held by H" links; a repeated goroutine closes a cycle.
        for (java.util.Map.Entry<G, Describable> e : waits.entrySet()) {
            if (holder(e.getValue(), e.getKey()) == null) {
                continue;
            }
            StringBuilder chain = new StringBuilder("G").append(e.getKey().goid);
            java.util.Set<G> seen = new java.util.HashSet<>();
            seen.add(e.getKey());
            G cur = e.getKey();
            String end = "";
            for (int hops = 0; hops < 64; hops++) {
                Describable d = waits.get(cur);
                if (d == null) {
                    end = " ["
                            + (cur.readgstatus() == G._Gwaiting
                                    ? cur.waitReason().go()
                                    : G.gstatusName(cur.readgstatus()))
                            + "]";
                    break;
                }
                chain.append(" -> ").append(shortName(d));
                G h = holder(d, cur);
                if (h == null) {
                    break;
                }
                chain.append(" -> G").append(h.goid);
                if (!seen.add(h)) {
                    end = " (cycle)";
                    break;
                }
                cur = h;
            }
            sb.append("  chain: ").append(chain).append(end).append('\n');
        }
        return sb.toString();
    }

    /** Who could release {@code waiter} from {@code d} ({@link WaitTarget#waitTargetHolder(G)}), or null. */
    private static G holder(Describable d, G waiter) {
        try {
            return d instanceof WaitTarget t ? t.waitTargetHolder(waiter) : null;
        } catch (RuntimeException ex) {
            return null;
        }
    }

    private static String safeDescribe(Describable d) {
        try {
            return d.describe();
        } catch (RuntimeException ex) {
            return d.getClass().getSimpleName() + " (state unavailable: " + ex + ")";
        }
    }

    private static String shortName(Describable d) {
        String s = safeDescribe(d);
        int sp = s.indexOf(' ');
        return sp > 0 ? s.substring(0, sp) : s;
    }
}
