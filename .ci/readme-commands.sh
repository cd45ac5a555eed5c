#!/usr/bin/env bash
# The README's commands as a new user types them, in a fresh clone of this commit, with the `java`
# that is on PATH (17 on CI's machine), no JAVA_HOME and no Maven on PATH (./gort must find the
# JDK 25 and use the Maven Wrapper by itself). Run by .ci/run after the test command; fails on the
# first command that fails. What it runs:
#   1. ./gort help, then ./gort showcase (the main command, in full), checked for its five scenarios
#      and the HTML timelines it says it wrote;
#   2. every other `./gort ...` line in the README's code blocks (not `./gort test`, which .ci/run
#      has just run, nor `./gort bench`, the long benchmark run), and `./gort example <Name>` for
#      every row of the README's examples table;
#   3. every code block that follows a `<!-- ci: run this block -->` line, as one bash script
#      (the "Use gort in your own project" steps).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$src" "$work/gort"
cd "$work/gort"

# A PATH like the user's, less Maven: every command of each PATH directory, linked into one folder.
mkdir -p "$work/bin"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    b="$(basename "$f")"
    case "$b" in mvn|mvnDebug|mvnyjp) continue ;; esac
    [ -x "$f" ] && [ ! -e "$work/bin/$b" ] && ln -s "$f" "$work/bin/$b"
  done
done
as_user() { # runs "$1" as a new user would type it: bash, no JAVA_HOME, Maven absent
  env -u JAVA_HOME -u GORT_JAVA_HOME -u GORT_MVN -u MAVEN_HOME -u M2_HOME PATH="$work/bin" bash -c "$1"
}
echo "readme: java on PATH: $(as_user 'java -version 2>&1 | head -n1'); mvn on PATH: $(as_user 'command -v mvn || echo none')"

ran=0
run() { # $1: the command line; output to a log, shown if it fails
  local log="$work/out.log" t=$SECONDS
  echo "readme: \$ $1"
  if ! as_user "$1" >"$log" 2>&1; then
    cat "$log"; echo "readme: FAILED: $1" >&2; exit 1
  fi
  ran=$((ran + 1))
  echo "readme:   ok ($((SECONDS - t)) s)"
}

# 1. help and the main command
run "./gort help"
grep -q 'set -euo' "$work/out.log" && { echo "readme: ./gort help prints its own code" >&2; exit 1; }
run "./gort showcase"
for s in "1. Fan-out" "2. Blocking syscalls" "3. Tight loop" "4. Ping-pong" "5. Network" "HTML timelines"; do
  grep -q "=== $s" "$work/out.log" || { cat "$work/out.log"; echo "readme: showcase lacks '$s'" >&2; exit 1; }
done
grep -q 'FAILED' "$work/out.log" && { cat "$work/out.log"; echo "readme: a showcase run failed" >&2; exit 1; }
n_html=$(ls examples/target/showcase/*.html | wc -l)
[ "$n_html" -ge 10 ] || { echo "readme: showcase wrote $n_html timelines, want 10" >&2; exit 1; }

# 2. the other ./gort lines of the README's code blocks, and every example of its table
awk '/^```/{inb=!inb; next} inb && /^\.\/gort /' README.md | sed 's/[[:space:]]*#.*$//' | sort -u >"$work/cmds"
while IFS= read -r c; do
  case "$c" in "./gort test"*|"./gort bench"*|"./gort showcase"|"./gort help"|"./gort install"*) continue ;; esac
  run "$c"
done <"$work/cmds"
# the examples table: from its header row to the blank line after it
awk '/^\| `\.\/gort example \.\.\.` \|/{t=1; next} t && /^$/{exit} t' README.md \
  | sed -n 's/^| `\([A-Z][A-Za-z]*\)\( \[n\]\)\{0,1\}` |.*/\1/p' | while IFS= read -r e; do
  echo "./gort example $e"
done >"$work/examples"
[ -s "$work/examples" ] || { echo "readme: no examples table found" >&2; exit 1; }
while IFS= read -r c; do run "$c"; done <"$work/examples"

# 3. the blocks marked to run as they stand
awk '/^<!-- ci: run this block -->/{want=1; next} want && /^```/{if (inb) {inb=0; want=0; n++} else inb=1; next}
     inb {print > (dir "/block" n ".sh")}' dir="$work" n=0 README.md
blocks=("$work"/block*.sh)
[ -e "${blocks[0]}" ] || { echo "readme: no block marked 'ci: run this block'" >&2; exit 1; }
for b in "${blocks[@]}"; do
  run "set -euo pipefail; $(cat "$b")"
done
echo "readme: all $ran README commands ran as a new user types them"
