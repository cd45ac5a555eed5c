package main

// The twins of bench's TimerBench, TimerLatency, WakeupParallelSyscall and SyscallCost: Go's own
// benchmarks (time/sleep_test.go BenchmarkAfterFunc1000 and BenchmarkSleep1000, runtime/proc_test.go
// BenchmarkWakeupParallelSyscall and BenchmarkSyscall) in the shapes the JMH classes give them, so
// that the report has a Go column for the timer and syscall rows.

import (
	"runtime"
	"sync"
	"syscall"
	"time"
)

// timerK is TimerBench.K: bodies per goroutine per invocation.
const timerK = 8

// timerParallel runs m invocations of TimerBench's shape and returns microseconds per body: every
// P's heap first gets 2^15 garbage timers (AfterFunc(Hour), not timed, stopped afterwards, as Go's
// time benchmark helper does), then each invocation starts GOMAXPROCS goroutines that run body
// timerK times each (Go's b.RunParallel) and waits for them.
func timerParallel(m int, body func()) float64 {
	procs := runtime.GOMAXPROCS(0)
	garbage := make([][]*time.Timer, procs)
	var wg sync.WaitGroup
	for i := range garbage {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			g := make([]*time.Timer, 1<<15)
			for j := range g {
				g[j] = time.AfterFunc(time.Hour, func() {})
			}
			garbage[i] = g
		}(i)
	}
	wg.Wait()
	elapsed := invocations(m, procs, timerK, body)
	for _, g := range garbage {
		for _, t := range g {
			t.Stop()
		}
	}
	return float64(elapsed.Nanoseconds()) / 1e3 / float64(m*timerK)
}

// afterFunc1000: BenchmarkAfterFunc1000's body, a chain of 1000 AfterFunc(0, f) where each f
// arms the next.
func afterFunc1000() {
	n := 1000
	c := make(chan bool)
	var f func()
	f = func() {
		n--
		if n >= 0 {
			time.AfterFunc(0, f)
		} else {
			c <- true
		}
	}
	time.AfterFunc(0, f)
	<-c
}

// sleep1000: BenchmarkSleep1000's body, 1000 goroutines each Sleep(1ns), then wait.
func sleep1000() {
	const n = 1000
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			time.Sleep(time.Nanosecond)
			wg.Done()
		}()
	}
	wg.Wait()
}

// timerLatencyR is TimerLatency.R: sleeps per sleeper per invocation.
const timerLatencyR = 20

// timerLatency: TimerLatency's sleep, m invocations of sleepers goroutines each sleeping delay
// timerLatencyR times in a row; microseconds of wall time per sleep of one sleeper (JMH's score:
// the invocation's time over R).
func timerLatency(m int, delay time.Duration, sleepers int) float64 {
	elapsed := invocations(m, sleepers, timerLatencyR, func() { time.Sleep(delay) })
	return float64(elapsed.Nanoseconds()) / 1e3 / float64(m*timerLatencyR)
}

// invocations times m invocations of one JMH operation's shape: each starts n goroutines that
// call body k times in a row and waits for all of them.
func invocations(m, n, k int, body func()) time.Duration {
	var wg sync.WaitGroup
	t0 := time.Now()
	for inv := 0; inv < m; inv++ {
		wg.Add(n)
		for i := 0; i < n; i++ {
			go func() {
				for j := 0; j < k; j++ {
					body()
				}
				wg.Done()
			}()
		}
		wg.Wait()
	}
	return time.Since(t0)
}

// sysNanosleep blocks the thread in nanosleep(2) for d, as runtime_linux_test.go's does: a
// blocking system call, not time.Sleep (which would park the goroutine). For d == 0 it makes a
// system call that returns at once (getpid, through entersyscall/exitsyscall), as the JMH class's
// spin(0) enters and leaves a syscall section without sleeping: Go's own nanosleep(0) would sleep
// for the timer slack (about 50us on Linux), which gort's side does not.
func sysNanosleep(d time.Duration) {
	if d == 0 {
		syscall.Syscall(syscall.SYS_GETPID, 0, 0, 0)
		return
	}
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for {
		if err := syscall.Nanosleep(&ts, &ts); err != syscall.EINTR {
			return
		}
	}
}

// wakeupParallelSyscall: benchmarkWakeupParallel with sysNanosleep (WakeupParallelSyscall's
// twin): two goroutines alternate as sender and receiver on two unbuffered channels, blocking in
// the syscall for delay before each receive and delay + 5us before each send; microseconds per
// iteration (each goroutine once sender, once receiver).
func wakeupParallelSyscall(n int, delay time.Duration) float64 {
	const wakeDelay = 5 * time.Microsecond
	ping, pong := make(chan struct{}), make(chan struct{})
	start, done := make(chan struct{}), make(chan struct{})
	go func() {
		<-start
		for i := 0; i < n; i++ {
			sysNanosleep(delay + wakeDelay)
			ping <- struct{}{}
			sysNanosleep(delay)
			<-pong
		}
		done <- struct{}{}
	}()
	go func() {
		for i := 0; i < n; i++ {
			sysNanosleep(delay)
			<-ping
			sysNanosleep(delay + wakeDelay)
			pong <- struct{}{}
		}
		done <- struct{}{}
	}()
	t0 := time.Now()
	start <- struct{}{}
	<-done
	<-done
	return float64(time.Since(t0).Nanoseconds()) / 1e3 / float64(n)
}

// syscallCost: what Go's syscall API adds to a system call, SyscallCost mode=api's twin: Go's
// syscall.Syscall is RawSyscall inside entersyscall/exitsyscall, so the pair's cost is the time of
// Syscall(getpid) minus that of RawSyscall(getpid) (gort's side times its pair around nothing).
// Blocks of each alternate so that both see the same machine; ns per call. A G that blocked
// nowhere keeps its P (exitsyscall's fast path), as on gort's side.
func syscallCost(n int) float64 {
	const block = 1000
	var raw, wrapped time.Duration
	calls := 0
	for ; calls < n; calls += block {
		t0 := time.Now()
		for i := 0; i < block; i++ {
			syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
		}
		t1 := time.Now()
		for i := 0; i < block; i++ {
			syscall.Syscall(syscall.SYS_GETPID, 0, 0, 0)
		}
		t2 := time.Now()
		raw += t1.Sub(t0)
		wrapped += t2.Sub(t1)
	}
	return float64((wrapped - raw).Nanoseconds()) / float64(calls)
}
