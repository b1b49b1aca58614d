#!/usr/bin/env bash
# Instructions per turn of the bare turn with each of agentix-hooks' model-call hooks registered
# and never needed, and of a hook that only passes the call on
# (`agentix-hooks/benches/pass_through.rs`), counted by valgrind (cachegrind):
# each count the difference between 110 and 10 turns, over 100; the cost of one event is the
# difference over none, over the events the hook sees (the turn's two model calls, or its one
# tool call; a limit's, below). Needs valgrind.
#
#   scripts/hook-instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

bench=$(cargo bench -p agentix-hooks --bench pass_through --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$bench" ] || { echo "the pass_through benchmark did not build" >&2; exit 1; }

count() { # count VARIANT TURNS: the instructions of a run
    AGENTIX_HOOKS="$1:$2" valgrind --tool=cachegrind --cache-sim=no \
        --cachegrind-out-file=/dev/null "$bench" 2>&1 |
        sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}

printf '%-10s %10s %10s %10s\n' hooks "per turn" "over none" "per event"
none=
# The events each variant's hooks see a turn: two model calls, or one tool call.
# A tool limit sees both messages (`after_model`) and the call (`before_tool`); a usage limit
# each call's `before_model`, `wrap_model` and `after_model`, and `post`.
declare -A events=([none]=1 [pass]=2 [retry]=2 [fallback]=2 [both]=2 [approve]=1
    [model_limit]=2 [tool_limit]=3 [usage_limit]=7 [clear]=2
    [filter]=3 [tool_retry]=1 [pii]=5)
for variant in none pass retry fallback both approve model_limit tool_limit usage_limit clear filter tool_retry pii; do
    few=$(count "$variant" 10)
    many=$(count "$variant" 110)
    per_turn=$(((many - few) / 100))
    none=${none:-$per_turn}
    over=$((per_turn - none))
    printf '%-10s %10s %+10s %+10s\n' "$variant" "$per_turn" "$over" "$((over / events[$variant]))"
done
