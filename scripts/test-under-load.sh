#!/usr/bin/env bash
# Runs the README's test command N times in a row (default 10) while `yes` processes hog every core, and prints
# how many runs passed. A test that depends on the machine's speed shows up here as a failing run.
#   scripts/test-under-load.sh [runs] [hogs]     e.g. scripts/test-under-load.sh 10 2
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
hogs=${2:-$(nproc)}
logs=$(mktemp -d "${TMPDIR:-/tmp}/rigfit-load.XXXXXX")

pids=()
stop_hogs() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop_hogs EXIT INT TERM
for _ in $(seq "$hogs"); do
  yes >/dev/null &
  pids+=($!)
done
echo "load: ${hogs} x yes on $(nproc) cores; logs in ${logs}"

passed=0
for run in $(seq "$runs"); do
  if pnpm test >"${logs}/run-${run}.log" 2>&1; then
    passed=$((passed + 1))
    # vitest colours its summary even into a file: strip the escapes before reading the count.
    echo "run ${run}/${runs}: passed ($(sed 's/\x1b\[[0-9;]*m//g' "${logs}/run-${run}.log" | grep -Eo 'Tests +[0-9]+ passed' | tail -1))"
  else
    echo "run ${run}/${runs}: FAILED, see ${logs}/run-${run}.log"
    grep -E 'FAIL|✗|×' "${logs}/run-${run}.log" | head -20
  fi
done
echo "${passed} of ${runs} runs passed under load"
[ "$passed" -eq "$runs" ]
