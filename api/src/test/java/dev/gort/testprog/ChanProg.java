package dev.gort.testprog;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Select;
import dev.gort.sync.Mutex;
import dev.gort.sync.WaitGroup;

/**
 * Child-JVM programs for ChanCrashTest (Go's testprog idea): each ends in a fatal error or a
 * panic, which halts the JVM with status 2 as Go does.
 */
public final class ChanProg {
    private ChanProg() {}

    public static void main(String[] args) {
        switch (args[0]) {
            // Go: testdata/testprog/deadlock.go SimpleDeadlock: select {}
            case "SelectNoCases" -> Go.run(Select::block);
            // main blocks receiving from a channel nobody else holds
            case "ChanRecvDeadlock" ->
                Go.run(() -> {
                    Chan<Integer> c = Chan.make();
                    c.recv();
                });
            // every goroutine is blocked: main on a WaitGroup; G2 holds the mutex and waits to send
            // on an unbuffered channel nobody receives from; G3 waits for the mutex.
            case "MutexChain" ->
                Go.run(() -> {
                    Mutex m = new Mutex();
                    Chan<Integer> c = Chan.make();
                    WaitGroup wg = new WaitGroup();
                    wg.add(2);
                    Chan<Boolean> locked = Chan.make(1);
                    Go.go(() -> {
                        m.lock();
                        locked.send(true);
                        c.send(1); // nobody receives
                        m.unlock();
                        wg.done();
                    });
                    locked.recv();
                    Go.go(() -> {
                        m.lock(); // held by the goroutine above
                        m.unlock();
                        wg.done();
                    });
                    wg.await();
                });
            // a nil channel blocks forever
            case "NilChanSend" -> Go.run(() -> Chan.<Integer>nil().send(1));
            // an unrecovered channel panic in a goroutine
            case "SendOnClosed" ->
                Go.run(() -> {
                    Chan<Integer> c = Chan.make(1);
                    c.close();
                    Chan<Boolean> never = Chan.make();
                    Go.go(() -> c.send(1));
                    never.recv();
                });
            // fatal, not a panic: unlocking an unlocked mutex
            case "UnlockUnlocked" -> Go.run(() -> new Mutex().unlock());
            default -> throw new IllegalArgumentException("unknown function: " + args[0]);
        }
    }
}
