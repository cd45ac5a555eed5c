package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An M whose idle poll began before the poller existed sleeps on the runtime's note until the
 * next timer ({@link Netpoll}'s pre-init branch). The first network use creates the poller: that M
 * must then poll it, or a goroutine parked on the network waits for the timer (or for ever).
 */
@Timeout(60)
class NetpollLateInitTest {

    /**
     * GOMAXPROCS=2, a 20 s sleeper pending: M1 goes idle into the note's sleep; then main creates
     * the poller, parks a reader and makes its socket readable. Nobody else polls (sysmon and
     * findRunnable leave it to the M blocked in the poll, lastpoll = 0), so the reader woke only
     * when the 20 s timer ended M1's sleep, under epoll (whose arming breaks no poll); the
     * selector's arming woke the note.
     */
    @ParameterizedTest(name = "poller={0}")
    @ValueSource(strings = {"epoll", "selector"})
    void theFirstNetworkUseWakesAnMAsleepBeforeThePollerExisted(String poller) {
        Assumptions.assumeTrue(!poller.equals("epoll") || Epoll.available(), () -> "epoll: " + Epoll.UNAVAILABLE);
        Scheduler s = new Scheduler(TestSupport.config(2, poller));
        AtomicInteger woke = new AtomicInteger();
        boolean[] asleepBeforeInit = {false};
        TestSupport.runChecked(s, () -> {
            s.newproc(() -> Timer.timeSleep(20_000_000_000L)); // the timer an idle M sleeps until
            long end = System.nanoTime() + 10_000_000_000L;
            while (!noteSleeper(s) && System.nanoTime() < end) {
                Scheduler.gosched();
            }
            asleepBeforeInit[0] = noteSleeper(s);
            Netpoll np = Netpoll.of(s);
            SocketChannel[] p = TestSupport.socketPair();
            Netpoll.PollDesc pd = np.netpollopen(p[0], "test"); // creates the poller
            TestSupport.parkReader(s, np, pd, woke);
            p[1].write(ByteBuffer.allocate(1));
            end = System.nanoTime() + 10_000_000_000L;
            while (woke.get() == 0 && System.nanoTime() < end) {
                Scheduler.gosched();
            }
            pd.evict();
            np.netpollclose(pd);
            p[0].close();
            p[1].close();
        });
        assertTrue(asleepBeforeInit[0], "no M went to sleep on the note");
        assertEquals(1, woke.get(), "the reader was not woken within 10 s of its socket turning readable");
    }

    /** Whether a carrier sleeps on the note in the poll's pre-init branch. */
    private static boolean noteSleeper(Scheduler s) {
        for (M m : s.allm()) {
            StackTraceElement[] st = m.thread.getStackTrace();
            if (Arrays.stream(st).anyMatch(f -> f.getMethodName().equals("notetsleep"))
                    && Arrays.stream(st).anyMatch(f -> f.getMethodName().equals("netpollSelector"))) {
                return true;
            }
        }
        return false;
    }
}
