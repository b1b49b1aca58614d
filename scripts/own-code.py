#!/usr/bin/env python3
"""Where a turn's instructions go: the agent's (a) against the hand-written loop's (b).

    scripts/own-code.py        # 0 hooks
    scripts/own-code.py 5      # a hook count of the turn benchmark (0, 1, 5, 20)
    TOP=30 scripts/own-code.py # the 30 functions whose lines ran most (8 by default)

Counts 1 010 turns of each variant under valgrind's callgrind, on a build of the turn benchmark
with line tables (in target/own-code, apart from the usual build), and splits the instructions
per turn three ways: the allocator (glibc's malloc and free, Rust's shims around them), the
lines of this repository's sources (agentix's and the benchmark's: the loop, the hooks, the
model and tool calls, the log — inlined code counts where its source line is), and everything
else (the standard library's clones and drops, serde, memcpy). Then the functions whose own
lines ran the most. Both variants share the message types, the token counter and the tool's
argument parsing, so the difference in the second column is what the agent's own code adds.
Needs valgrind and python3 (neither is needed to build or test).
"""

import collections
import os
import re
import subprocess
import sys
import tempfile

import turn_bench

TURNS = 1010
ALLOCATOR = re.compile(r"malloc/|__rustc::__r(ust|dl)_(alloc|dealloc|realloc)")
# "  449,123 (3.15%)  /path/to/file.rs:function [/path/to/binary]"
LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?)(?: \[[^\]]*\])?$")


def is_own(source, root):
    """Whether `source` (absolute, or relative to the workspace) is a file of this repository."""
    path = os.path.normpath(os.path.join(root, source))
    return path.startswith(root + os.sep) and os.path.isfile(path)


def split(executable, variant, hooks, root):
    """Instructions per turn: (allocator, own lines, the rest, own lines by function)."""
    with tempfile.NamedTemporaryFile() as out:
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", executable],
            env={**os.environ, "AGENTIX_TURNS": f"{variant}:{hooks}:{TURNS}"},
            check=True, capture_output=True,
        )
        report = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", out.name],
                                check=True, capture_output=True, text=True).stdout
    allocator = own = rest = 0
    functions = collections.Counter()
    for text in report.splitlines():
        match = LINE.match(text)
        if not match or match.group(2).startswith(("=>", "PROGRAM TOTALS")):
            continue
        count, place = int(match.group(1).replace(",", "")), match.group(2)
        source, _, function = place.partition(":")
        if ALLOCATOR.search(place):
            allocator += count
        elif is_own(source, root):
            own += count
            functions[function] += count
        else:
            rest += count
    return allocator / TURNS, own / TURNS, rest / TURNS, functions


def main():
    hooks = sys.argv[1] if len(sys.argv) > 1 else "0"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    executable = turn_bench.executable({
        "CARGO_TARGET_DIR": os.path.join(root, "target", "own-code"),
        "CARGO_PROFILE_BENCH_DEBUG": "line-tables-only",
    })
    print(f"{hooks} hooks, instructions per turn (the program's start is spread over the turns)")
    print(f"{'':24} {'allocator':>10} {'own lines':>10} {'the rest':>10} {'total':>10}")
    for variant, label in [("agentix", "agentix (a)"), ("hand_written", "by hand (b)")]:
        allocator, own, rest, functions = split(executable, variant, hooks, root)
        total = allocator + own + rest
        print(f"{label:24} {allocator:10.0f} {own:10.0f} {rest:10.0f} {total:10.0f}")
        for function, count in functions.most_common(int(os.environ.get("TOP", 8))):
            print(f"{'':6}{count / TURNS:8.0f}  {function[:100]}")


if __name__ == "__main__":
    main()
