// Command benchtwin is the Go twin of gort's JMH suite (bench/src/main/java/dev/gort/bench): the
// same workloads, the same sizes, so that gort, virtual threads and Go are compared on one machine.
//
// It prints one CSV line per (workload, GOMAXPROCS):
//
//	workload,impl,gomaxprocs,score,error,unit,samples,raw
//
// score is the mean of -reps timed repetitions (after one warm-up repetition) and error the
// half-width of its 99.9% confidence interval (Student's t), the same statistic JMH prints as
// "Score Error (99.9%)"; raw is every repetition's figure, ';'-separated, from which the report
// (bench/src/main/java/dev/gort/bench/report) takes the median and its 95% interval, as it does
// from JMH's iterations. With -mintime, a repetition is what a JMH iteration of -r is: the workload
// run again and again until that much time has passed, its figure the mean of those runs (all of
// one size, so it is the time per operation over the whole repetition). Run it through
// bench/go/run.sh (or ./gort bench, which passes JMH's iteration time).
//
// Each (workload, GOMAXPROCS) runs in a fresh process of this program (-fork, the default), as JMH
// runs each benchmark and parameter in JVMs of their own: a Go process carries state from one
// workload to the next (the heap and its GC pacing, the starting size of new goroutines' stacks,
// the Ms it has started). The sieve at GOMAXPROCS=1 after the 10,000 pairs, 5 repetitions, four
// times each way alternated (2026-12-04): 387, 519, 393, 428 ms in one process, 316, 331, 333, 413
// in fresh ones. -fork=false runs everything in this process.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	procsFlag = flag.String("procs", "", "comma-separated GOMAXPROCS values (default: 1,2 and NumCPU)")
	reps      = flag.Int("reps", 5, "timed repetitions per workload")
	warmups   = flag.Int("warmups", 3, "untimed repetitions before the timed ones in each process, each after a runtime.GC() as a timed one is (JMH's warm-up iterations; one early repetition in a process runs 25-45 % slower than the rest: bench/README.md)")
	only      = flag.String("only", "", "comma-separated workload names to run (default: all)")
	implName  = flag.String("impl", "go", "implementation label in the output (e.g. go-nopreempt)")
	parkedN   = flag.Int("parked", 1000000, "goroutines parked at once for the parked workload")
	parkedOwn = flag.Bool("parked-process", false, "internal: measure the parked workload in this process and print its figure alone")
	minTime   = flag.Duration("mintime", 0, "each repetition runs the workload until this much time has passed and reports the mean of those runs (JMH's iteration time); 0: one run")
	fork      = flag.Bool("fork", true, "run each (workload, GOMAXPROCS) in a fresh process of this program, as JMH forks a JVM for each benchmark and parameter; false: all in this process")
)

type workload struct {
	name  string
	unit  string
	procs []int // nil = every value of -procs
	// run performs the workload once and returns its score in unit.
	run func() float64
	// once: a repetition is always one run, whatever -mintime (a memory figure, not a time).
	once bool
}

func main() {
	flag.Parse()
	if *parkedOwn {
		fmt.Println(parked(*parkedN))
		return
	}
	procs := parseProcs(*procsFlag)
	fmt.Println("workload,impl,gomaxprocs,score,error,unit,samples,raw")
	failed := false
	for _, w := range workloads() {
		if !selected(w.name) {
			continue
		}
		ps := procs
		if w.procs != nil {
			ps = w.procs
		}
		for _, p := range ps {
			if *fork {
				if !runForked(w.name, p) {
					failed = true
				}
				continue
			}
			runtime.GOMAXPROCS(p)
			if !w.once { // memory needs no warm-up, and a million goroutines take a while
				for i := 0; i < *warmups; i++ {
					runtime.GC()
					repetition(w) // warm-up
				}
			}
			var xs []float64
			for i := 0; i < *reps; i++ {
				runtime.GC()
				xs = append(xs, repetition(w))
			}
			mean, err := meanCI(xs)
			raw := make([]string, len(xs))
			for i, x := range xs {
				raw[i] = fmt.Sprintf("%.6g", x)
			}
			fmt.Printf("%s,%s,%d,%.6g,%.3g,%s,%d,%s\n", w.name, *implName, p, mean, err, w.unit, len(xs), strings.Join(raw, ";"))
		}
	}
	if failed {
		os.Exit(1)
	}
}

// runForked runs one workload at one GOMAXPROCS in a fresh process of this program (this process's
// flags, then -fork=false, -only and -procs, which override them: the flag package keeps a flag's
// last value) and copies its CSV line to stdout; false if that process failed, whose stderr has
// said why.
func runForked(name string, p int) bool {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchtwin: %s: %v\n", name, err)
		return false
	}
	args := append(append([]string{}, os.Args[1:]...), "-fork=false", "-only", name, "-procs", strconv.Itoa(p))
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines[1:] { // the first is the header
		fmt.Println(l)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchtwin: %s at GOMAXPROCS=%d: %v\n", name, p, err)
		return false
	}
	return true
}

// repetition runs w once, or with -mintime until that much time has passed (at least once), and
// returns the mean of the runs' scores: each run of a workload does the same number of operations,
// so the mean is the time per operation over the repetition, as a JMH iteration's score is.
func repetition(w workload) float64 {
	if *minTime <= 0 || w.once {
		return w.run()
	}
	t0 := time.Now()
	sum, n := 0.0, 0
	for n == 0 || time.Since(t0) < *minTime {
		sum += w.run()
		n++
	}
	return sum / float64(n)
}

func workloads() []workload {
	return []workload{
		{name: "spawn", unit: "ns/op", run: func() float64 { return spawn(1000000) }},
		{name: "createchain", unit: "ns/op", run: func() float64 { return createChain(100000) }},
		{name: "pingpong", unit: "ns/op", run: func() float64 { return pingPong(200000) }},
		{name: "tracepingpong tracing=off", unit: "ns/op", procs: []int{1}, run: func() float64 { return pingPong(200000) }},
		{name: "tracepingpong tracing=on", unit: "ns/op", procs: []int{1}, run: func() float64 { return tracedPingPong(200000) }},
		{name: "prodcons", unit: "ns/op", run: func() float64 { return prodCons(1000000, 128) }},
		{name: "manypairs", unit: "ns/op", run: func() float64 { return manyPairs(10000, 100) }},
		{name: "sieve", unit: "ms/op", run: func() float64 { return sieve(2000) }},
		{name: "fanout", unit: "ms/op", run: func() float64 { return fanOut(48) }},
		{name: "fanout-serial", unit: "ms/op", run: func() float64 { return fanOutSerial(48) }},
		{name: "tightloop", unit: "ms/op", procs: []int{1}, run: func() float64 { return tightLoop(5) }},
		{name: "parked", unit: "bytes/task", procs: []int{1}, once: true, run: func() float64 { return parkedInOwnProcess(*parkedN) }},
		{name: "gosched goroutines=2", unit: "ns/op", run: func() float64 { return gosched(2, 1<<20) }},
		{name: "gosched goroutines=16", unit: "ns/op", run: func() float64 { return gosched(16, 1<<20) }},
		{name: "netpingpong", unit: "ns/op", run: func() float64 { return netPingPong(2000) }},
		{name: "netecho", unit: "ns/op", run: func() float64 { return netEcho(1000, 10, 64) }},
		{name: "timerbench.afterFunc1000", unit: "us/op", run: func() float64 { return timerParallel(30, afterFunc1000) }},
		{name: "timerbench.sleep1000", unit: "us/op", run: func() float64 { return timerParallel(30, sleep1000) }},
		{name: "timerlatency delayUs=1000 sleepers=1", unit: "us/op", run: func() float64 { return timerLatency(10, time.Millisecond, 1) }},
		{name: "timerlatency delayUs=1000 sleepers=1000", unit: "us/op", run: func() float64 { return timerLatency(10, time.Millisecond, 1000) }},
		{name: "syscallcost mode=api", unit: "ns/op", run: func() float64 { return syscallCost(1 << 20) }},
		{name: "wakeupparallelsyscall delayUs=0", unit: "us/op", procs: []int{2}, run: func() float64 { return wakeupParallelSyscall(500, 0) }},
		{name: "wakeupparallelsyscall delayUs=10", unit: "us/op", procs: []int{2}, run: func() float64 { return wakeupParallelSyscall(500, 10*time.Microsecond) }},
	}
}

// netPingPong: one-byte round trips on one loopback TCP connection to an echo goroutine; ns per
// round trip (bench's NetPingPong; the connection is set up outside the timed part).
func netPingPong(n int) float64 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	b := []byte{1}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if _, err := c.Write(b); err != nil {
			panic(err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			panic(err)
		}
	}
	return float64(time.Since(t0).Nanoseconds()) / float64(n)
}

// netEcho: conns loopback connections to echo goroutines, each client goroutine writes a msg-byte
// message and reads it back, rounds times, all connections at once; ns per echoed message
// (bench's NetEcho; connecting is outside the timed part).
func netEcho(conns, rounds, msg int) float64 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, msg)
				io.CopyBuffer(c, c, buf)
			}()
		}
	}()
	cs := make([]net.Conn, conns)
	for i := range cs {
		if cs[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			panic(err)
		}
	}
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(conns)
	for _, c := range cs {
		c := c
		go func() {
			defer wg.Done()
			out := make([]byte, msg)
			back := make([]byte, msg)
			for r := 0; r < rounds; r++ {
				if _, err := c.Write(out); err != nil {
					panic(err)
				}
				if _, err := io.ReadFull(c, back); err != nil {
					panic(err)
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(t0)
	for _, c := range cs {
		c.Close()
	}
	return float64(d.Nanoseconds()) / float64(conns*rounds)
}

// spawn: one goroutine starts n goroutines that each finish at once, counted down on a WaitGroup;
// ns per goroutine (spawn + run + exit + Done). Same shape as bench's Spawn.
func spawn(n int) float64 {
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(n)
	go func() {
		for i := 0; i < n; i++ {
			go wg.Done()
		}
	}()
	wg.Wait()
	return float64(time.Since(t0).Nanoseconds()) / float64(n)
}

// createChain: each goroutine creates the next and ends; GOMAXPROCS chains side by side
// (proc_test.go BenchmarkCreateGoroutines).
func createChain(n int) float64 {
	procs := runtime.GOMAXPROCS(0)
	c := make(chan bool)
	var f func(n int)
	f = func(n int) {
		if n == 0 {
			c <- true
			return
		}
		go f(n - 1)
	}
	t0 := time.Now()
	for i := 0; i < procs; i++ {
		go f(n / procs)
	}
	for i := 0; i < procs; i++ {
		<-c
	}
	return float64(time.Since(t0).Nanoseconds()) / float64(n)
}

// pingPong: two goroutines bounce a value over two unbuffered channels; ns per round trip.
func pingPong(n int) float64 {
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v
		}
		close(pong)
	}()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		ping <- i
		<-pong
	}
	d := time.Since(t0)
	close(ping)
	return float64(d.Nanoseconds()) / float64(n)
}

// tracedPingPong: pingPong with the execution tracer on, writing to io.Discard (bench's
// TracePingPong, tracing=on, whose flight-recorder window also keeps its events in memory only);
// trace.Start and trace.Stop are outside the timed loop. The twin's Go decides what an event costs
// (Go 1.19 takes a stack trace for every block and unblock; Go 1.21+ unwinds with frame pointers).
func tracedPingPong(n int) float64 {
	if err := trace.Start(io.Discard); err != nil {
		panic(err)
	}
	defer trace.Stop()
	return pingPong(n)
}

// prodCons: one producer, one consumer, a buffered channel of capacity c; ns per message.
func prodCons(n, c int) float64 {
	ch := make(chan int, c)
	done := make(chan int)
	go func() {
		s := 0
		for v := range ch {
			s += v
		}
		done <- s
	}()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	<-done
	return float64(time.Since(t0).Nanoseconds()) / float64(n)
}

// manyPairs: pairs producer/consumer pairs, each over its own unbuffered channel, msgs messages
// per pair; ns per message (wall time / all messages).
func manyPairs(pairs, msgs int) float64 {
	var wg sync.WaitGroup
	wg.Add(pairs)
	t0 := time.Now()
	for p := 0; p < pairs; p++ {
		ch := make(chan int)
		go func() {
			for i := 0; i < msgs; i++ {
				ch <- i
			}
		}()
		go func() {
			for i := 0; i < msgs; i++ {
				<-ch
			}
			wg.Done()
		}()
	}
	wg.Wait()
	return float64(time.Since(t0).Nanoseconds()) / float64(pairs*msgs)
}

// sieve: the daisy-chain prime sieve (one goroutine per prime filter) until n primes; ms. The timed
// part is Go's sieve1.go with a generator that stops (as bench's Sieve runs it, since 2026-12-03):
// plain sends and receives on unbuffered channels.
// Its goroutines are then ended, untimed: Go never collects a blocked goroutine, so a chain left
// blocked stays reachable (bench's Sieve ends its chain the same way, its drain timed), and with -mintime
// repeating the workload, every later GC would scan a growing heap of stacks (in one run of the
// twin: the sieve at P=1 1.5x slower, 2026-12-03). So the generator counts only to the n-th prime
// and closes its channel; each filter closes its own when its input ends, and the close travels
// down the chain to the receive below.
func sieve(n int) float64 {
	limit := nthPrime(n) // untimed (well under a millisecond)
	t0 := time.Now()
	ch := make(chan int)
	go func(ch chan<- int) { // a parameter: the loop below moves ch along the chain
		for i := 2; i <= limit; i++ {
			ch <- i
		}
		close(ch)
	}(ch)
	for i := 0; i < n; i++ {
		prime := <-ch
		ch1 := make(chan int)
		go filter(ch, ch1, prime)
		ch = ch1
	}
	d := time.Since(t0)
	for range ch { // nothing is left to come: the n-th prime was the last number sent
	}
	return float64(d.Nanoseconds()) / 1e6
}

func filter(in <-chan int, out chan<- int, prime int) {
	for i := range in {
		if i%prime != 0 {
			out <- i
		}
	}
	close(out)
}

// nthPrime: the n-th prime (2 is the first), by trial division.
func nthPrime(n int) int {
	p, found := 1, 0
	for found < n {
		p++
		prime := true
		for d := 2; d*d <= p; d++ {
			if p%d == 0 {
				prime = false
				break
			}
		}
		if prime {
			found++
		}
	}
	return p
}

// spin is the same xorshift loop as Work.spin: no calls in its body, and never inlined (as Work.spin),
// so that the serial loop and every goroutine run the one compiled copy.
//
//go:noinline
func spin(iterations int64, seed int64) int64 {
	x := seed | 1
	for i := int64(0); i < iterations; i++ {
		x ^= x << 13
		x ^= int64(uint64(x) >> 7)
		x ^= x << 17
	}
	return x
}

// unitIters: one fan-out piece, a fixed number of rounds (about 1 ms on the reference machine), the
// same as the JMH class's Work.UNIT_ITERATIONS, so that the serial and parallel runs of every
// process, and gort's, do the same work.
const unitIters = 600000

var sinks [64]int64

// calibrate: iterations of spin that take target on this thread (fastest of several runs).
func calibrate(target time.Duration) int64 {
	n := int64(1000000)
	best := math.MaxFloat64
	for round := 0; round < 7; round++ {
		t0 := time.Now()
		sinks[0] += spin(n, int64(round))
		dt := time.Since(t0)
		best = math.Min(best, float64(dt.Nanoseconds())/float64(n))
		if dt < 20*time.Millisecond {
			n *= 2
		}
	}
	return int64(float64(target.Nanoseconds()) / best)
}

// fanOut: one goroutine starts tasks goroutines of unitIters rounds of CPU work each and waits; ms.
func fanOut(tasks int) float64 {
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(tasks)
	for i := 0; i < tasks; i++ {
		k := i
		go func() {
			sinks[k] = spin(unitIters, int64(k))
			wg.Done()
		}()
	}
	wg.Wait()
	return float64(time.Since(t0).Nanoseconds()) / 1e6
}

// fanOutSerial: the same work one piece after the other (the ideal's numerator).
func fanOutSerial(tasks int) float64 {
	t0 := time.Now()
	for k := 0; k < tasks; k++ {
		sinks[k] = spin(unitIters, int64(k))
	}
	return float64(time.Since(t0).Nanoseconds()) / 1e6
}

var hogIters int64

// tightLoop: on one P a hog runs 40 ms of call-free work; a short goroutine made runnable as the
// hog starts records how long it waited; mean over rounds, ms. The short G is queued first and the
// hog goes to runnext, so the hog runs first and the short G waits for its preemption (async
// preemption after 10 ms since Go 1.14) or its end (GODEBUG=asyncpreemptoff=1).
func tightLoop(rounds int) float64 {
	if hogIters == 0 {
		hogIters = calibrate(40 * time.Millisecond)
	}
	total := 0.0
	for r := 0; r < rounds; r++ {
		hogDone := make(chan struct{})
		shortDone := make(chan time.Duration, 1)
		t0 := time.Now()
		go func() { shortDone <- time.Since(t0) }()
		go func() {
			sinks[1] = spin(hogIters, 7)
			close(hogDone)
		}()
		d := <-shortDone
		<-hogDone
		total += float64(d.Nanoseconds()) / 1e6
	}
	return total / float64(rounds)
}

// parkedInOwnProcess runs parked(n) in a fresh process of this program (GOMAXPROCS=1) and returns its
// figure. Since Go 1.19 a new goroutine's stack starts at the average size of the stacks the last GC
// scanned (rounded up to a power of two), so in this process the figure would depend on the
// workloads run before it: 4,192 bytes per goroutine after the whole twin, 2,568 alone (2026-12-03).
func parkedInOwnProcess(n int) float64 {
	self, err := os.Executable()
	if err != nil {
		panic(fmt.Sprintf("parked: %v", err))
	}
	cmd := exec.Command(self, "-parked-process", "-parked", strconv.Itoa(n))
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		panic(fmt.Sprintf("parked: %v", err))
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		panic(fmt.Sprintf("parked: %q: %v", out, err))
	}
	return v
}

// parked: heap + stack bytes per goroutine with n goroutines blocked on a channel receive, after GC.
func parked(n int) float64 {
	ch := make(chan int)
	var ready int64
	var m0, m1 runtime.MemStats
	base := runtime.NumGoroutine() // the runtime's own (a fresh process: parkedInOwnProcess)
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for i := 0; i < n; i++ {
		go func() {
			atomic.AddInt64(&ready, 1)
			<-ch
		}()
	}
	for atomic.LoadInt64(&ready) < int64(n) || runtime.NumGoroutine() < base+n {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the last ones block after counting
	runtime.GC()
	runtime.ReadMemStats(&m1)
	perTask := float64((m1.HeapAlloc+m1.StackInuse)-(m0.HeapAlloc+m0.StackInuse)) / float64(n)
	close(ch)
	for runtime.NumGoroutine() > base {
		time.Sleep(time.Millisecond)
	}
	return perTask
}

// gosched: k goroutines call runtime.Gosched, n calls in all; ns per Gosched. Same shape as
// bench's Gosched (goroutines = k, SWITCHES = n).
func gosched(k, total int) float64 {
	n := total / k
	var wg sync.WaitGroup
	wg.Add(k)
	t0 := time.Now()
	for i := 0; i < k; i++ {
		go func() {
			for j := 0; j < n; j++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
	return float64(time.Since(t0).Nanoseconds()) / float64(k*n)
}

func parseProcs(s string) []int {
	if s == "" {
		ps := []int{1, 2}
		if c := runtime.NumCPU(); c != 1 && c != 2 {
			ps = append(ps, c)
		}
		return ps
	}
	var ps []int
	for _, f := range strings.Split(s, ",") {
		var p int
		if _, err := fmt.Sscan(f, &p); err != nil || p < 1 {
			fmt.Fprintf(os.Stderr, "bad -procs value %q\n", f)
			os.Exit(2)
		}
		ps = append(ps, p)
	}
	return ps
}

func selected(name string) bool {
	if *only == "" {
		return true
	}
	for _, o := range strings.Split(*only, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// meanCI returns the mean and the half-width of its 99.9% confidence interval (Student's t).
func meanCI(xs []float64) (float64, float64) {
	n := float64(len(xs))
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	return mean, tQuantile9995(len(xs)-1) * sd / math.Sqrt(n)
}

// tQuantile9995: the 0.9995 quantile of Student's t with df degrees of freedom.
func tQuantile9995(df int) float64 {
	table := []float64{636.62, 31.599, 12.924, 8.610, 6.869, 5.959, 5.408, 5.041, 4.781, 4.587,
		4.437, 4.318, 4.221, 4.140, 4.073, 4.015, 3.965, 3.922, 3.883, 3.850}
	if df <= len(table) {
		return table[df-1]
	}
	return 3.291
}
