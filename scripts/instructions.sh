#!/usr/bin/env bash
# Instructions per turn for each variant of the turn benchmark, counted by valgrind (callgrind):
# exact and repeatable where the timings of a shared machine are not. Needs valgrind (not a
# cargo tool: `apt install valgrind`); the timed figures need only `cargo bench`.
#
#   scripts/instructions.sh              # hooks 0, 1, 5, 20
#   HOOKS="5 20" scripts/instructions.sh   # of 0, 1, 5 and 20
#
# Each count is the difference between 210 and 10 turns, over 200: set-up cancels out.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

bench=$(cargo bench -p agentix --bench turn --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)

count() { # count VARIANT HOOKS TURNS: instructions of the whole run
    AGENTIX_TURNS="$1:$2:$3" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '%5s  %12s  %12s  %12s  %7s  %11s\n' hooks "agentix (a)" "by hand (b)" "dynamic (c)" "a/b" "(c-b)/(a-b)"
for hooks in ${HOOKS:-0 1 5 20}; do
    declare -A per_turn=()
    for variant in agentix hand_written dynamic; do
        few=$(count "$variant" "$hooks" 10)
        many=$(count "$variant" "$hooks" 210)
        per_turn[$variant]=$(((many - few) / 200))
    done
    a=${per_turn[agentix]} b=${per_turn[hand_written]} c=${per_turn[dynamic]}
    printf '%5s  %12s  %12s  %12s  %7.3f  %11.1f\n' "$hooks" "$a" "$b" "$c" \
        "$(echo "$a / $b" | bc -l)" "$(echo "($c - $b) / ($a - $b)" | bc -l)"
done
