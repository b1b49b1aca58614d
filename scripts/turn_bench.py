"""The turn benchmark's executable, for the scripts that run it under valgrind."""

import json
import os
import subprocess


def executable(env=None, bench="turn"):
    """Builds the turn benchmark, or another of agentix's (without running it), and returns the
    path of its executable; `env` adds to the environment of the build (a target directory, a
    profile setting)."""
    out = subprocess.run(
        ["cargo", "bench", "-p", "agentix", "--bench", bench, "--no-run", "--message-format=json"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    ).stdout
    executables = [
        message["executable"]
        for message in map(json.loads, out.splitlines())
        if message.get("reason") == "compiler-artifact" and message.get("executable")
    ]
    return executables[-1]
