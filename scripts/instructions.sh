#!/usr/bin/env bash
# Instructions per turn for each variant of the turn benchmark, counted by valgrind (cachegrind):
# exact and repeatable where the timings of a shared machine are not. Also the misses of the
# simulated level-1 instruction cache (valgrind sizes it like the host's, 32 KiB here): a turn
# whose code does not fit in it pays for fetching its code again every turn, which instruction
# counts do not show and timings do. And the instructions spent inside the allocator (glibc's
# malloc and free, Rust's shims around them): the variants allocate alike, but the order of
# their allocations sends glibc down faster or slower paths, which moves the totals by more
# than the difference under test; the last column compares the variants without them. Needs
# valgrind (not a cargo tool: `apt install valgrind`); the timed figures need only
# `cargo bench`.
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
out=$(mktemp)
trap 'rm -f "$out"' EXIT

count() { # count VARIANT HOOKS TURNS: "instructions I1-misses allocator-instructions" of a run
    AGENTIX_TURNS="$1:$2:$3" valgrind --tool=cachegrind --cache-sim=yes \
        --cachegrind-out-file="$out" "$bench" 2>&1 |
        sed -n 's/.*\(I   refs\|I1  misses\): *\([0-9,]*\).*/\2/p' | tr -d , | tr '\n' ' '
    cg_annotate --show=Ir --threshold=0 "$out" |
        awk '/malloc\/malloc\.c:|malloc\/arena\.c:|__rustc::__r(ust|dl)_(alloc|dealloc|realloc)/ {
            gsub(",", "", $1); sum += $1 } END { print sum + 0 }'
}

printf '%5s  %12s  %12s  %12s  %7s  %11s   %-21s %s\n' hooks "agentix (a)" "by hand (b)" \
    "dynamic (c)" "a/b" "(c-b)/(a-b)" "I1 misses a / b / c" "allocator a / b / c: a/b without"
for hooks in ${HOOKS:-0 1 5 20}; do
    declare -A per_turn=() misses=() allocator=()
    for variant in agentix hand_written dynamic; do
        read -r few_refs few_misses few_alloc <<<"$(count "$variant" "$hooks" 10)"
        read -r many_refs many_misses many_alloc <<<"$(count "$variant" "$hooks" 210)"
        per_turn[$variant]=$(((many_refs - few_refs) / 200))
        misses[$variant]=$(((many_misses - few_misses) / 200))
        allocator[$variant]=$(((many_alloc - few_alloc) / 200))
    done
    a=${per_turn[agentix]} b=${per_turn[hand_written]} c=${per_turn[dynamic]}
    alloc_a=${allocator[agentix]} alloc_b=${allocator[hand_written]}
    printf '%5s  %12s  %12s  %12s  %7.3f  %11.1f   %-21s %s / %s / %s: %.3f\n' "$hooks" "$a" "$b" \
        "$c" "$(echo "$a / $b" | bc -l)" "$(echo "($c - $b) / ($a - $b)" | bc -l)" \
        "${misses[agentix]} / ${misses[hand_written]} / ${misses[dynamic]}" \
        "$alloc_a" "$alloc_b" "${allocator[dynamic]}" \
        "$(echo "($a - $alloc_a) / ($b - $alloc_b)" | bc -l)"
done
