#!/usr/bin/env bash
# Instructions per tool call of a step, counted by valgrind (cachegrind): a turn whose step
# makes 1 or 8 calls of a tool that answers at once, its calls run together
# (`tool_concurrency` 8) or one at a time (`tool_concurrency` 1). Each count is the difference
# between 110 and 10 turns, over 100 turns and the step's calls: set-up cancels out. The turn's
# own cost (its two model calls) is in each figure; the difference between the two ways is
# what running together costs a call. Needs valgrind (`apt install valgrind`).
#
#   scripts/tool-call-instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

bench=$(cargo bench -p agentix --bench tool_calls --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$bench" ] || { echo "the tool_calls benchmark did not build" >&2; exit 1; }

count() { # count HOW CALLS TURNS: the instructions of a run
    AGENTIX_CALLS="$1:$2:$3" valgrind --tool=cachegrind --cache-sim=no \
        --cachegrind-out-file=/dev/null "$bench" 2>&1 |
        sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}

printf '%6s  %15s  %15s  %9s\n' calls "together / call" "one at a time" "together - one at a time"
for calls in 1 8; do
    declare -A per_call=()
    for how in together one_at_a_time; do
        few=$(count "$how" "$calls" 10)
        many=$(count "$how" "$calls" 110)
        per_call[$how]=$(((many - few) / 100 / calls))
    done
    t=${per_call[together]} s=${per_call[one_at_a_time]}
    printf '%6s  %15s  %15s  %+9s\n' "$calls" "$t" "$s" "$((t - s))"
done
