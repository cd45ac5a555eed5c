package dev.gort.runtime.testprog;

import dev.gort.runtime.Config;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;

/**
 * Programs that end the process, run in a child JVM by {@code CrashTest} (Go's
 * runtime/testdata/testprog). The first argument names the program.
 */
public final class TestProg {
    private TestProg() {}

    public static void main(String[] args) {
        String name = args.length == 0 ? "" : args[0];
        Runnable prog = switch (name) {
            case "SimpleDeadlock" -> TestProg::simpleDeadlock;
            case "GoexitDeadlock" -> TestProg::goexitDeadlock;
            case "Panic" -> TestProg::panicInGoroutine;
            case "Exit" -> () -> System.out.println("main done");
            default -> {
                System.out.println("unknown function: " + name);
                System.exit(2);
                yield null;
            }
        };
        new Scheduler(Config.fromEnvironment()).run(prog);
    }

    /** Go: select {} with nothing else alive. */
    static void simpleDeadlock() {
        blockForever();
    }

    /** Go: testprog/deadlock.go GoexitDeadlock: two trivial goroutines, then main calls Goexit. */
    static void goexitDeadlock() {
        Scheduler rt = Scheduler.current();
        Runnable f = () -> {
            for (int i = 0; i < 10; i++) {
                Thread.onSpinWait();
            }
        };
        rt.newproc(f);
        rt.newproc(f);
        Scheduler.goexit();
    }

    static void panicInGoroutine() {
        Scheduler.current().newproc(() -> {
            throw new IllegalStateException("child exploded");
        });
        blockForever();
    }

    /** Go: block(), i.e. select {}: park with no way to be woken. */
    static void blockForever() {
        Scheduler.gopark((G gp, Object l) -> true, null, WaitReason.SELECT_NO_CASES, null);
        throw new AssertionError("unreachable: woken from select {}");
    }
}
