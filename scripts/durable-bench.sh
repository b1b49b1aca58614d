#!/usr/bin/env bash
# What surviving a crash costs per turn (agentix-restate/benches/durable.rs): agentix alone,
# the PostgreSQL journal and Restate, 1, 8 and 32 turns at once. restate-server comes from
# scripts/restate.sh; PostgreSQL is the one AGENTIX_POSTGRES_URL names, or one the benchmark
# starts from the machine's initdb. Prints the table BENCHMARKS.md records.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENTIX_RESTATE_SERVER="$(scripts/restate.sh --path)" \
    cargo bench -p agentix-restate --bench durable -- --bench
