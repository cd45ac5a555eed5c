package dev.gort.agent;

import dev.gort.runtime.Fatal;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.JitDirectives;
import dev.gort.runtime.PreemptStrategy;
import java.lang.instrument.Instrumentation;
import java.util.Map;
import java.util.Set;

/**
 * gort's java agent: installs {@link GortTransformer} with the strategy from
 * {@code -Dgort.preempt} / {@code GORT_PREEMPT} (default {@code backedge}; {@code none} installs
 * nothing), exports {@code java.base/jdk.internal.vm} to the application class loader's unnamed
 * module and opens {@code java.base/java.lang} to the runtime's module (goroutine-scoped
 * ThreadLocals, {@code -Dgort.threadlocals}) so that {@code -javaagent} alone is enough; it also
 * exports {@code sun.nio.ch} (the network poller) and {@code jdk.internal.misc} (class
 * initialisation states, for the look at a goroutine's stack for JDK locks) and opens {@code java.io}, {@code sun.nio.cs},
 * {@code java.net}, {@code sun.security.ssl} and {@code sun.nio.ch} (the look through the JDK's
 * stream wrappers, and into its socket implementation for reads that wait in the netpoller) to it.
 *
 * <p>Two ways in:
 * <ul>
 *   <li>{@code java -javaagent:gort-agent.jar -cp app.jar Main} ({@code Premain-Class});
 *   <li>an executable jar that contains this class (e.g. shaded in) and whose manifest says
 *       <pre>
 * Main-Class: your.Main
 * Launcher-Agent-Class: dev.gort.agent.GortAgent
 * Add-Exports: java.base/jdk.internal.vm
 * Add-Opens: java.base/java.lang
 *       </pre>
 *       then {@code java -jar app.jar} needs no flags: the launcher starts this agent before
 *       {@code main} (JDK 9+), and {@code Add-Exports} in the main jar's manifest opens the
 *       continuation API ({@code Add-Opens} the ThreadLocal maps; this agent opens both too).
 * </ul>
 * Classes loaded before the agent (the launcher's own) are not rewritten: no retransformation.
 */
public final class GortAgent {
    private GortAgent() {}

    /** {@code -javaagent}. */
    public static void premain(String args, Instrumentation inst) {
        install(args, inst);
    }

    /** {@code Launcher-Agent-Class} (and dynamic attach, which gort does not recommend). */
    public static void agentmain(String args, Instrumentation inst) {
        install(args, inst);
    }

    /**
     * Installs the transformer. A malformed setting is reported as Go reports one (a {@code fatal
     * error: malformed ...} line, exit status 2) and any other failure as a fatal error naming it:
     * an exception out of an agent's entry point would abort the JVM with the launcher's
     * {@code FATAL ERROR in native method: processing of -javaagent failed}.
     */
    private static void install(String args, Instrumentation inst) {
        try {
            install0(args, inst);
        } catch (GortFatalError e) {
            throw e; // already reported (and only reached under -Dgort.fatal=throw)
        } catch (RuntimeException | LinkageError e) {
            throw Fatal.fatal(
                    e instanceof IllegalArgumentException
                            ? "malformed -javaagent argument '" + args + "': " + e.getMessage()
                            : "gort agent: could not start: " + e);
        }
    }

    private static void install0(String args, Instrumentation inst) {
        // First: the runtime decides once, when it first reads its settings, whether it can give
        // each goroutine its own ThreadLocals (dev.gort.runtime.GoroutineLocals).
        openThreadLocals(inst);
        exportDescriptors(inst);
        exportClassStates(inst);
        openStreams(inst);
        // Any registered strategy or a Strategy class name (Strategies); resolving it registers its
        // name with the runtime, which then accepts the same gort.preempt.
        Strategy strategy = args != null && !args.isBlank() ? Strategies.named(args) : Strategies.fromEnvironment();
        if (args != null && !args.isBlank()) {
            System.setProperty("gort.preempt", args.trim()); // the runtime reports the same strategy
        }
        exportContinuations(inst);
        addJitDirective(inst);
        if (strategy.family() == PreemptStrategy.NONE) {
            return;
        }
        inst.addTransformer(new GortTransformer(strategy), false);
    }

    /**
     * Opens {@code java.lang} of {@code java.base} to the runtime's module (the class path's unnamed
     * module when gort is on the class path), so that the runtime can swap a carrier's
     * {@code Thread.threadLocals} and {@code inheritableThreadLocals} for the running goroutine's
     * ({@code -Dgort.threadlocals=goroutine}, its default then): {@code -javaagent} alone is enough,
     * no {@code --add-opens java.base/java.lang=ALL-UNNAMED} needed.
     */
    private static void openThreadLocals(Instrumentation inst) {
        Module base = Object.class.getModule();
        Module runtime = Fatal.class.getModule();
        if (!base.isOpen("java.lang", runtime)) {
            inst.redefineModule(base, Set.of(), Map.of(), Map.of("java.lang", Set.of(runtime)), Set.of(), Map.of());
        }
    }

    /**
     * Opens {@code com.sun.management.internal} of {@code jdk.management} to the runtime's module and
     * adds the runtime's compiler directive ({@link JitDirectives}: the JDK's methods that read the
     * current thread stay out of compiled user code) before any user code is compiled. Without it a
     * goroutine's {@code ReentrantLock} can record a carrier the goroutine has left as its owner;
     * where it cannot be added, one line on stderr says why.
     */
    private static void addJitDirective(Instrumentation inst) {
        Module runtime = Fatal.class.getModule();
        ModuleLayer.boot().findModule("jdk.management").ifPresent(m -> {
            if (!m.isOpen("com.sun.management.internal", runtime)) {
                inst.redefineModule(
                        m,
                        Set.of(),
                        Map.of(),
                        Map.of("com.sun.management.internal", Set.of(runtime)),
                        Set.of(),
                        Map.of());
            }
        });
        String why = JitDirectives.install();
        if (why != null && !why.equals(JitDirectives.SWITCHED_OFF)) {
            System.err.println("gort: warning: could not add the compiler directive that keeps JDK code reading"
                    + " Thread.currentThread() out of compiled goroutine code (" + why + "): a ReentrantLock or other"
                    + " JDK code that names its thread may see a carrier its goroutine has left");
        }
    }

    private static void exportContinuations(Instrumentation inst) {
        Module base = Object.class.getModule();
        Module app = ClassLoader.getSystemClassLoader().getUnnamedModule();
        if (!base.isExported("jdk.internal.vm", app)) {
            inst.redefineModule(base, Set.of(), Map.of("jdk.internal.vm", Set.of(app)), Map.of(), Set.of(), Map.of());
        }
    }

    /**
     * Opens {@code java.io}, {@code sun.nio.cs}, {@code java.net}, {@code sun.security.ssl} and
     * {@code sun.nio.ch} of {@code java.base} to the runtime's module: the hooks of the stream calls the agent wraps ({@code Poll.blockingEnterStream},
     * {@code Poll.streamRead}, ...) look through the JDK's wrappers ({@code BufferedReader},
     * {@code InputStreamReader}'s decoder, {@code DataInputStream}, ...) for a socket's stream at
     * the end, through a {@code Socket}'s stream to its implementation's and into an
     * {@code SSLSocket}'s handshake state, and into the JDK's socket implementation (its
     * descriptor, state and timeout, for a read that waits in the netpoller:
     * {@code Poll.blockingEnterStreamRead}) ({@code dev.gort.runtime.PeerStreams}, which decides
     * once, when it initialises).
     */
    private static void openStreams(Instrumentation inst) {
        Module base = Object.class.getModule();
        Module runtime = Fatal.class.getModule();
        Map<String, Set<Module>> opens = new java.util.HashMap<>();
        for (String pkg : new String[] {"java.io", "sun.nio.cs", "java.net", "sun.security.ssl", "sun.nio.ch"}) {
            if (!base.isOpen(pkg, runtime)) {
                opens.put(pkg, Set.of(runtime));
            }
        }
        if (!opens.isEmpty()) {
            inst.redefineModule(base, Set.of(), Map.of(), opens, Set.of(), Map.of());
        }
    }

    /**
     * Exports {@code jdk.internal.misc} of {@code java.base} to the runtime's module: the look at a
     * goroutine's stack for locks the JDK's frames hold ({@code dev.gort.runtime.LockFrames}, before
     * a socket wait or a preemption) first walks the frames' classes alone and asks whether each is
     * initialised ({@code Unsafe.shouldBeInitialized}: a class initialiser's frame is one of a class
     * that is not), and walks the frames' methods only where that finds a suspect. Before the
     * runtime's classes initialise, which decide once.
     */
    private static void exportClassStates(Instrumentation inst) {
        Module base = Object.class.getModule();
        Module runtime = Fatal.class.getModule();
        if (!base.isExported("jdk.internal.misc", runtime)) {
            inst.redefineModule(
                    base, Set.of(), Map.of("jdk.internal.misc", Set.of(runtime)), Map.of(), Set.of(), Map.of());
        }
    }

    /**
     * Exports {@code sun.nio.ch} of {@code java.base} to the runtime's module: the epoll network
     * poller ({@code -Dgort.netpoll=epoll}, its default then) reads the sockets' descriptors
     * ({@code SelChImpl.getFDVal}). Native access, which it needs too, no agent can grant: it comes
     * from {@code --enable-native-access=ALL-UNNAMED} or a manifest's {@code Enable-Native-Access}.
     * Before anything reads the runtime's settings, as {@link #openThreadLocals}.
     */
    private static void exportDescriptors(Instrumentation inst) {
        Module base = Object.class.getModule();
        Module runtime = Fatal.class.getModule();
        if (!base.isExported("sun.nio.ch", runtime)) {
            inst.redefineModule(base, Set.of(), Map.of("sun.nio.ch", Set.of(runtime)), Map.of(), Set.of(), Map.of());
        }
    }
}
