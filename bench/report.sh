#!/usr/bin/env bash
# The whole comparison: gort vs virtual threads vs platform threads (JMH,
# bench/target/benchmarks.jar) vs Go (bench/go, when a Go toolchain is installed). Writes
# bench/results/latest.md (table + machine description), latest.svg (plot) and the raw files under
# bench/results/raw/ (replacing the committed ones). Run it as `./gort bench` (which builds the jar first).
#
#   ./gort bench [--short]     the short budget (about 10 minutes on 2 cores): 1 fork, 1 x 500 ms
#                              warm-up, 3 x 500 ms measurement, 3 Go repetitions of >= 500 ms;
#                              for quick checks
#   ./gort bench --long        the precise budget (about 140 minutes on 2 cores for the whole suite):
#                              5 forks, 3 x 1 s warm-up, 5 x 1 s measurement, 15 Go repetitions
#                              of >= 1 s (a Go repetition runs its workload until JMH's iteration
#                              time has passed, as an iteration does), in 5 rounds: the per-P JMH
#                              passes (1 fork per benchmark) and the Go twin (3 repetitions per
#                              workload, a process each) run 5 times in turn, so that a benchmark's
#                              forks and its Go twin's repetitions are spread over the whole run
#                              (a slow stretch of the host lasts seconds to minutes: bench/README.md)
#   ./gort bench --help        this text (runs nothing)
# Figures: median +- the farther end of its 95 % distribution-free interval (as Go's benchstat;
# bench/README.md); either budget's table marks (†) every figure whose interval reaches past +-10 %.
# Environment (either budget):
#   BENCH_INCLUDE=regex        only JMH benchmarks matching regex (default: the whole suite)
#   BENCH_PROCS="1 2"          GOMAXPROCS values (default: 1, 2 and the machine's cores)
#   BENCH_ROUNDS=N             rounds of the per-P passes and the Go twin (default: 5 with --long,
#                              1 with --short); BENCH_JMH, BENCH_GO_REPS then give one round's share
#   BENCH_JMH="..."            JMH options replacing the budget's (with rounds: each round's)
#   BENCH_GO_REPS=N            Go twin repetitions replacing the budget's (with rounds: each round's)
#   BENCH_GO_MINTIME=D         a Go repetition's least duration replacing the budget's (Go syntax:
#                              1s, 500ms; 0 = one run of the workload, however short)
#   BENCH_GO_ONLY=a,b          only these Go twin workloads (names as in bench/go/main.go; default: all)
#   BENCH_PARKED=1000000       tasks parked at once in the parked-memory workload
#   BENCH_FULL=1               no budget cuts (every TimerLatency delay)
#!end of help
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
export LC_ALL=C

usage() { sed -n '2,/^#!end of help/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
budget=short
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --short) budget=short ;;
    --long) budget=long ;;
    *) echo "gort bench: unknown argument '$1' (nothing was run)" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

JAVA="${JAVA_HOME:-}/bin/java"
if [ -z "${JAVA_HOME:-}" ] || [ ! -x "$JAVA" ]; then JAVA="$("$root/gort" jdk)/bin/java"; fi
jar="$here/target/benchmarks.jar"
[ -f "$jar" ] || { echo "bench/report.sh: $jar missing: run ./gort bench (it builds first)" >&2; exit 1; }

results="$here/results"
raw="$results/raw"
# One run at a time: a second would write the same raw/ files, and both runs' figures would be
# measured on a shared machine (the lock file, bench/results/.bench.lock, is not committed).
if command -v flock >/dev/null 2>&1; then
  exec 9> "$results/.bench.lock"
  flock -n 9 || { echo "gort bench: another ./gort bench is running (bench/results/.bench.lock is held); nothing was run" >&2; exit 1; }
fi
# the commit measured (bench/results itself, rewritten below, does not make it dirty)
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
git -C "$root" diff --quiet HEAD -- . ':(exclude)bench/results' 2>/dev/null || commit="$commit (dirty)"

cores="$(nproc)"
procs="${BENCH_PROCS:-1 2}"
if [ -z "${BENCH_PROCS:-}" ] && [ "$cores" -ne 1 ] && [ "$cores" -ne 2 ]; then procs="$procs $cores"; fi
include="${BENCH_INCLUDE:-dev.gort.bench.}"
parked="${BENCH_PARKED:-1000000}"
# A budget: the JMH options of the passes that run once, the rounds, and one round's JMH options and
# Go repetitions (the long budget's 5 forks and 15 repetitions, a fifth per round). The Go twin's
# untimed repetitions per process: JMH's warm-up iterations, and at least 2, since one early
# repetition in a Go process runs 25-45 % slower than the rest (bench/README.md, "Rounds").
if [ "$budget" = long ]; then
  default_jmh="-f 5 -wi 3 -w 1s -i 5 -r 1s"; default_rounds=5
  default_round_jmh="-f 1 -wi 3 -w 1s -i 5 -r 1s"; default_reps=3; default_gomin=1s; gowarm=3
else
  default_jmh="-f 1 -wi 1 -w 500ms -i 3 -r 500ms"; default_rounds=1
  default_round_jmh="$default_jmh"; default_reps=3; default_gomin=500ms; gowarm=2
fi
rounds="${BENCH_ROUNDS:-$default_rounds}"
case "$rounds" in ''|*[!0-9]*|0) echo "gort bench: BENCH_ROUNDS must be a positive integer, not '$rounds' (nothing was run)" >&2; exit 2 ;; esac
read -r -a jmh <<< "${BENCH_JMH:-$default_jmh}"
read -r -a round_jmh <<< "${BENCH_JMH:-$default_round_jmh}"
goreps="${BENCH_GO_REPS:-$default_reps}"
gomin="${BENCH_GO_MINTIME:-$default_gomin}"
jmh+=(-to 2min -foe false)
round_jmh+=(-to 2min -foe false)
# Every setting checked: only now the last run's raw files make way for this one's.
rm -rf "$raw"
mkdir -p "$raw"
log="$raw/run.log"
: > "$log"
# -XX:+UseTransparentHugePages: the heap in 2 MB pages, so that first touches of fresh heap (dear on
# a virtual machine) do not land in some iterations and not others (bench/README.md, "Huge pages").
base_jvm="-XX:+UseG1GC -XX:+UseTransparentHugePages --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -Duser.language=en"

# gort's preemption agent (the preempt work): present => one tight-loop pass per strategy.
agent=""
for a in "$root"/agent/target/gort-agent*.jar "$root"/agent/target/*agent*.jar; do
  case "$a" in *sources*|*original*|*javadoc*) continue ;; esac
  [ -f "$a" ] && { agent="$a"; break; }
done

gobin="$("$here/go/run.sh" --version 2>/dev/null || true)"
start=$(date +%s)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "commit: $commit"
  echo "command: ${BENCH_INCLUDE:+BENCH_INCLUDE='$BENCH_INCLUDE' }./gort bench --$budget"
  echo "CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)$(lscpu 2>/dev/null | grep -q '^Hypervisor vendor' && echo " (virtual machine: $(lscpu | sed -n 's/^Hypervisor vendor: *//p'))")"
  echo "cores: $cores"
  echo "memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  echo "OS: $(uname -sr)"
  echo "JDK: $("$JAVA" -version 2>&1 | sed -n '2p')"
  echo "JVM flags (every fork): $base_jvm"
  echo "transparent huge pages (host): $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
  echo "GC and loop polls: $("$JAVA" -XX:+UseG1GC -XX:+PrintFlagsFinal -version 2>/dev/null | awk '$2 ~ /^(UseG1GC|LoopStripMiningIter|UseCountedLoopSafepoints)$/ {printf "%s=%s ", $2, $4}')"
  echo "Go: ${gobin:-not installed (Go twin skipped)}"
  if [ -n "$agent" ]; then echo "gort preemption agent: ${agent#$root/} (tight-loop passes only)";
  else echo "gort preemption agent: not built (tight loop runs without polls: preempt=default)"; fi
  echo "rounds: $rounds (the per-P JMH passes, then the Go twin, $rounds time(s) in turn)"
  echo "JMH options (per-P passes, each round): ${round_jmh[*]}"
  echo "JMH options (passes run once): ${jmh[*]}"
  echo "Go twin repetitions (each round): $goreps, each at least $gomin, after $gowarm untimed ones in each process"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$raw/machine.txt"
cat "$raw/machine.txt"

# The host's CPU time over one phase (a JMH pass, the Go twin), from /proc/stat's "cpu" line:
# busy (user, nice, system, irq, softirq), idle (idle, iowait) and steal (time the hypervisor
# gave this virtual machine's CPUs to others), in clock ticks; and the page faults the kernel
# served over the phase (/proc/vmstat's pgfault, every process). A figure that moves between runs
# with the code unchanged (bench/results/HISTORY.md) can then be checked against the host:
# steal above a few per cent means the CPUs were not all ours, and a first touch of fresh memory
# is dear on a virtual machine (about 10 us per 4 KB page on the reference one).
cpu_ticks() {
  awk '/^cpu / {c = ($2+$3+$4+$7+$8) " " ($5+$6) " " $9} /^pgfault / {f = $2} END {print (c == "" ? "0 0 0" : c), f + 0}' \
    /proc/stat /proc/vmstat 2>/dev/null || echo "0 0 0 0"
}
phase_cpu() { # phase_cpu <name> <ticks before> <seconds before>: a machine.txt line
  local name="$1" b0 i0 s0 f0 b1 i1 s1 f1
  read -r b0 i0 s0 f0 <<< "$2"
  read -r b1 i1 s1 f1 <<< "$(cpu_ticks)"
  awk -v n="$name" -v w="$(( $(date +%s) - $3 ))" -v b=$(( b1 - b0 )) -v i=$(( i1 - i0 )) -v st=$(( s1 - s0 )) \
    -v pf=$(( ${f1:-0} - ${f0:-0} )) \
    'BEGIN { t = b + i + st; if (t > 0) printf "host CPU, %s: %d s, busy %.1f %%, steal %.1f %%, page faults %.0f (%.0f per s)\n", n, w, 100 * b / t, 100 * st / t, pf, (w > 0 ? pf / w : pf) }' \
    >> "$raw/machine.txt"
}

bench() { # bench <pass name> <jvm args> <jmh args...>; JMH_OPTS (an array) overrides the budget
  local name="$1" jvm="$2"; shift 2
  local opts=("${jmh[@]}")
  [ -n "${JMH_OPTS+x}" ] && opts=("${JMH_OPTS[@]}")
  echo "== JMH $name: $*" | tee -a "$log"
  local t0 c0; t0=$(date +%s); c0="$(cpu_ticks)"
  # -Djmh.ignoreLock: other JMH runs on the machine are recorded (load average), not waited for
  "$JAVA" -Djmh.ignoreLock=true -jar "$jar" "$@" "${opts[@]}" -jvmArgsAppend "$jvm" -rf json -rff "$raw/jmh-$name.json" >> "$log" 2>&1 \
    || echo "   (JMH exited with $?; see $log)"
  phase_cpu "JMH $name" "$c0" "$t0"
}

# Budget cuts (BENCH_FULL=1 lifts them): TimerLatency at one delay only; the preemption-overhead
# kernels outside gort only (PreemptOverheadInGort runs the same kernels inside goroutines).
cuts=(-p delayUs=1000)
preempt_classes='dev.gort.bench.Preempt(Overhead|Latency)[.]'
if [ -n "${BENCH_FULL:-}" ]; then cuts=(); preempt_classes='dev.gort.bench.Preempt'; fi

# 1. Rounds: every workload at each GOMAXPROCS value (virtual threads get as many carriers), then
#    the Go twin; with more than one round, each round's files are marked .rN and Report merges
#    them. (TightLoop, Parked and the P-independent Preempt* classes have passes of their own, below;
#    StreamHookCost, the agent's stream hook alone, and JdkLineEcho, a server on the JDK's sockets
#    under the agent against Go's, run only by hand: bench/README.md.)
goonly=(); [ -n "${BENCH_GO_ONLY:-}" ] && goonly=(-only "$BENCH_GO_ONLY")
for ((r = 1; r <= rounds; r++)); do
  mark=""; [ "$rounds" -gt 1 ] && mark=".r$r"
  for p in $procs; do
    # -prof gc: bytes allocated per operation (all threads), a figure the machine's load does not blur
    JMH_OPTS=("${round_jmh[@]}")
    bench "p$p$mark" "$base_jvm -Djdk.virtualThreadScheduler.parallelism=$p" "$include" \
      -e 'dev.gort.bench.TightLoop|dev.gort.bench.Parked[.]|dev.gort.bench.Preempt|dev.gort.bench.WakeupParallelSyscall|dev.gort.bench.StreamHookCost|dev.gort.bench.JdkLineEcho' \
      -p gomaxprocs="$p" -p procs="$p" "${cuts[@]}" -prof gc
    unset JMH_OPTS
  done
  # The Go twin (skips itself when no Go toolchain is installed).
  echo "== Go twin${mark:+, round $r}" | tee -a "$log"
  gt0=$(date +%s); gc0="$(cpu_ticks)"
  "$here/go/run.sh" "$raw/go$mark.csv" -procs "$(echo $procs | tr ' ' ',')" -reps "$goreps" -warmups "$gowarm" -mintime "$gomin" -parked "$parked" "${goonly[@]}" 2>> "$log" || echo "   (Go twin failed; see $log)"
  [ -s "$raw/go$mark.csv" ] && phase_cpu "Go twin$mark" "$gc0" "$gt0"
done

# Whether BENCH_INCLUDE selects a pass of its own (its class): matched against the class's name
# followed by "." and a method, the shape of the full names JMH matches, so that `Parked[.]` selects
# the parked pass as `PingPong[.]` selects the ping-pong. A pattern that names one of the class's
# methods does not select its pass.
selected() { [[ "$1.x" =~ $include ]]; }

# 1b. Preemption overhead and latency per strategy (instrumented in-process; no P parameter).
if selected dev.gort.bench.PreemptOverhead && [ -f "$here/src/main/java/dev/gort/bench/PreemptOverhead.java" ]; then
  bench "preempt" "$base_jvm" "$preempt_classes"
fi

# 1c. Go's BenchmarkWakeupParallelSyscall shape (needs 2 Ps or more): the smallest and largest delay.
if selected dev.gort.bench.WakeupParallelSyscall && [ -f "$here/src/main/java/dev/gort/bench/WakeupParallelSyscall.java" ] && [ "$cores" -ge 2 ]; then
  wdelays=(-p delayUs=0,10)
  [ -n "${BENCH_FULL:-}" ] && wdelays=()
  bench "syscall" "$base_jvm" 'dev.gort.bench.WakeupParallelSyscall' -p gomaxprocs=2 "${wdelays[@]}"
fi

# 2. Tight loop on one P / one carrier: gort per preemption strategy, then virtual threads.
if selected dev.gort.bench.TightLoop; then
  if [ -n "$agent" ]; then
    for s in none entry backedge budget; do
      # the agent skips dev/gort/ classes: force the hog's loop (Work.spin) in
      bench "tight-$s" "$base_jvm -Djdk.virtualThreadScheduler.parallelism=1 -javaagent:$agent -Dgort.preempt=$s -Dgort.agent.include=dev/gort/bench/Work" \
        'TightLoop' -p impl=gort -p gomaxprocs=1 -p preempt="$s"
    done
  else
    bench "tight-default" "$base_jvm -Djdk.virtualThreadScheduler.parallelism=1" 'TightLoop' -p impl=gort -p gomaxprocs=1 -p preempt=default
  fi
  bench "tight-vthread" "$base_jvm -Djdk.virtualThreadScheduler.parallelism=1" 'TightLoop' -p impl=vthread -p gomaxprocs=1 -p preempt=default
fi

# 3. Parked memory (single shots; a million tasks need a bigger heap).
if selected dev.gort.bench.Parked; then
  # Two warm-up shots: a park path not yet compiled by C2 freezes bigger frames (a goroutine parked
  # in a channel receive, 2026-12-03: 480 bytes in the first and second shots, 424 from the third).
  JMH_OPTS=(-f 1 -wi 2 -i 2 -to 5min -foe false)
  bench "parked" "$base_jvm -Xmx6g -Djdk.virtualThreadScheduler.parallelism=$cores" 'Parked' -p gomaxprocs="$cores" -p tasks="$parked"
  unset JMH_OPTS
fi

{
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "wall time: $(( $(date +%s) - start )) s"
} >> "$raw/machine.txt"

"$JAVA" -cp "$jar" dev.gort.bench.report.Report "$raw" "$results/latest"
grep -E '^\| (spawn|pingpong|prodcons|sieve|fan-out|parked|buffered|ping-pong)' "$results/latest.md" | head -n 20 || true
