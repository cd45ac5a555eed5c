package dev.gort.runtime;

/**
 * Goroutine dumps in Go's format:
 * <pre>
 * goroutine 7 [chan receive, 3 minutes]:
 * dev.gort.examples.Sieve.filter(...)
 * 	Sieve.java:42
 * created by dev.gort.examples.Sieve.main in goroutine 1
 * </pre>
 *
 * <p>Go: traceback.go goroutineheader, traceback, printcreatedby
 */
public final class Traceback {
    private Traceback() {}

    private static final java.util.Set<String> RUNTIME_FRAMES = java.util.Set.of(
            "dev.gort.runtime.Scheduler", "dev.gort.runtime.Traceback", "dev.gort.Go", "dev.gort.Runtimes");

    /**
     * The frame that called {@code go}: the first frame outside the runtime's spawning code. Costs a
     * stack walk (~1-2 us), so newproc takes it only while tracing (Go keeps the creator's PC always).
     *
     * <p>Go: proc.go newproc1 (newg.gopc = callerpc)
     */
    public static StackTraceElement callerFrame() {
        return StackWalker.getInstance()
                .walk(s -> s.filter(f -> !RUNTIME_FRAMES.contains(f.getClassName()))
                        .findFirst()
                        .map(StackWalker.StackFrame::toStackTraceElement)
                        .orElse(null));
    }

    /** Go: traceback.go goroutineheader. */
    public static String header(G gp, long now) {
        int st = gp.readgstatus();
        String status;
        WaitReason wr = gp.waitreason;
        if ((st == G._Gwaiting) && wr != WaitReason.ZERO) {
            status = wr.go();
        } else {
            status = switch (st) {
                case G._Grunnable -> "runnable";
                case G._Grunning -> "running";
                case G._Gsyscall -> "syscall";
                case G._Gwaiting -> "waiting";
                case G._Gdead -> "dead";
                case G._Gpreempted -> "preempted";
                default -> "idle";
            };
        }
        StringBuilder sb =
                new StringBuilder("goroutine ").append(gp.goid).append(" [").append(status);
        if (st == G._Gwaiting && gp.waitsince != 0) {
            long mins = (now - gp.waitsince) / 60_000_000_000L;
            if (mins >= 1) {
                sb.append(", ").append(mins).append(" minutes"); // Go prints "1 minutes" too
            }
        }
        if (gp.lockedm != null) {
            sb.append(", locked to thread");
        }
        return sb.append("]:").toString();
    }

    static void frame(StringBuilder sb, StackTraceElement e) {
        sb.append(e.getClassName()).append('.').append(e.getMethodName()).append("(...)\n");
        sb.append('\t').append(e.getFileName() == null ? "?" : e.getFileName());
        if (e.getLineNumber() >= 0) {
            sb.append(':').append(e.getLineNumber());
        }
        sb.append('\n');
    }

    /** Go: traceback.go printcreatedby. */
    static String createdBy(G gp) {
        if (gp.parentGoid == 0 && gp.goid == 1) {
            return null; // main
        }
        String fn;
        if (gp.createdAt != null) {
            fn = gp.createdAt.getClassName() + "." + gp.createdAt.getMethodName() + "\n\t" + gp.createdAt.getFileName()
                    + ":" + gp.createdAt.getLineNumber();
        } else {
            // A lambda's class is named after its enclosing class: Foo$$Lambda/0x... -> Foo.
            String cn = gp.cont.fn.getClass().getName();
            int i = cn.indexOf("$$Lambda");
            fn = (i > 0 ? cn.substring(0, i) : cn) + " (go statement)";
        }
        return "created by " + fn + (gp.parentGoid == 0 ? "" : " in goroutine " + gp.parentGoid) + "\n";
    }

    /**
     * One goroutine: header, frames (of its parked continuation, or above the continuation entry on
     * its carrier's stack while it runs), {@code created by}, and what it waits on.
     *
     * <p>A parked continuation's frames are read under the G's scan bit ({@link G#castogscanstatus},
     * Go's _Gscan), so no M can mount it while {@code getStackTrace} walks it: an M that wants to run
     * it (or a waker that wants to ready it) spins in casgstatus for those few microseconds.
     */
    public static String dump(G gp, long now) {
        String header = header(gp, now);
        StackTraceElement[] st = frames(gp);
        StringBuilder sb = new StringBuilder(header).append('\n');
        for (StackTraceElement e : st) {
            frame(sb, e);
        }
        String cb = createdBy(gp);
        if (cb != null) {
            sb.append(cb);
        }
        Object on = gp.waitingOn;
        if (on != null && gp.readgstatus() == G._Gwaiting) {
            sb.append("waiting on ")
                    .append(
                            on instanceof Describable d
                                    ? safeDescribe(d)
                                    : on.getClass().getName())
                    .append('\n');
        }
        return sb.toString();
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
    private static StackTraceElement[] goFrames(StackTraceElement[] st, boolean self) {
        java.util.List<StackTraceElement> out = new java.util.ArrayList<>();
        for (StackTraceElement e : st) {
            String cn = e.getClassName();
            if (cn.equals("jdk.internal.vm.Continuation")
                    && (e.getMethodName().startsWith("enter")
                            || e.getMethodName().equals("run"))) {
                break; // below this: the carrier's scheduling loop
            }
            if (cn.startsWith("jdk.internal.vm.Continuation")
                    || cn.equals("dev.gort.runtime.G")
                    || (self && (cn.equals("java.lang.Thread") || cn.equals("dev.gort.runtime.Traceback")))) {
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
                sb.append(",\"waitReason\":").append(jstr(gp.waitreason.go()));
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
            if (gp.parentGoid != 0 || gp.createdAt != null) {
                sb.append(",\"createdBy\":{\"goid\":").append(gp.parentGoid);
                if (gp.createdAt != null) {
                    sb.append(",\"frame\":").append(jstr(gp.createdAt.toString()));
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
    public static void dumpAll(Scheduler s, java.io.PrintStream out) {
        String d = dumpAll(s);
        synchronized (out) {
            out.print(d);
            out.flush();
        }
    }

    /** Every goroutine, in goid order, separated by blank lines (Go's all-goroutines dump). */
    public static String dumpAll(Scheduler s) {
        long now = System.nanoTime();
        StringBuilder sb = new StringBuilder();
        for (G gp : s.allgs()) {
            sb.append(dump(gp, now)).append('\n');
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
                    .append(gp.waitreason.go())
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
                                    ? cur.waitreason.go()
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
