#!/usr/bin/env bash
# Runs the Go twin (bench/go) and writes its CSV to $1 (default: stdout). Skips cleanly, with a
# message and exit status 0, when no Go toolchain is installed (Debian: apt-get install golang-1.19-go).
# Extra arguments go to the program (e.g. -procs 1,2 -reps 3 -only pingpong,sieve).
# run.sh --version prints the toolchain's version (nothing, status 0, when there is none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:--}"; shift || true

GO="${GO:-}"
if [ -z "$GO" ]; then
  if command -v go >/dev/null 2>&1; then GO="$(command -v go)";
  else for c in /usr/lib/go/bin/go /usr/lib/go-*/bin/go /usr/local/go/bin/go; do [ -x "$c" ] && GO="$c"; done; fi
fi
if [ -z "$GO" ]; then
  echo "bench/go: no Go toolchain found (go on PATH, /usr/lib/go-*/bin/go, /usr/local/go); skipping the Go twin" >&2
  exit 0
fi

if [ "$out" = "--version" ]; then "$GO" version; exit 0; fi

bin="$here/target/benchtwin"
mkdir -p "$here/target"
( cd "$here" && GOFLAGS=-mod=mod GOCACHE="${GOCACHE:-$here/target/gocache}" "$GO" build -o "$bin" . )
echo "bench/go: $("$GO" version)" >&2

dest=/dev/stdout
[ "$out" = "-" ] || dest="$out"
{
  "$bin" "$@"
  # Without async preemption (Go before 1.14): the tight loop's short goroutine waits for the hog.
  if [[ " $* " != *" -only "* || " $* " == *tightloop* ]]; then
    GODEBUG=asyncpreemptoff=1 "$bin" "$@" -impl go-nopreempt -only tightloop | tail -n +2
  fi
} > "$dest"
