#!/usr/bin/env bash
# Runs each fuzz target (fuzz/fuzz_targets/) for a bounded time with cargo fuzz (libFuzzer),
# from the seeds in fuzz/seeds/ and the corpus it grew before (fuzz/corpus/, not committed), and
# prints what it did: executions, corpus, and any failing input (saved under fuzz/artifacts/).
#
#   scripts/fuzz.sh                       # every target, 60 s each
#   SECONDS_EACH=300 scripts/fuzz.sh      # longer
#   scripts/fuzz.sh redactor_chunks       # one target
#
# cargo fuzz needs a nightly compiler's flags; the installed stable toolchain accepts them with
# RUSTC_BOOTSTRAP=1. Not part of .ci/run: building with the sanitizer takes longer than CI gives
# it. cargo-fuzz is installed through cargo if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
seconds=${SECONDS_EACH:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(conversation_json tool_arguments redactor_chunks)
status=0
for target in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$target"
    log=$(mktemp)
    echo "== $target, ${seconds}s"
    if cargo fuzz run "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
        -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1; then
        echo "   no failure"
    else
        echo "   FAILED: $(grep -m1 -E 'panicked at|ERROR:' "$log" || true)"
        grep -E 'Test unit written to' "$log" || true
        status=1
    fi
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" \
        | sed 's/^/   /'
    echo "   corpus: $(find "fuzz/corpus/$target" -type f | wc -l) inputs"
    rm -f "$log"
done
exit $status
