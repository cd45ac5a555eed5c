package dev.gort.runtime;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;

/**
 * Goroutine dumps on a signal, as Go dumps on SIGQUIT. The JVM owns SIGQUIT (its thread dump), so
 * gort uses a signal the JVM leaves free, opt-in through GODEBUG:
 * <ul>
 *   <li>{@code GODEBUG=sigtrap=1} (or {@code -Dgort.debug=sigtrap=1}): {@code kill -TRAP <pid>}
 *       (SIGTRAP, 5; handled on JDK 25 on Linux x86-64, where HotSpot does not use it);
 *   <li>{@code GODEBUG=sigdump=URG} (or {@code WINCH}, or any name {@code sun.misc.Signal} accepts):
 *       that signal instead. SIGURG and SIGWINCH are ignored by default and unused by HotSpot.
 * </ul>
 * Not USR1/USR2 (HotSpot documents USR2 as its suspend/resume signal on Linux). The handler prints
 * every live runtime's goroutines to stderr in Go's format ({@link Traceback#dumpAll}), then the
 * wait-for graph. The first runtime created with the setting installs the handler; it dumps all
 * runtimes of the JVM that are still reachable.
 */
public final class DumpSignal {
    private DumpSignal() {}

    private static final List<WeakReference<Scheduler>> RUNTIMES = new ArrayList<>();
    private static String installed;

    /** The signal configured by GODEBUG, or null. */
    static String configured(GoDebug dbg) {
        String sig = null;
        if (dbg.get("sigtrap", 0) > 0) {
            sig = "TRAP";
        }
        String named = dbg.getString("sigdump");
        if (named != null && !named.isEmpty() && !named.equals("0")) {
            sig = named.startsWith("SIG") ? named.substring(3) : named;
        }
        return sig;
    }

    /** Registers a runtime; installs the handler if GODEBUG asks for one. Returns the signal, or null. */
    public static synchronized String register(Scheduler s) {
        RUNTIMES.removeIf(r -> r.get() == null);
        String sig = configured(s.config().settings().godebug());
        if (sig == null) {
            return null;
        }
        RUNTIMES.add(new WeakReference<>(s));
        if (installed == null) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(sig), x -> dumpAllRuntimes());
                installed = sig;
            } catch (IllegalArgumentException e) {
                System.err.println("gort: cannot handle SIG" + sig + " for goroutine dumps: " + e.getMessage());
                return null;
            }
        }
        return installed;
    }

    /** What the handler does: every registered runtime's goroutines to stderr. */
    static void dumpAllRuntimes() {
        List<Scheduler> live = new ArrayList<>();
        synchronized (DumpSignal.class) {
            for (WeakReference<Scheduler> r : RUNTIMES) {
                Scheduler s = r.get();
                if (s != null && !s.exiting()) {
                    live.add(s);
                }
            }
        }
        if (Traceback.level() == 0) {
            return; // GOTRACEBACK=none: Go's signal handler prints no goroutines either
        }
        boolean first = true;
        for (Scheduler s : live) {
            StringBuilder sb = new StringBuilder();
            if (!first) {
                sb.append('\n'); // a blank line between two runtimes' dumps, as between goroutines
            }
            first = false;
            sb.append(Traceback.dumpAll(s)).append(Traceback.waitForGraph(s));
            synchronized (System.err) {
                System.err.print(sb);
                System.err.flush();
            }
        }
    }
}
