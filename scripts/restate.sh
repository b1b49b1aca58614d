#!/usr/bin/env bash
# The crash tests over a real restate-server: installs restate-server from the npm registry at
# a pinned version (once, under target/), then runs agentix-restate's ignored tests and
# agentix-mcp's turn on Restate, which start it on 127.0.0.1 in temporary directories and kill
# it after.
#
#   scripts/restate.sh            the crash tests
#   scripts/restate.sh --path     only install, and print the binary's path
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.7.12
prefix="$PWD/target/restate-server-$VERSION"
# The platform's binary itself, not npm's node launcher: a test that kills it kills the server.
binary="$prefix/node_modules/@restatedev/restate-server-$(uname -s | tr 'A-Z' 'a-z')-x64/bin/restate-server"
if [ "$(uname -m)" = aarch64 ] || [ "$(uname -m)" = arm64 ]; then
    binary="${binary/-x64\//-arm64/}"
fi
if [ ! -x "$binary" ]; then
    npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$prefix" \
        "@restatedev/restate-server@$VERSION" >&2
    if [ ! -x "$binary" ]; then
        echo "npm installed no restate-server binary for $(uname -s) $(uname -m) at $binary" >&2
        exit 1
    fi
fi
"$binary" --version >&2
if [ "${1:-}" = "--path" ]; then
    echo "$binary"
    exit 0
fi
# One at a time: each starts its own restate-server, on ports it just found free.
AGENTIX_RESTATE_SERVER="$binary" cargo test -p agentix-restate --test crash -- --ignored \
    --skip service --test-threads=1
# An MCP server's tools in a turn on Restate.
AGENTIX_RESTATE_SERVER="$binary" cargo test -p agentix-mcp --test restate -- --ignored \
    --skip service --test-threads=1
