#!/usr/bin/env bash
# Instructions per turn of the bare turn under each subscriber of `agentix-otel/benches/traced`
# (none; one that filters agentix out; the registry alone; tracing-opentelemetry exporting to
# nowhere; that and the metrics layer), counted by valgrind (cachegrind). Each count is the
# difference between 110 and 10 turns, over 100: set-up cancels out. Needs valgrind.
#
#   scripts/trace-instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

bench=$(cargo bench -p agentix-otel --bench traced --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$bench" ] || { echo "the traced benchmark did not build" >&2; exit 1; }

count() { # count VARIANT TURNS: the instructions of a run
    AGENTIX_TRACED="$1:$2" valgrind --tool=cachegrind --cache-sim=no \
        --cachegrind-out-file=/dev/null "$bench" 2>&1 |
        sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}

printf '%-14s %12s %12s\n' subscriber "per turn" "over none"
none=
for variant in none filtered registry otel otel_metrics; do
    few=$(count "$variant" 10)
    many=$(count "$variant" 110)
    per_turn=$(((many - few) / 100))
    none=${none:-$per_turn}
    printf '%-14s %12s %+12s\n' "$variant" "$per_turn" "$((per_turn - none))"
done
