#!/usr/bin/env bash
# The MCP tests over real parts nobody here wrote: installs the reference servers and the
# inspector's CLI from the npm registry at pinned versions (once, under target/), then runs
# agentix-mcp's ignored tests: the client against each server, started as a child process (in
# a temporary directory where it needs one), and the inspector against an agent's served tools.
#
#   scripts/mcp-servers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

EVERYTHING=2026.8.31
FILESYSTEM=2026.8.31
INSPECTOR=1.0.3
prefix="$PWD/target/mcp-servers-$EVERYTHING-$FILESYSTEM-$INSPECTOR"
bin="$prefix/node_modules/.bin"
if [ ! -x "$bin/mcp-server-everything" ] || [ ! -x "$bin/mcp-server-filesystem" ] ||
    [ ! -x "$bin/mcp-inspector-cli" ]; then
    npm install --silent --no-audit --no-fund --prefix "$prefix" \
        "@modelcontextprotocol/server-everything@$EVERYTHING" \
        "@modelcontextprotocol/server-filesystem@$FILESYSTEM" \
        "@modelcontextprotocol/inspector-cli@$INSPECTOR" >&2
fi
for server in mcp-server-everything mcp-server-filesystem mcp-inspector-cli; do
    [ -x "$bin/$server" ] || { echo "npm installed no $server at $bin" >&2; exit 1; }
done
# The client side, against the reference servers.
AGENTIX_MCP_EVERYTHING="$bin/mcp-server-everything" \
    AGENTIX_MCP_FILESYSTEM="$bin/mcp-server-filesystem" \
    cargo test -p agentix-mcp --test npm_servers -- --ignored
# The serving side, checked by the inspector: an agent's tools over stdio (the mcp_serve
# example) and over streamable HTTP.
cargo build -p examples --example mcp_serve
AGENTIX_MCP_INSPECTOR="$bin/mcp-inspector-cli" \
    AGENTIX_MCP_SERVE="$PWD/target/debug/examples/mcp_serve" \
    cargo test -p agentix-mcp --test inspector -- --ignored
