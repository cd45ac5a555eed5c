#!/usr/bin/env bash
# Runs the Go twin (bench/go) and writes its CSV to $1 (default: stdout). Skips cleanly, with a
# message and exit status 0, when no Go toolchain is installed (Debian: apt-get install golang-1.19-go).
# Extra arguments go to the program (e.g. -procs 1,2 -reps 3 -only pingpong,sieve).
# run.sh --version prints the toolchains' versions (nothing, status 0, when there is none).
#
# Two twins when two Go versions are installed. The baseline twin (rows with impl "go", the column
# the issues' targets name) is built with $GO, else the go on PATH, else the OLDEST of Debian's
# /usr/lib/go-*/bin/go (golang-1.19-go on bookworm), else /usr/lib/go/bin/go or /usr/local/go. The
# second twin (impl "go1.NN") is the same program built with $GO_SECOND, else with the NEWEST of
# Debian's /usr/lib/go-*/bin/go, when that is another version than the baseline's (bookworm-backports
# has golang-1.23-go); GO_SECOND=none skips it, and a second toolchain that does not work is skipped
# with a warning (the baseline's rows are written all the same). Go changed the scheduler after 1.19
# (e.g. Gosched wakes an idle P since 1.21, as gort does), so the newer twin is the closer one to
# the Go that gort ports.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:--}"; shift || true

debian=()
for c in /usr/lib/go-*/bin/go; do [ -x "$c" ] && debian+=("$c"); done
if [ ${#debian[@]} -gt 0 ]; then
  mapfile -t debian < <(printf '%s\n' "${debian[@]}" | sort -V)
fi

GO="${GO:-}"
if [ -z "$GO" ]; then
  if command -v go >/dev/null 2>&1; then GO="$(command -v go)"
  elif [ ${#debian[@]} -gt 0 ]; then GO="${debian[0]}"
  else for c in /usr/lib/go/bin/go /usr/local/go/bin/go; do [ -x "$c" ] && GO="$c" && break; done; fi
fi
if [ -z "$GO" ]; then
  echo "bench/go: no Go toolchain found (go on PATH, /usr/lib/go-*/bin/go, /usr/local/go); skipping the Go twin" >&2
  exit 0
fi

# major.minor of a toolchain: go1.23
short() { "$1" env GOVERSION | sed -E 's/^(go[0-9]+\.[0-9]+).*/\1/'; }

GO2="${GO_SECOND:-}"
if [ -z "$GO2" ] && [ ${#debian[@]} -gt 0 ]; then GO2="${debian[${#debian[@]}-1]}"; fi
if [ "$GO2" = "none" ]; then GO2=""; fi
if [ -n "$GO2" ] && ! "$GO2" version >/dev/null 2>&1; then
  echo "bench/go: the second toolchain $GO2 does not work; running the baseline twin alone" >&2
  GO2=""
fi
if [ -n "$GO2" ] && [ "$(short "$GO2")" = "$(short "$GO")" ]; then GO2=""; fi

if [ "$out" = "--version" ]; then
  if [ -n "$GO2" ]; then echo "$("$GO" version); second twin: $("$GO2" version)"; else "$GO" version; fi
  exit 0
fi

mkdir -p "$here/target"
build() { # toolchain, binary; fails when the build does
  ( cd "$here" && GOFLAGS=-mod=mod GOCACHE="${GOCACHE:-$here/target/gocache}" "$1" build -o "$2" . ) || return 1
  echo "bench/go: $("$1" version) -> $(basename "$2")" >&2
}
bin="$here/target/benchtwin"
build "$GO" "$bin"
if [ -n "$GO2" ]; then
  impl2="$(short "$GO2")"
  bin2="$here/target/benchtwin-$impl2"
  if ! build "$GO2" "$bin2"; then
    echo "bench/go: the second twin did not build with $GO2; running the baseline twin alone" >&2
    GO2=""
  fi
fi

dest=/dev/stdout
[ "$out" = "-" ] || dest="$out"
{
  "$bin" "$@"
  # Without async preemption (Go before 1.14): the tight loop's short goroutine waits for the hog.
  if [[ " $* " != *" -only "* || " $* " == *tightloop* ]]; then
    GODEBUG=asyncpreemptoff=1 "$bin" "$@" -impl go-nopreempt -only tightloop | tail -n +2
  fi
  if [ -n "$GO2" ]; then
    "$bin2" "$@" -impl "$impl2" | tail -n +2 || echo "bench/go: the second twin ($impl2) failed" >&2
  fi
} > "$dest"
