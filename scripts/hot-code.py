#!/usr/bin/env python3
"""The code one turn of the turn benchmark runs, in instruction-cache lines.

    scripts/hot-code.py                  # agentix, 0 hooks
    scripts/hot-code.py hand_written 5   # a variant (agentix, hand_written, dynamic) and a hook count

Runs 200 turns under valgrind's callgrind with a per-instruction dump and counts the distinct
64-byte lines holding an instruction that ran at least 150 times: code run on (nearly) every
turn. When that is more than the level-1 instruction cache holds (32 KiB on the machine of
BENCHMARKS.md), each turn fetches part of its code again. Prints the total (the program's start,
the dynamic loader's loops, adds about 3 KiB to every variant), then the functions with the most
such lines. Needs valgrind and python3 (neither is needed to build or test).
"""

import collections
import os
import re
import subprocess
import sys
import tempfile

import turn_bench

TURNS = 200
HOT = 150
LINE = 64


def hot_lines(dump):
    """Per function, the cache lines of its instructions that ran at least HOT times."""
    names, lines = {}, collections.defaultdict(set)
    function, address, call_line_next = None, 0, False
    position = re.compile(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+\s+(\d+)")
    for text in dump:
        if text.startswith(("fn=", "cfn=")):
            match = re.match(r"c?fn=\((\d+)\)(?: (.*))?", text.strip())
            if match.group(2):
                names[match.group(1)] = match.group(2)
            if text.startswith("fn="):
                function = names[match.group(1)]
            continue
        if text.startswith("calls="):
            call_line_next = True
            continue
        match = position.match(text)
        if not match or function is None:
            continue
        step = match.group(1)
        if step.startswith("0x"):
            address = int(step, 16)
        elif step[0] in "+-":
            address += int(step)
        if call_line_next:  # the inclusive cost of a call, not this instruction's own
            call_line_next = False
            continue
        if int(match.group(2)) >= HOT:
            lines[function].add(address // LINE)
    return lines


def main():
    variant = sys.argv[1] if len(sys.argv) > 1 else "agentix"
    hooks = sys.argv[2] if len(sys.argv) > 2 else "0"
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    executable = turn_bench.executable()
    with tempfile.NamedTemporaryFile() as out:
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out.name}",
             executable],
            env={**os.environ, "AGENTIX_TURNS": f"{variant}:{hooks}:{TURNS}"},
            check=True,
            capture_output=True,
        )
        with open(out.name) as dump:
            lines = hot_lines(dump)
    everything = set().union(*lines.values())
    print(f"{variant}, {hooks} hooks: {len(everything)} lines, {len(everything) * LINE} bytes "
          f"of code run on every turn")
    for function, held in sorted(lines.items(), key=lambda item: -len(item[1]))[:15]:
        print(f"{len(held) * LINE:>7} bytes  {function[:110]}")


if __name__ == "__main__":
    main()
