#!/usr/bin/env bash
# What each optional layer costs a turn when it is used: instructions (cachegrind) and
# allocations (memcheck's heap count) per turn of each variant of agentix/benches/layers/main.rs
# against the turn it adds to, counted as scripts/cost-gate counts (210 turns less 10, over 200).
# What a layer costs unused is read from the bare turn's profile instead (BENCHMARKS.md says how).
#
#   scripts/layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

bench=$(cargo bench -p agentix --bench layers --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)

instructions() { # VARIANT TURNS
    AGENTIX_TURNS="$1:$2" valgrind --tool=cachegrind --cache-sim=no \
        --cachegrind-out-file=/dev/null "$bench" 2>&1 |
        sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}

allocations() { # VARIANT TURNS
    AGENTIX_TURNS="$1:$2" valgrind --tool=memcheck --leak-check=no "$bench" 2>&1 |
        sed -n 's/.*total heap usage: *\([0-9,]*\) allocs.*/\1/p' | tr -d ,
}

per_turn() { # MEASURE VARIANT
    echo $((($("$1" "$2" 210) - $("$1" "$2" 10)) / 200))
}

printf '%-16s %-30s %-30s %12s %10s %8s\n' layer used "against" instructions "+" allocs+
while read -r layer used base; do
    ui=$(per_turn instructions "$used") bi=$(per_turn instructions "$base")
    ua=$(per_turn allocations "$used") ba=$(per_turn allocations "$base")
    printf '%-16s %-30s %-30s %12s %10s %8s\n' "$layer" "$used" "$base" "$ui / $bi" \
        "$((ui - bi))" "$((ua - ba))"
done <<'EOF'
observer observed bare
committer committed bare
journal journaled bare
transformer transformed bare
timeouts timeouts tokio
failure-policy parallel_pre_skipped_on_error parallel_pre
session-gate session_gated session
ledger ledger_planned ledger_fits
EOF
