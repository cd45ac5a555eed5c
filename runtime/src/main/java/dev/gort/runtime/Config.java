package dev.gort.runtime;

/**
 * How a runtime is set up. Defaults follow Go; each can be set from the environment or a system
 * property (property wins), as {@link #fromEnvironment()} documents.
 *
 * @param gomaxprocs        number of Ps ({@code GOMAXPROCS} / {@code -Dgort.gomaxprocs}); default: available processors
 * @param runqSize          slots in each P's ring (power of two; 256 in Go)
 * @param stealing          work stealing between Ps ({@code -Dgort.stealing}); off = the simulator's toggle
 * @param spinning          spinning Ms ({@code -Dgort.spinning}); off = no M spins looking for work: an M
 *                          with nothing to do drops its P at once, and wakep starts an M per idle P
 * @param maxThreads        Go's debug.SetMaxThreads default 10000 ({@code -Dgort.maxthreads})
 * @param carrierSpacers    parked threads started right after each carrier thread, so that no two
 *                          carriers' JVM thread handles share a cache line ({@code -Dgort.carrier.spacers},
 *                          0 to 8; default 2): {@link CarrierSpacers}
 * @param panicExits        a goroutine panic or fatal error halts the JVM with status 2 (Go); when false
 *                          (and always under {@code -Dgort.fatal=throw}) it surfaces from {@code run}
 * @param debugChecks       O(n) invariant checks ({@code -Dgort.debug.checks})
 * @param name              prefix of the carrier threads' names
 * @param settings          everything else a runtime reads (preemption, sysmon, tracing, observers,
 *                          fatal mode): {@link Settings}
 * @param maxprocs          where the default GOMAXPROCS comes from and whether sysmon follows it
 *                          (Go 1.25's container-aware, periodically updated GOMAXPROCS)
 */
public record Config(
        int gomaxprocs,
        int runqSize,
        boolean stealing,
        boolean spinning,
        int maxThreads,
        int carrierSpacers,
        boolean panicExits,
        boolean debugChecks,
        String name,
        Settings settings,
        MaxProcs maxprocs) {

    public Config {
        java.util.Objects.requireNonNull(settings, "settings");
        java.util.Objects.requireNonNull(maxprocs, "maxprocs");
        if (gomaxprocs < 1) {
            throw new IllegalArgumentException("GOMAXPROCS must be >= 1: " + gomaxprocs);
        }
        if (carrierSpacers < 0 || carrierSpacers > CarrierSpacers.MAX) {
            throw new IllegalArgumentException(
                    "carrierSpacers must be from 0 to " + CarrierSpacers.MAX + ": " + carrierSpacers);
        }
        if (runqSize < 2 || Integer.bitCount(runqSize) != 1) {
            throw new IllegalArgumentException("runqSize must be a power of two >= 2: " + runqSize);
        }
    }

    /**
     * The logical CPUs this process may use and the CPU limit the JVM sees: the inputs of Go 1.25's
     * default GOMAXPROCS. Injectable for tests ({@link Config#withCpuSource}).
     */
    public interface CpuSource {
        /** Logical CPUs the process may run on. Go: getCPUCount (sched_getaffinity). */
        int cpuCount();

        /**
         * What the JVM reports, {@link Runtime#availableProcessors()}: on Linux with container
         * support (JDK 25's default) the affinity count lowered to {@code ceil(quota / period)} of
         * the process's cgroup (v1 or v2) when that is lower, or {@code -XX:ActiveProcessorCount}.
         */
        int jvmProcessors();

        /**
         * The running system: {@code Cpus_allowed_list} of {@code /proc/self/status} for the
         * affinity (the JVM's own number where that cannot be read), the JVM's number for the
         * limit. Re-read on every call (sysmon calls it once a second).
         */
        CpuSource SYSTEM = new CpuSource() {
            @Override
            public int cpuCount() {
                int n = affinityCount();
                return n > 0 ? n : Runtime.getRuntime().availableProcessors();
            }

            @Override
            public int jvmProcessors() {
                return Runtime.getRuntime().availableProcessors();
            }

            @Override
            public String toString() {
                return "system";
            }
        };
    }

    /**
     * The number of CPUs in {@code Cpus_allowed_list} ("0-3,8,10-11") of /proc/self/status, or 0
     * when it cannot be read (not Linux).
     */
    static int affinityCount() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return countCpuList(
                            line.substring("Cpus_allowed_list:".length()).trim());
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux, or no procfs: the JVM's count
        }
        return 0;
    }

    /** Counts a Linux CPU list ("0-3,8,10-11" is 7); 0 if malformed. */
    static int countCpuList(String list) {
        int n = 0;
        try {
            for (String part : list.split(",")) {
                String p = part.trim();
                if (p.isEmpty()) {
                    continue;
                }
                int dash = p.indexOf('-');
                if (dash < 0) {
                    Integer.parseInt(p);
                    n++;
                } else {
                    int lo = Integer.parseInt(p.substring(0, dash));
                    int hi = Integer.parseInt(p.substring(dash + 1));
                    if (hi < lo) {
                        return 0;
                    }
                    n += hi - lo + 1;
                }
            }
        } catch (NumberFormatException e) {
            return 0;
        }
        return n;
    }

    /**
     * How GOMAXPROCS follows the machine (Go 1.25):
     *
     * @param custom    GOMAXPROCS was set explicitly ({@code GOMAXPROCS}, {@code -Dgort.gomaxprocs},
     *                  {@link #withGomaxprocs}): no updates (Go: sched.customGOMAXPROCS)
     * @param update    sysmon re-checks the default once a second and applies a change
     *                  ({@code GODEBUG=updatemaxprocs=0} turns it off)
     * @param container the default honours the CPU limit the JVM sees (the cgroup quota);
     *                  {@code GODEBUG=containermaxprocs=0}: the CPU count alone
     * @param cpus      where the numbers come from
     */
    public record MaxProcs(boolean custom, boolean update, boolean container, CpuSource cpus) {
        /** An explicit GOMAXPROCS. */
        public static final MaxProcs CUSTOM = new MaxProcs(true, true, true, CpuSource.SYSTEM);

        public MaxProcs {
            if (cpus == null) {
                throw new IllegalArgumentException("cpus must not be null");
            }
        }

        /**
         * The default GOMAXPROCS: the CPU count, lowered to the CPU limit the JVM sees when that is
         * lower, but not below 2 for a limit (Go rounds a fractional limit up, as the JVM does,
         * and raises a limit under 2 to 2); never above the CPU count.
         *
         * <p>Go: cgroup_linux.go defaultGOMAXPROCS, adjustCgroupGOMAXPROCS
         */
        public int defaultGOMAXPROCS() {
            int procs = Math.max(1, cpus.cpuCount());
            if (!container) {
                return procs; // disabled by debug.containermaxprocs
            }
            int limit = cpus.jvmProcessors();
            if (limit > 0 && limit < procs) {
                procs = Math.min(procs, Math.max(limit, 2));
            }
            return procs;
        }
    }

    /** Most slots a P's ring may have: {@code -Dgort.runqsize} beyond this is malformed (Go: 256). */
    static final int MAX_RUNQ_SIZE = 1 << 16;

    /**
     * Go's defaults, read from the environment and system properties. A malformed GOMAXPROCS is
     * ignored, as Go ignores it; any other malformed or out-of-range setting is a fatal error at
     * start-up that names it ({@code fatal error: malformed -Dgort.runqsize=3: ...}), as Go's is for a
     * malformed GOMEMLIMIT: never a silent default.
     */
    public static Config fromEnvironment() {
        Settings st = Settings.fromEnvironment();
        // JVM-wide, chosen by TraceClock: a malformed one fails here, as any setting does, and so does
        // an explicit tsc that cannot be read (its stubs are built now only when it is asked for)
        if ("tsc".equals(traceClockChoice())) {
            dev.gort.runtime.trace.TraceClock.init();
        }
        jitDirectiveSetting(); // JVM-wide (JitDirectives): a malformed one fails here too
        MaxProcs mp = maxprocsSetting(CpuSource.SYSTEM, st.godebug());
        int explicit = explicitGomaxprocs();
        return new Config(
                explicit > 0 ? explicit : mp.defaultGOMAXPROCS(),
                runqSizeSetting(),
                boolSetting("gort.stealing", "GORT_STEALING", true),
                boolSetting("gort.spinning", "GORT_SPINNING", true),
                intSetting("gort.maxthreads", "GORT_MAXTHREADS", 10_000, 1, Integer.MAX_VALUE),
                intSetting(
                        "gort.carrier.spacers", "GORT_CARRIER_SPACERS", CarrierSpacers.DEFAULT, 0, CarrierSpacers.MAX),
                !"throw".equals(fatalSetting()),
                boolSetting("gort.debug.checks", "GORT_DEBUG_CHECKS", false),
                "gort",
                st,
                mp);
    }

    public Config withSettings(Settings s) {
        return new Config(
                gomaxprocs,
                runqSize,
                stealing,
                spinning,
                maxThreads,
                carrierSpacers,
                panicExits,
                debugChecks,
                name,
                s,
                maxprocs);
    }

    /**
     * The settings of one runtime beyond the scheduler's shape, each read once by
     * {@link #fromEnvironment()} (through {@link Settings#fromEnvironment()}) and then only passed
     * in: two runtimes built with different settings in one JVM behave each by its own.
     *
     * <p>JVM-wide on purpose, hence not here: where the agent puts polls ({@code gort.preempt.stride},
     * {@code gort.preempt.callers}, and the strategy's instrumentation: classes are transformed once
     * per JVM; {@link PreemptStrategy}); {@code GOTRACEBACK} ({@link Traceback}: Go's is per process
     * and {@code SetTraceback} changes it for all); {@code -Dgort.jfr} (a JFR recording is the
     * JVM's); the dump signal's handler ({@link DumpSignal}: one per signal per JVM; each runtime
     * still says whether it wants dumps); the fatal mode of a fatal error raised outside any runtime
     * ({@link Fatal#THROW}).
     *
     * @param preempt          the preemption strategy's name ({@code -Dgort.preempt}): a family or a
     *                         strategy the agent registered ({@link PreemptStrategy})
     * @param preemptBudget    polls per slice under the budget strategy ({@code -Dgort.preempt.budget})
     * @param preemptSites     record where preemptions happen ({@code -Dgort.preempt.sites})
     * @param sysmonMaxDelayUs sysmon's longest sleep, µs ({@code -Dgort.sysmon.maxdelay}; Go: 10 ms)
     * @param recordCreators   record the exact frame that called {@code go()} ({@code -Dgort.creators=stack})
     * @param traceFile        trace from the start and write this file at exit ({@code -Dgort.trace}), or null
     * @param traceWindowMs    that trace's flight-recorder window ({@code -Dgort.trace.window}; 0 = all)
     * @param traceLevel       that trace's level ({@code -Dgort.trace.level})
     * @param traceWorkload    the name in that trace's header ({@code -Dgort.trace.workload})
     * @param jmx              register the scheduler MXBean at start ({@code -Dgort.jmx})
     * @param debugHttp        serve /debug/ on this port at start ({@code -Dgort.debug.http}), or null
     * @param godebug          {@code GODEBUG} ({@code schedtrace}, {@code scheddetail}, {@code sigdump}, ...)
     * @param fatalThrow       a fatal error throws {@link GortFatalError} instead of halting ({@code -Dgort.fatal=throw})
     * @param seed             fixes every random choice of the scheduler ({@code -Dgort.seed}, {@code GORT_SEED}):
     *                         each M's generator (steal order, select's poll order) starts from it; 0 = unseeded
     *                         (each M seeded from the clock, as Go's from the OS). See {@link Decisions}.
     * @param threadLocals     {@code "goroutine"}: each goroutine has its own ThreadLocals, swapped into
     *                         its carrier while it runs ({@link GoroutineLocals}); {@code "carrier"}: they
     *                         are the carrier thread's, shared by the goroutines it runs
     *                         ({@code -Dgort.threadlocals}, {@code GORT_THREADLOCALS}; docs/adr/0004)
     * @param netpoll          the network poller: {@code "epoll"}, Linux's edge-triggered epoll through
     *                         the FFM API, or {@code "selector"}, the JDK's level-triggered Selector
     *                         ({@code -Dgort.netpoll}, {@code GORT_NETPOLL}; {@link Netpoll})
     */
    public record Settings(
            String preempt,
            int preemptBudget,
            boolean preemptSites,
            int sysmonMaxDelayUs,
            boolean recordCreators,
            String traceFile,
            long traceWindowMs,
            int traceLevel,
            String traceWorkload,
            boolean jmx,
            String debugHttp,
            GoDebug godebug,
            boolean fatalThrow,
            long seed,
            String threadLocals,
            String netpoll) {

        public Settings {
            java.util.Objects.requireNonNull(preempt, "preempt");
            java.util.Objects.requireNonNull(godebug, "godebug");
            if (PreemptStrategy.familyOf(preempt) == null) {
                throw new IllegalArgumentException("unknown preemption strategy '" + preempt + "'");
            }
            if (preemptBudget < 1) {
                throw new IllegalArgumentException("preemptBudget must be >= 1: " + preemptBudget);
            }
            if (sysmonMaxDelayUs < 20) {
                throw new IllegalArgumentException("sysmonMaxDelayUs must be >= 20: " + sysmonMaxDelayUs);
            }
            traceWorkload = traceWorkload == null ? "" : traceWorkload;
            java.util.Objects.requireNonNull(threadLocals, "threadLocals");
            if (!threadLocals.equals(THREADLOCALS_GOROUTINE) && !threadLocals.equals(THREADLOCALS_CARRIER)) {
                throw new IllegalArgumentException("threadLocals must be goroutine or carrier: '" + threadLocals + "'");
            }
            if (threadLocals.equals(THREADLOCALS_GOROUTINE) && !GoroutineLocals.available()) {
                throw new IllegalArgumentException("goroutine-scoped ThreadLocals need java.lang opened to gort ("
                        + GoroutineLocals.ADD_OPENS + ", or gort's agent): " + GoroutineLocals.unavailableReason());
            }
            java.util.Objects.requireNonNull(netpoll, "netpoll");
            if (!netpoll.equals(NETPOLL_EPOLL) && !netpoll.equals(NETPOLL_SELECTOR)) {
                throw new IllegalArgumentException("netpoll must be epoll or selector: '" + netpoll + "'");
            }
            if (netpoll.equals(NETPOLL_EPOLL) && !Epoll.available()) {
                throw new IllegalArgumentException(
                        "the epoll poller is not available (" + NETPOLL_FLAGS + "): " + Epoll.UNAVAILABLE);
            }
        }

        /**
         * The same settings with the network poller {@code "epoll"} or {@code "selector"}
         * ({@code -Dgort.netpoll}); epoll where it is not available is an IllegalArgumentException.
         */
        public Settings withNetpoll(String poller) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    poller);
        }

        /** Whether each goroutine has its own ThreadLocals ({@code -Dgort.threadlocals=goroutine}). */
        boolean goroutineThreadLocals() {
            return threadLocals.equals(THREADLOCALS_GOROUTINE);
        }

        /**
         * The same settings with ThreadLocals {@code "goroutine"}- or {@code "carrier"}-scoped
         * ({@code -Dgort.threadlocals}); goroutine without the access is an IllegalArgumentException.
         */
        public Settings withThreadLocals(String mode) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    mode,
                    netpoll);
        }

        /** Every setting from the system properties and the environment (the one place they are read). */
        public static Settings fromEnvironment() {
            return new Settings(
                    PreemptStrategy.nameFromEnvironment(),
                    Preempt.budgetFromEnvironment(),
                    boolSetting("gort.preempt.sites", "GORT_PREEMPT_SITES", true),
                    Sysmon.maxDelayFromEnvironment(),
                    "stack".equals(creatorsSetting()),
                    traceFileSetting(),
                    longSetting("gort.trace.window", null, 0, 0, Long.MAX_VALUE),
                    intSetting("gort.trace.level", null, 2, 1, 2),
                    traceWorkloadSetting(),
                    boolSetting("gort.jmx", null, false),
                    debugHttpSetting(),
                    GoDebug.fromEnvironment(),
                    "throw".equals(fatalSetting()),
                    seedSetting(),
                    threadLocalsSetting(),
                    netpollSetting());
        }

        public Settings withPreempt(String strategyName) {
            return new Settings(
                    strategyName,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        public Settings withPreemptBudget(int n) {
            return new Settings(
                    preempt,
                    n,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        public Settings withPreemptSites(boolean on) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    on,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        public Settings withSysmonMaxDelayUs(int us) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    us,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        public Settings withRecordCreators(boolean on) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    on,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        public Settings withTraceFile(String file) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    file,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        public Settings withJmx(boolean on) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    on,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        public Settings withDebugHttp(String port) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    port,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        /**
         * Which syscall model the runtime follows: false (the default) is Go 1.26+'s, where a P whose
         * G is in a syscall stays {@code _Prunning} with its M and whoever takes it identifies "in a
         * syscall" by the G's {@code _Gsyscall} ({@code setBlockOnExitSyscall}); true is Go 1.25's
         * {@code _Psyscall} model, kept for comparison. {@code GODEBUG=psyscall=1} (or
         * {@code -Dgort.godebug=psyscall=1}, or {@code withGodebug(godebug.with("psyscall=1"))}); a
         * gort name, Go has no such switch. Read once by each runtime ({@link Scheduler#psyscall}).
         */
        public boolean psyscall() {
            return godebug.get("psyscall", 0) != 0;
        }

        /**
         * Whether startm wakes an idle M that stopped on another CPU than the waker's: unless
         * {@code GODEBUG=midlecpu=0}, where {@code sched_getcpu} is reachable ({@link Idle#cpuAware}).
         */
        public boolean midlecpu() {
            return Idle.cpuAware(godebug);
        }

        public Settings withGodebug(GoDebug d) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    d,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }

        public Settings withFatalThrow(boolean on) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    on,
                    seed,
                    threadLocals,
                    netpoll);
        }

        /** The same settings with {@code seed} (0: unseeded). */
        public Settings withSeed(long seed) {
            return new Settings(
                    preempt,
                    preemptBudget,
                    preemptSites,
                    sysmonMaxDelayUs,
                    recordCreators,
                    traceFile,
                    traceWindowMs,
                    traceLevel,
                    traceWorkload,
                    jmx,
                    debugHttp,
                    godebug,
                    fatalThrow,
                    seed,
                    threadLocals,
                    netpoll);
        }
    }

    /** {@link Settings#threadLocals()}: each goroutine has its own ThreadLocals. */
    static final String THREADLOCALS_GOROUTINE = "goroutine";
    /** {@link Settings#threadLocals()}: ThreadLocals are the carrier thread's. */
    static final String THREADLOCALS_CARRIER = "carrier";

    /**
     * {@code -Dgort.threadlocals=goroutine|carrier} / {@code GORT_THREADLOCALS} (read by the runtime
     * and ./gort env). Absent: {@code goroutine} when {@code java.lang} is open to gort
     * ({@link GoroutineLocals#available()}), else {@code carrier}, the one mode the runtime can then
     * give. An explicit {@code goroutine} without the access is a fatal error that names the flag to
     * add, as a malformed setting is: the user asked for what gort cannot do.
     */
    static String threadLocalsSetting() {
        String v = choiceSetting(
                "gort.threadlocals", "GORT_THREADLOCALS", null, THREADLOCALS_GOROUTINE, THREADLOCALS_CARRIER);
        if (v == null) {
            return GoroutineLocals.available() ? THREADLOCALS_GOROUTINE : THREADLOCALS_CARRIER;
        }
        if (v.equals(THREADLOCALS_GOROUTINE) && !GoroutineLocals.available()) {
            throw Fatal.fatal(spelling("gort.threadlocals", "GORT_THREADLOCALS")
                    + " needs java.lang opened to gort: add " + GoroutineLocals.ADD_OPENS
                    + " to the JVM's flags, or run with gort's agent");
        }
        return v;
    }

    /** {@link Settings#netpoll()}: Linux's edge-triggered epoll (FFM). */
    static final String NETPOLL_EPOLL = "epoll";
    /** {@link Settings#netpoll()}: the JDK's Selector. */
    static final String NETPOLL_SELECTOR = "selector";
    /** What epoll needs beyond Linux (amd64, aarch64). */
    static final String NETPOLL_FLAGS =
            "Linux, --enable-native-access=ALL-UNNAMED and --add-exports java.base/sun.nio.ch=ALL-UNNAMED or gort's agent";

    /**
     * {@code -Dgort.netpoll=epoll|selector} / {@code GORT_NETPOLL} (read by the runtime and ./gort
     * env). Absent: {@code epoll} where it is available ({@link Epoll#available()}: Linux, native
     * access, {@code sun.nio.ch} exported to gort), else {@code selector}. An explicit {@code epoll}
     * where it is not is a fatal error that names what is missing.
     */
    static String netpollSetting() {
        String v = choiceSetting("gort.netpoll", "GORT_NETPOLL", null, NETPOLL_EPOLL, NETPOLL_SELECTOR);
        if (v == null) {
            return Epoll.available() ? NETPOLL_EPOLL : NETPOLL_SELECTOR;
        }
        if (v.equals(NETPOLL_EPOLL) && !Epoll.available()) {
            throw Fatal.fatal(
                    spelling("gort.netpoll", "GORT_NETPOLL") + " needs " + NETPOLL_FLAGS + ": " + Epoll.UNAVAILABLE);
        }
        return v;
    }

    /**
     * {@code -Dgort.trace.clock=tsc|nanotime} / {@code GORT_TRACE_CLOCK} as the user spelt it:
     * {@code tsc}, {@code nanotime}, or null when absent; anything else is {@link #malformed}.
     * Checked by {@link #fromEnvironment()} as every setting is (the clock itself is JVM-wide and
     * chosen once, by {@link dev.gort.runtime.trace.TraceClock}: {@link #traceClockSetting}).
     */
    public static String traceClockChoice() {
        return choiceSetting("gort.trace.clock", "GORT_TRACE_CLOCK", null, "tsc", "nanotime");
    }

    /**
     * The execution tracer's clock, {@code tsc} or {@code nanotime}, from {@link #traceClockChoice()}
     * ({@code asked}) and what {@link dev.gort.runtime.trace.TraceClock}'s initialisation found:
     * whether the CPU's time-stamp counter can be read ({@code tscReadable}), whether the kernel
     * also keeps time with it ({@code tscAvailable}), and why not ({@code whyNot}). Absent:
     * {@code tsc} where it is available, else {@code nanotime}. An explicit {@code tsc} where the
     * counter cannot be read is a fatal error that says why.
     */
    public static String traceClockSetting(String asked, boolean tscReadable, boolean tscAvailable, String whyNot) {
        if (asked == null) {
            return tscAvailable ? "tsc" : "nanotime";
        }
        if (asked.equals("tsc") && !tscReadable) {
            throw Fatal.fatal(spelling("gort.trace.clock", "GORT_TRACE_CLOCK")
                    + ": cannot read the CPU's time-stamp counter: " + whyNot);
        }
        return asked;
    }

    /**
     * {@code -Dgort.trace=<file>}: trace every runtime from its start and write the file at exit, in
     * the format its extension names ({@link dev.gort.runtime.trace.TraceFormat}, case ignored); a
     * name without one is {@link #malformed}, at start rather than when the file is written.
     */
    public static String traceFileSetting() {
        String v = System.getProperty("gort.trace");
        if (v == null || v.isBlank()) {
            return null;
        }
        if (dev.gort.runtime.trace.TraceFormat.of(v) == null) {
            throw malformed("gort.trace", null, dev.gort.runtime.trace.TraceFormat.WANTED);
        }
        return v.trim();
    }

    /** {@code -Dgort.trace.workload=<name>}: shown in the trace header. */
    public static String traceWorkloadSetting() {
        return System.getProperty("gort.trace.workload", "");
    }

    /**
     * A usable {@code GOMAXPROCS} / {@code -Dgort.gomaxprocs} (&gt; 0), else 0: absent, malformed, zero
     * or negative means the default ({@link MaxProcs#defaultGOMAXPROCS}), as Go's schedinit ignores
     * such a GOMAXPROCS.
     *
     * <p>Go: proc.go schedinit ({@code if n, ok := atoi32(gogetenv("GOMAXPROCS")); ok && n > 0})
     */
    static int explicitGomaxprocs() {
        String v = setting("gort.gomaxprocs", "GOMAXPROCS");
        if (v == null) {
            return 0;
        }
        try {
            int n = Integer.parseInt(v);
            return Math.max(n, 0);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * Go 1.25's GOMAXPROCS policy from the environment: custom when GOMAXPROCS is set (usable),
     * {@code GODEBUG=updatemaxprocs=0} and {@code GODEBUG=containermaxprocs=0} (also in
     * {@code -Dgort.godebug}) as Go reads them (any value but 0 keeps the default, on).
     *
     * <p>Go: proc.go schedinit, runtime1.go dbgvars (updatemaxprocs, containermaxprocs)
     */
    static MaxProcs maxprocsSetting(CpuSource cpus, GoDebug gd) {
        return new MaxProcs(
                explicitGomaxprocs() > 0, gd.get("updatemaxprocs", 1) != 0, gd.get("containermaxprocs", 1) != 0, cpus);
    }

    static int runqSizeSetting() {
        String v = setting("gort.runqsize", "GORT_RUNQSIZE");
        if (v == null) {
            return 256;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 2 && n <= MAX_RUNQ_SIZE && Integer.bitCount(n) == 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // malformed, below
        }
        throw malformed("gort.runqsize", "GORT_RUNQSIZE", "a power of two from 2 to " + MAX_RUNQ_SIZE);
    }

    /** An explicit GOMAXPROCS: sysmon never changes it (Go: sched.customGOMAXPROCS). */
    public Config withGomaxprocs(int n) {
        return new Config(
                n,
                runqSize,
                stealing,
                spinning,
                maxThreads,
                carrierSpacers,
                panicExits,
                debugChecks,
                name,
                settings,
                new MaxProcs(true, maxprocs.update(), maxprocs.container(), maxprocs.cpus()));
    }

    /**
     * GOMAXPROCS from {@code cpus} (its {@link MaxProcs#defaultGOMAXPROCS} now), followed by sysmon
     * as Go 1.25 does unless {@code update} is false: for tests with an injected CPU count.
     */
    public Config withCpuSource(CpuSource cpus, boolean update, boolean container) {
        MaxProcs mp = new MaxProcs(false, update, container, cpus);
        return new Config(
                mp.defaultGOMAXPROCS(),
                runqSize,
                stealing,
                spinning,
                maxThreads,
                carrierSpacers,
                panicExits,
                debugChecks,
                name,
                settings,
                mp);
    }

    public Config withRunqSize(int n) {
        return new Config(
                gomaxprocs,
                n,
                stealing,
                spinning,
                maxThreads,
                carrierSpacers,
                panicExits,
                debugChecks,
                name,
                settings,
                maxprocs);
    }

    public Config withStealing(boolean on) {
        return new Config(
                gomaxprocs,
                runqSize,
                on,
                spinning,
                maxThreads,
                carrierSpacers,
                panicExits,
                debugChecks,
                name,
                settings,
                maxprocs);
    }

    public Config withSpinning(boolean on) {
        return new Config(
                gomaxprocs,
                runqSize,
                stealing,
                on,
                maxThreads,
                carrierSpacers,
                panicExits,
                debugChecks,
                name,
                settings,
                maxprocs);
    }

    /** The same configuration with {@code n} spacer threads per carrier ({@link CarrierSpacers}; 0 = none). */
    public Config withCarrierSpacers(int n) {
        return new Config(
                gomaxprocs,
                runqSize,
                stealing,
                spinning,
                maxThreads,
                n,
                panicExits,
                debugChecks,
                name,
                settings,
                maxprocs);
    }

    public Config withMaxThreads(int n) {
        return new Config(
                gomaxprocs,
                runqSize,
                stealing,
                spinning,
                n,
                carrierSpacers,
                panicExits,
                debugChecks,
                name,
                settings,
                maxprocs);
    }

    /** The same configuration with {@code -Dgort.seed}'s seed (0: unseeded). See {@link Decisions}. */
    public Config withSeed(long seed) {
        return withSettings(settings.withSeed(seed));
    }

    public Config withPanicExits(boolean on) {
        return new Config(
                gomaxprocs,
                runqSize,
                stealing,
                spinning,
                maxThreads,
                carrierSpacers,
                on,
                debugChecks,
                name,
                settings,
                maxprocs);
    }

    public Config withDebugChecks(boolean on) {
        return new Config(
                gomaxprocs,
                runqSize,
                stealing,
                spinning,
                maxThreads,
                carrierSpacers,
                panicExits,
                on,
                name,
                settings,
                maxprocs);
    }

    public Config withName(String n) {
        return new Config(
                gomaxprocs,
                runqSize,
                stealing,
                spinning,
                maxThreads,
                carrierSpacers,
                panicExits,
                debugChecks,
                n,
                settings,
                maxprocs);
    }

    // ------------------------------------------------------------------------------------------
    // Reading one setting: the system property wins over the environment variable. These are the
    // only readers of gort's settings (ReadmeTest checks that every documented one is read here or
    // by a caller of these).

    /** The setting's value, trimmed, or null when neither the property nor the variable is set. */
    public static String setting(String prop, String env) {
        String v = System.getProperty(prop);
        if (v == null || v.isBlank()) {
            v = env == null ? null : System.getenv(env);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    /** How the user spelt the setting: {@code -Dprop=value} or {@code ENV=value}. */
    static String spelling(String prop, String env) {
        String v = System.getProperty(prop);
        if (v != null && !v.isBlank()) {
            return "-D" + prop + "=" + v.trim();
        }
        return env + "=" + setting(prop, env);
    }

    /**
     * The fatal error for a setting that gort cannot use, naming it and what it wants:
     * {@code fatal error: malformed -Dgort.runqsize=3: want a power of two from 2 to 65536}.
     * Halts the JVM with status 2 (throws {@link GortFatalError} under {@code -Dgort.fatal=throw}).
     *
     * <p>Go: proc.go readGOMEMLIMIT's {@code throw("malformed GOMEMLIMIT ...")}
     */
    static GortFatalError malformed(String prop, String env, String want) {
        return Fatal.fatal("malformed " + spelling(prop, env) + ": want " + want);
    }

    /** An integer setting in [min, max]; absent: dflt; anything else is {@link #malformed}. */
    public static int intSetting(String prop, String env, int dflt, int min, int max) {
        long n = longSetting(prop, env, dflt, min, max);
        return (int) n;
    }

    /** A long setting in [min, max]; absent: dflt; anything else is {@link #malformed}. */
    /**
     * {@code -Dgort.debug.http}: {@code [host:]port}, the port from 0 (a free one) to 65535, or null.
     * A port that is not one is {@link #malformed}; the host is checked when the server starts
     * (anything but the loopback is refused there, and the program runs without the server).
     */
    static String debugHttpSetting() {
        String v = setting("gort.debug.http", null);
        if (v == null) {
            return null;
        }
        if (debugHttpPort(v) < 0) {
            throw malformed("gort.debug.http", null, "[127.0.0.1:|localhost:]<port>, the port from 0 to 65535");
        }
        return v;
    }

    /**
     * The port of a {@code -Dgort.debug.http} value ({@code [host:]port}; the host is not looked
     * at), or -1 if that is not a port from 0 to 65535.
     */
    public static int debugHttpPort(String spec) {
        String v = spec.trim();
        try {
            int port = Integer.parseInt(v.substring(v.lastIndexOf(':') + 1));
            return port < 0 || port > 65535 ? -1 : port;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** {@code -Dgort.seed} / {@code GORT_SEED}: any 64-bit integer; 0 (the default) means unseeded. */
    static long seedSetting() {
        String v = setting("gort.seed", "GORT_SEED");
        if (v == null) {
            return 0;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw malformed("gort.seed", "GORT_SEED", "a 64-bit integer");
        }
    }

    public static long longSetting(String prop, String env, long dflt, long min, long max) {
        String v = setting(prop, env);
        if (v == null) {
            return dflt;
        }
        String want = max == Integer.MAX_VALUE || max == Long.MAX_VALUE
                ? "an integer >= " + min
                : "an integer from " + min + " to " + max;
        try {
            long n = Long.parseLong(v);
            if (n < min || n > max) {
                throw malformed(prop, env, want);
            }
            return n;
        } catch (NumberFormatException e) {
            throw malformed(prop, env, want);
        }
    }

    /** A boolean setting: 1/true/on/yes or 0/false/off/no; absent: dflt; anything else is {@link #malformed}. */
    public static boolean boolSetting(String prop, String env, boolean dflt) {
        String v = setting(prop, env);
        if (v == null) {
            return dflt;
        }
        return switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "1", "true", "on", "yes" -> true;
            case "0", "false", "off", "no" -> false;
            default -> throw malformed(prop, env, "true or false");
        };
    }

    /**
     * {@code -Dgort.jitdirective=false} / {@code GORT_JITDIRECTIVE=0}: do not add the compiler
     * directive that keeps the JDK's current-thread readers out of compiled code
     * ({@link JitDirectives}; a switch for measuring what it costs, or for a JVM where it misbehaves).
     * JVM-wide, read by the agent's premain, the first runtime's start and ./gort env. Default on.
     */
    public static boolean jitDirectiveSetting() {
        return boolSetting("gort.jitdirective", "GORT_JITDIRECTIVE", true);
    }

    /** {@code -Dgort.creators=off|stack}: how "created by" frames are found (read by the runtime and ./gort env). */
    public static String creatorsSetting() {
        return choiceSetting("gort.creators", null, "off", "off", "stack");
    }

    /** {@code -Dgort.fatal=halt|throw}: what a fatal error does (read by {@link Fatal} and ./gort env). */
    public static String fatalSetting() {
        return choiceSetting("gort.fatal", null, "halt", "halt", "throw");
    }

    /** One of {@code choices} (case-insensitive, returned lower-case); absent: dflt; else {@link #malformed}. */
    static String choiceSetting(String prop, String env, String dflt, String... choices) {
        String v = setting(prop, env);
        if (v == null) {
            return dflt;
        }
        for (String c : choices) {
            if (c.equalsIgnoreCase(v)) {
                return c;
            }
        }
        throw malformed(prop, env, "one of " + String.join(", ", choices));
    }
}
