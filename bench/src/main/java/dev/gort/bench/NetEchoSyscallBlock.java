package dev.gort.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link NetEcho}'s workload for gort on blocking {@code java.net.Socket}s instead of the poller:
 * every goroutine's blocking call ({@code accept}, the client's rounds, the server's echo loop) is
 * wrapped in {@code Syscall.block}, so each one that blocks holds its carrier thread and sysmon
 * hands its P to another thread. The trial prints the carrier threads it needed (compare with
 * {@link NetEcho#gort}'s line: about GOMAXPROCS there).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "--add-exports",
            "java.base/jdk.internal.vm=ALL-UNNAMED",
            "--add-exports",
            "java.base/sun.nio.ch=ALL-UNNAMED",
            "--enable-native-access=ALL-UNNAMED",
            "-XX:+UseG1GC"
        })
public class NetEchoSyscallBlock {
    @Benchmark
    @OperationsPerInvocation(NetEcho.CONNS * NetEcho.ROUNDS)
    public void gort(NetEcho.GortState st) {
        st.connectBlocking();
        st.host.run(st.blockingJob);
    }
}
