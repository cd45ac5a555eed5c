package dev.gort.examples.showcase;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The showcase's command line. Every option has a scenario-specific default when left out
 * ({@code null} / {@code -1} here); {@link #USAGE} documents them.
 */
final class Options {
    static final String USAGE = """
            usage: ./gort showcase [scenario...] [options]

            Runs Go's scheduler scenarios (those of the Go scheduler simulator) on gort, for real:
            each prints what it shows, the GODEBUG=schedtrace lines of the run, the figures that
            prove the point, and writes a self-contained HTML timeline of the run.

            scenarios (default: all five, each with its toggles):
              fan-out       48 goroutines x 1 ms of CPU started by one goroutine on P0; idle Ps
                            steal half of P0's queue at a time. Runs with stealing on, then off.
              syscalls      goroutines blocked in system calls keep their threads; sysmon hands
                            their Ps to new threads, so the thread count climbs past GOMAXPROCS.
                            Runs with the calls wrapped in Syscall.block, then unwrapped.
              tight-loop    a 40 ms loop without calls and 3 short goroutines on one P: preempted
                            after 10 ms with back-edge polls; with preemption off they wait for
                            the whole loop. Runs with --preempt backedge, then none.
              ping-pong     two goroutines hand control to each other through runnext on one P,
                            sharing one 10 ms time slice, and are preempted together; a third
                            goroutine runs only then. Runs with --preempt backedge, then none.
              network       an echo server with a goroutine per connection serves 1,000 loopback
                            connections: on dev.gort.net they park on the network poller and the
                            thread count stays near GOMAXPROCS; on blocking sockets wrapped in
                            Syscall.block it climbs to one per connection. Runs both.

            options (a toggle given on the command line runs only that variant; the flags without
            a value, --scheddetail, --no-html and --events, also take =true or =false):
              --gomaxprocs N     number of Ps (default: fan-out 4, syscalls 2, tight-loop 1, ping-pong 1,
                                 network 2)
              --stealing on|off  work stealing between Ps (default: fan-out runs both; others on)
              --spinning on|off  spinning Ms looking for work (default on)
              --preempt S        none | entry | backedge | budget: where the agent puts yield points
                                 (default: tight-loop and ping-pong run backedge, then none; others
                                 backedge). A strategy other than this JVM's runs in a child JVM
                                 started with -Dgort.preempt=S.
              --goroutines N     fan-out: goroutines to start (default 48)
              --work-ms N        fan-out: CPU milliseconds per goroutine (default 1)
              --syscall M        syscalls: wrapped (Syscall.block around the call: entersyscall, then
                                 sysmon retakes the P) or unwrapped (a Thread.sleep the agent does
                                 not see: sysmon sees the blocked carrier and hands its P off);
                                 default: both
              --syscalls N       syscalls: goroutines blocked in a system call (default 6)
              --syscall-ms N     syscalls: how long each call blocks (default 30)
              --loop-ms N        tight-loop: length of the loop (default 40)
              --pair-ms N        ping-pong: how long the pair plays (default 30)
              --hop-us N         ping-pong: CPU microseconds per hop (default 50)
              --server M         network: poller (dev.gort.net) or blocking (java.net sockets, each
                                 blocking call in Syscall.block); default: both
              --conns N          network: connections open at once (default 1000)
              --rounds N         network: messages each client sends and reads back (default 5)
              --schedtrace N     print the SCHED line every N ms (default: GODEBUG's schedtrace, else 2 to 10 by scenario)
              --scheddetail      also print the P, M and G lines (GODEBUG scheddetail=1)
              --out DIR          where the HTML timelines go (default: showcase/ beside the jar)
              --no-html          write no timeline
              --events           print every event of the execution trace (long)
              --help             this text

            examples:
              ./gort showcase
              ./gort showcase fan-out --stealing off --gomaxprocs 8
              ./gort showcase tight-loop --preempt none
              ./gort showcase ping-pong --schedtrace 5 --scheddetail
              ./gort showcase network --server blocking --conns 200 --rounds 20
            """;

    final List<String> scenarios = new ArrayList<>();
    int gomaxprocs = -1;
    Boolean stealing;
    Boolean spinning;
    String preempt;
    int goroutines = 48;
    int workMs = 1;
    String syscall;
    int syscalls = 6;
    int syscallMs = 30;
    int loopMs = 40;
    int pairMs = 30;
    int hopUs = 50;
    String server;
    int conns = 1000;
    int rounds = 5;
    int schedtrace = -1;
    boolean scheddetail;
    /** Whether {@code --scheddetail} was given (true or false): then GODEBUG's scheddetail is not read. */
    boolean scheddetailGiven;

    Path out;
    boolean html = true;
    boolean events;
    boolean help;
    /** Internal: this JVM was started by a parent showcase for one variant (no banner, no summary). */
    boolean child;

    static final List<String> SCENARIOS = List.of("fan-out", "syscalls", "tight-loop", "ping-pong", "network");
    static final List<String> STRATEGIES = List.of("none", "entry", "backedge", "budget");

    static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String val = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                val = a.substring(eq + 1);
                a = a.substring(0, eq);
            }
            switch (a) {
                case "-h", "--help", "help" -> o.help = flag(a, val);
                case "--gomaxprocs" -> o.gomaxprocs = positive(a, val != null ? val : next(args, ++i, a));
                case "--stealing" -> o.stealing = onOff(a, val != null ? val : next(args, ++i, a));
                case "--spinning" -> o.spinning = onOff(a, val != null ? val : next(args, ++i, a));
                case "--preempt" -> {
                    String s = (val != null ? val : next(args, ++i, a)).toLowerCase(Locale.ROOT);
                    if (!STRATEGIES.contains(s)) {
                        throw new IllegalArgumentException(
                                "--preempt: want none, entry, backedge or budget, not '" + s + "'");
                    }
                    o.preempt = s;
                }
                case "--goroutines" -> o.goroutines = positive(a, val != null ? val : next(args, ++i, a));
                case "--work-ms" -> o.workMs = positive(a, val != null ? val : next(args, ++i, a));
                case "--syscall" -> {
                    String m = (val != null ? val : next(args, ++i, a)).toLowerCase(Locale.ROOT);
                    if (!m.equals("wrapped") && !m.equals("unwrapped")) {
                        throw new IllegalArgumentException("--syscall: want wrapped or unwrapped, not '" + m + "'");
                    }
                    o.syscall = m;
                }
                case "--syscalls" -> o.syscalls = positive(a, val != null ? val : next(args, ++i, a));
                case "--syscall-ms" -> o.syscallMs = positive(a, val != null ? val : next(args, ++i, a));
                case "--loop-ms" -> o.loopMs = positive(a, val != null ? val : next(args, ++i, a));
                case "--pair-ms" -> o.pairMs = positive(a, val != null ? val : next(args, ++i, a));
                case "--hop-us" -> o.hopUs = positive(a, val != null ? val : next(args, ++i, a));
                case "--server" -> {
                    String m = (val != null ? val : next(args, ++i, a)).toLowerCase(Locale.ROOT);
                    if (!m.equals("poller") && !m.equals("blocking")) {
                        throw new IllegalArgumentException("--server: want poller or blocking, not '" + m + "'");
                    }
                    o.server = m;
                }
                case "--conns" -> o.conns = positive(a, val != null ? val : next(args, ++i, a));
                case "--rounds" -> o.rounds = positive(a, val != null ? val : next(args, ++i, a));
                case "--schedtrace" -> o.schedtrace = positive(a, val != null ? val : next(args, ++i, a));
                case "--scheddetail" -> {
                    o.scheddetail = flag(a, val);
                    o.scheddetailGiven = true;
                }
                case "--out" -> o.out = Path.of(val != null ? val : next(args, ++i, a));
                case "--no-html" -> o.html = !flag(a, val);
                case "--events" -> o.events = flag(a, val);
                case "--child" -> o.child = flag(a, val);
                default -> {
                    if (a.startsWith("-")) {
                        throw new IllegalArgumentException("unknown option " + a);
                    }
                    String s = scenario(a);
                    if (s == null) {
                        throw new IllegalArgumentException(
                                "unknown scenario '" + a + "' (want one of " + SCENARIOS + ")");
                    }
                    if (!o.scenarios.contains(s)) {
                        o.scenarios.add(s);
                    }
                }
            }
        }
        if (o.scenarios.isEmpty()) {
            o.scenarios.addAll(SCENARIOS);
        }
        o.applyGoDebug(dev.gort.runtime.GoDebug.fromEnvironment());
        return o;
    }

    /**
     * GODEBUG's {@code schedtrace=N} (the SCHED period, ms) and {@code scheddetail=1}, as a Go
     * program honours them, where {@code --schedtrace} / {@code --scheddetail} were not given (the
     * flags win). Without either, each scenario uses its own period.
     */
    void applyGoDebug(dev.gort.runtime.GoDebug d) {
        if (schedtrace <= 0 && d.schedtrace() > 0) {
            schedtrace = d.schedtrace();
        }
        if (!scheddetailGiven && d.scheddetail()) {
            scheddetail = true;
        }
    }

    /** The scenario a name means (dashes and case ignored, a few aliases), or null. */
    static String scenario(String name) {
        String k = name.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
        return switch (k) {
            case "fanout", "1" -> "fan-out";
            case "syscalls", "syscall", "blockingsyscalls", "2" -> "syscalls";
            case "tightloop", "loop", "3" -> "tight-loop";
            case "pingpong", "4" -> "ping-pong";
            case "network", "net", "5" -> "network";
            default -> null;
        };
    }

    /** The arguments that reproduce these options for one scenario in a child JVM. */
    List<String> childArgs(String scenario, String strategy) {
        List<String> a = new ArrayList<>();
        a.add(scenario);
        a.add("--child");
        if (gomaxprocs > 0) {
            a.add("--gomaxprocs=" + gomaxprocs);
        }
        if (stealing != null) {
            a.add("--stealing=" + (stealing ? "on" : "off"));
        }
        if (spinning != null) {
            a.add("--spinning=" + (spinning ? "on" : "off"));
        }
        a.add("--preempt=" + strategy);
        a.add("--goroutines=" + goroutines);
        a.add("--work-ms=" + workMs);
        if (syscall != null) {
            a.add("--syscall=" + syscall);
        }
        a.add("--syscalls=" + syscalls);
        a.add("--syscall-ms=" + syscallMs);
        a.add("--loop-ms=" + loopMs);
        a.add("--pair-ms=" + pairMs);
        a.add("--hop-us=" + hopUs);
        if (server != null) {
            a.add("--server=" + server);
        }
        a.add("--conns=" + conns);
        a.add("--rounds=" + rounds);
        if (schedtrace > 0) {
            a.add("--schedtrace=" + schedtrace);
        }
        if (scheddetail) {
            a.add("--scheddetail");
        }
        if (out != null) {
            a.add("--out=" + out.toAbsolutePath());
        }
        if (!html) {
            a.add("--no-html");
        }
        if (events) {
            a.add("--events");
        }
        return a;
    }

    private static String next(String[] args, int i, String opt) {
        if (i >= args.length) {
            throw new IllegalArgumentException(opt + " needs a value");
        }
        return args[i];
    }

    private static int positive(String opt, String v) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n < 1) {
                throw new IllegalArgumentException(opt + " must be at least 1: " + v);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + " wants a number, not '" + v + "'");
        }
    }

    /**
     * A flag's value: given alone ({@code --no-html}) it is on; {@code --no-html=false} (or off, 0,
     * no) turns it off and {@code =true} (on, 1, yes) on; anything else is a usage error.
     */
    private static boolean flag(String opt, String v) {
        if (v == null) {
            return true;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "on", "1", "yes" -> true;
            case "false", "off", "0", "no" -> false;
            default -> throw new IllegalArgumentException(opt + " takes no value, or =true or =false, not '" + v + "'");
        };
    }

    private static boolean onOff(String opt, String v) {
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "on", "true", "1", "yes" -> true;
            case "off", "false", "0", "no" -> false;
            default -> throw new IllegalArgumentException(opt + " wants on or off, not '" + v + "'");
        };
    }
}
