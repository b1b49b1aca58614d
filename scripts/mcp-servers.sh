#!/usr/bin/env bash
# The MCP tests over real servers nobody here wrote: installs the reference servers from the
# npm registry at pinned versions (once, under target/), then runs agentix-mcp's ignored
# tests, which start each as a child process (in a temporary directory where it needs one).
#
#   scripts/mcp-servers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

EVERYTHING=2026.8.31
FILESYSTEM=2026.8.31
prefix="$PWD/target/mcp-servers-$EVERYTHING-$FILESYSTEM"
bin="$prefix/node_modules/.bin"
if [ ! -x "$bin/mcp-server-everything" ] || [ ! -x "$bin/mcp-server-filesystem" ]; then
    npm install --silent --no-audit --no-fund --prefix "$prefix" \
        "@modelcontextprotocol/server-everything@$EVERYTHING" \
        "@modelcontextprotocol/server-filesystem@$FILESYSTEM" >&2
fi
for server in mcp-server-everything mcp-server-filesystem; do
    [ -x "$bin/$server" ] || { echo "npm installed no $server at $bin" >&2; exit 1; }
done
AGENTIX_MCP_EVERYTHING="$bin/mcp-server-everything" \
    AGENTIX_MCP_FILESYSTEM="$bin/mcp-server-filesystem" \
    cargo test -p agentix-mcp --test npm_servers -- --ignored
