// Go's side of SwitchCounts' counts, not part of the build: N ping-pong round trips over two
// unbuffered channels, or N Gosched calls shared by two goroutines, with the process's CPU time and
// context switches around them (getrusage): how often Go's runtime puts a thread to sleep per
// operation. Run: GOMAXPROCS=2 go run bench/probes/switch_rusage.go 5000000 pingpong
// (bench/results/HISTORY.md, 2026-12-07).
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	what := os.Args[2]
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	switch what {
	case "pingpong":
		a, b := make(chan int), make(chan int)
		go func() {
			for v := range a {
				b <- v
			}
		}()
		for i := 0; i < n; i++ {
			a <- i
			<-b
		}
	case "gosched":
		done := make(chan bool)
		for g := 0; g < 2; g++ {
			go func() {
				for i := 0; i < n/2; i++ {
					runtime.Gosched()
				}
				done <- true
			}()
		}
		<-done
		<-done
	}
	el := time.Since(t0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := float64((ru1.Utime.Nano()+ru1.Stime.Nano())-(ru0.Utime.Nano()+ru0.Stime.Nano())) / float64(n)
	fmt.Printf("%s P=%d: %d ops, wall %.0f ns each, cpu %.0f ns each, voluntary ctxsw %.4f each, involuntary %.4f each\n",
		what, runtime.GOMAXPROCS(0), n, float64(el.Nanoseconds())/float64(n), cpu,
		float64(ru1.Nvcsw-ru0.Nvcsw)/float64(n), float64(ru1.Nivcsw-ru0.Nivcsw)/float64(n))
}
