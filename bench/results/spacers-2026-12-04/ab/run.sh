#!/usr/bin/env bash
# The carrier spacers' A/B of 2026-12-04: one benchmarks.jar (built from the tree committed as
# 85ad188), -Dgort.carrier.spacers=2 and =0 alternated three times, each 2 forks of every
# switch-bound gort benchmark at GOMAXPROCS=2. summary.txt: python over the six JSON files
# (median of all iterations, and each fork's mean).
cd "$(dirname "$0")/../../../.."
J=$(./gort jdk)/bin/java
JAR=bench/target/benchmarks.jar
for round in 1 2 3; do
  for n in 2 0; do
    $J -jar $JAR 'dev.gort.bench.(PingPong.gort|ManyPairs.gort|Gosched.gosched|Sieve.gort)$' \
      -p procs=2 -p impl=gort -p goroutines=2 -f 2 -wi 3 -w 1s -i 5 -r 1s \
      -jvmArgsAppend "--add-exports java.base/jdk.internal.vm=ALL-UNNAMED -XX:+UseG1GC -Dgort.carrier.spacers=$n" \
      -rf json -rff bench/results/spacers-2026-12-04/ab/r$round-s$n.json
  done
done
