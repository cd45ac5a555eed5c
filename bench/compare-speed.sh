#!/usr/bin/env bash
# Issue 19's before/after comparison, for a quiet machine: the switch-bound workloads and the
# parked-memory workload, each jar in turn, interleaved per benchmark so that drift hits both.
#
#   bench/compare-speed.sh BEFORE.jar AFTER.jar [OUT_DIR]
#
# BEFORE.jar / AFTER.jar: bench/target/benchmarks.jar built at each commit (e.g. main and
# feat-speed: `./gort mvn -q -pl bench -am package -DskipTests`, then copy the jar away).
# COMPARE_ONLY=regex runs only the named workloads (pingpong, gosched, prodcons, sieve, manypairs,
# chain, spawn, parked); COMPARE_JMH replaces the JMH options (default: 3 forks, 5 x 1 s warm-up, 10 x 1 s measurement:
# long enough that the 99.9 % intervals of the ping-pong/gosched figures are well under 10 %).
# Writes OUT_DIR/{before,after}-NAME.csv and prints a table: score and error per jar, and the
# after/before ratio. Counts (carrier unparks, steals per round trip) come from the test suite
# instead: SwitchCountTest, or by hand:
#   java -Dgort.debug.counts=true -Dgort.gomaxprocs=2 -cp <runtime classes+test-classes> \
#        dev.gort.runtime.SwitchCountProg pingpong:100000
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
export LC_ALL=C
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
before="$1"
after="$2"
out="${3:-$here/results/compare-speed}"
mkdir -p "$out"
JAVA="$("$root/gort" jdk)/bin/java"
read -r -a jmh <<< "${COMPARE_JMH:--f 3 -wi 5 -w 1s -i 10 -r 1s}"

# name|JMH regex|JMH -p parameters
benches=(
  "pingpong|dev.gort.bench.PingPong.gort\$|-p procs=1,2"
  "gosched|dev.gort.bench.Gosched.gosched\$|-p impl=gort -p goroutines=2,16 -p procs=1,2"
  "prodcons|dev.gort.bench.ProdCons.gort\$|-p procs=1,2"
  "sieve|dev.gort.bench.Sieve.gort\$|-p procs=1,2"
  "manypairs|dev.gort.bench.ManyPairs.gort\$|-p procs=1,2"
  "chain|dev.gort.bench.CreateChain.chain\$|-p impl=gort -p gomaxprocs=1,2"
  "spawn|dev.gort.bench.Spawn.spawn\$|-p impl=gort -p procs=1,2"
  "parked|dev.gort.bench.Parked.park\$|-p impl=gort,gort-chan -p tasks=1000000"
)

for b in "${benches[@]}"; do
  IFS='|' read -r name regex params <<< "$b"
  [[ "$name" =~ ${COMPARE_ONLY:-.} ]] || continue
  for side in before after; do
    jar="$before"
    [ "$side" = after ] && jar="$after"
    opts=("${jmh[@]}")
    [ "$name" = parked ] && opts=(-f 1 -wi 1 -i 3) # single-shot: memory, not time
    # shellcheck disable=SC2086
    "$JAVA" -jar "$jar" "$regex" $params "${opts[@]}" -rf csv -rff "$out/$side-$name.csv" > "$out/$side-$name.log" 2>&1 \
      || echo "compare-speed: $side $name failed (see $out/$side-$name.log)" >&2
  done
done

printf '%-48s %-24s %18s %18s %8s\n' benchmark params before after ratio
for b in "${benches[@]}"; do
  IFS='|' read -r name _ _ <<< "$b"
  [ -f "$out/before-$name.csv" ] && [ -f "$out/after-$name.csv" ] || continue
  paste -d'\n' <(tail -n +2 "$out/before-$name.csv") <(tail -n +2 "$out/after-$name.csv") | awk -F',' '
    function unq(s) { gsub(/"/, "", s); return s }
    # JMH sums an AuxCounters secondary result (parked bytesPerTask, "#") over single-shot
    # iterations: report the mean per iteration instead (Samples is column 4).
    NR % 2 == 1 { bn = unq($1); bs = $5; be = $6; if (unq($7) == "#" && $4 > 0) bs = bs / $4;
                  np = ""; for (i = 8; i <= NF; i++) np = np unq($i) " "; next }
    { if (unq($7) == "#" && $4 > 0) $5 = $5 / $4;
      r = (bs + 0 != 0) ? $5 / bs : 0;
      printf "%-48s %-24s %10.1f ±%6.1f %10.1f ±%6.1f %8.2f\n", bn, np, bs, be, $5, $6, r }'
done
