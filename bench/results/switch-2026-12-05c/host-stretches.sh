#!/bin/bash
# Per cycle, on CPU 0 and then CPU 1 (taskset -c): a JMH fork of gort's P=1 ping-pong, the Go 1.19
# twin's P=1 ping-pong and the raw continuation floor (SwitchFloor frames=3), each pinned to that CPU.
# Run from the repository root after ./gort bench has built the jar and the twin:
#   bash bench/results/switch-2026-12-05c/host-stretches.sh 24 > host-stretches.txt
# (2026-12-05, 05:31-05:45Z, the jar built at 359c8da and the twin built before -warmups existed: one
# untimed repetition with no runtime.GC() before it, hence its slow second timed repetition; the
# -warmups 1 below is the nearest today. bench/README.md, "Rounds", reads the output.)
J="$(./gort jdk)/bin/java"
JAR=bench/target/benchmarks.jar
TW=bench/go/target/benchtwin
jmh() { local c=$1; shift; taskset -c $c $J -Djmh.ignoreLock=true -jar $JAR "$@" -f 1 -wi 2 -i 3 -jvmArgsAppend "-XX:+UseG1GC -XX:+UseTransparentHugePages --add-exports java.base/jdk.internal.vm=ALL-UNNAMED" 2>&1 | grep -oE '^Iteration.*ns/op' | awk '{printf "%.0f ", $(NF-1)}'; }
st() { grep "^cpu$1 " /proc/stat | awk '{print $4+$7+$8, $9}'; }
for i in $(seq 1 $1); do
  for c in 0 1; do
    s0=$(st $c)
    g=$(jmh $c 'dev.gort.bench.PingPong.gort$' -p procs=1)
    go=$(taskset -c $c $TW -procs 1 -reps 3 -warmups 1 -mintime 1s -only pingpong 2>&1 | tail -1 | cut -d, -f8 | tr ';' ' ')
    f=$(jmh $c 'dev.gort.bench.SwitchFloor' -p frames=3)
    s1=$(st $c)
    echo "$(date +%H:%M:%S) c$i cpu$c gort[$g] go[$go] floor[$f] sys+irq+softirq/steal before/after [$s0][$s1]"
  done
done
