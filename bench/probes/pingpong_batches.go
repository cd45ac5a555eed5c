// Go's side of PingPongBatchesProbe, not part of the build: an unbuffered ping-pong timed in
// batches of 64 round trips, three runs of N batches, and the distribution of the last run's
// batches (ns per round trip): whether the time above the median batch comes from a few slow
// batches (stalls) or from every batch. Run: GOMAXPROCS=2 go run bench/probes/pingpong_batches.go 200000
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"time"
)

const batch = 64

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	t := make([]int64, n)
	for rep := 0; rep < 3; rep++ {
		ping, pong := make(chan int), make(chan int)
		go func() {
			for v := range ping {
				pong <- v
			}
		}()
		prev := time.Now()
		for b := 0; b < n; b++ {
			for i := 0; i < batch; i++ {
				ping <- 1
				<-pong
			}
			now := time.Now()
			t[b] = int64(now.Sub(prev))
			prev = now
		}
		close(ping)
	}
	s := append([]int64(nil), t...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var total int64
	for _, x := range t {
		total += x
	}
	per := func(x int64) float64 { return float64(x) / batch }
	med := s[n/2]
	var slowT int64
	slowN := 0
	for _, x := range t {
		if x > 2*med {
			slowT += x - med
			slowN++
		}
	}
	fmt.Printf("P=%d mean %.1f ns/rt; batch ns/rt p10 %.1f p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f\n",
		runtime.GOMAXPROCS(0), float64(total)/float64(n)/batch, per(s[n/10]), per(med), per(s[n*9/10]),
		per(s[n*99/100]), per(s[n*999/1000]), per(s[n-1]))
	fmt.Printf("  batches > 2x median: %d of %d; their excess %.1f ns per rt overall; excess of all batches over the median %.1f ns/rt\n",
		slowN, n, float64(slowT)/float64(n)/batch, (float64(total)-float64(med)*float64(n))/float64(n)/batch)
}
