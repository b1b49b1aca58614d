#!/usr/bin/env python3
"""What each optional layer costs a turn that does not use it: the instructions the bare turn
(`benches/layers`, variant `bare`) runs on the layer's own source lines, inlined code counted
where its source line is.

    scripts/unused-layers.py

Counts 210 and 10 turns under valgrind's callgrind on a build with line tables (in
target/own-code), and prints per turn, for each layer, the instructions on its files' lines; a
layer the bare turn compiles out (a constant of its type says it is absent) runs none. A check
the loop makes at a call site for a layer (a timeout read from the config) counts at that
line: those lines are listed with the layer. Needs valgrind and python3.
"""

import collections
import os
import re
import subprocess
import sys
import tempfile

import turn_bench

# Each layer: its files (paths under agentix/src), and call-site lines that exist for it.
LAYERS = [
    ("committer", ["agent/effects.rs", "commit.rs"], []),
    ("journal", ["journal.rs"], []),
    ("session gate", ["session/", "task.rs"], []),
    ("ledger", ["conversation/ledger.rs"], []),
    ("observer", ["observe.rs"], []),
    ("stream transformers", ["transform.rs", "stream.rs"], []),
    ("timeouts", [], [("support.rs", "fn new(limit"), ("agent/mod.rs", "turn_timeout;"),
                      ("agent/model_call.rs", "model_timeout;"),
                      ("agent/model_call.rs", "let outer = if K::JOURNALS"),
                      ("agent/tool_call.rs", "tool_timeout: turn.config()"),
                      ("agent/tool_call.rs", "bounded!(self.tool_timeout")]),
    ("failure policy", [], [("turn.rs", "fn record_skipped")]),
]

# "fl=", "fi=", "fe=" name a file, compressed as "(id) name" the first time, "(id)" after.
NAMED = re.compile(r"\((\d+)\)(?: (.*))?")


def line_costs(path):
    """Self cost per (file, line) of a callgrind output."""
    names, costs = {}, collections.Counter()
    file = last = None
    in_call = False

    def name(text):
        match = NAMED.match(text)
        if not match:
            return text
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
        return names.get(match.group(1))

    current_fl = None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("fl="):
            current_fl = file = name(line[3:])
        elif line.startswith(("fi=", "fe=")):
            file = name(line[3:])
        elif line.startswith("fn="):
            file = current_fl
        elif line.startswith(("cfl=", "cfi=", "cfn=")):
            name(line.split("=", 1)[1])
        elif line.startswith("calls="):
            in_call = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            parts = line.split()
            position = parts[0]
            if position[0] == "+":
                number = last + int(position[1:])
            elif position[0] == "-":
                number = last - int(position[1:])
            elif position == "*":
                number = last
            else:
                number = int(position)
            last = number
            if in_call:
                in_call = False
                continue
            costs[(file or "?", number)] += int(parts[1]) if len(parts) > 1 else 0
    return costs


def run(executable, turns):
    with tempfile.NamedTemporaryFile() as out:
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--compress-strings=yes", "--compress-pos=yes",
             f"--callgrind-out-file={out.name}", executable],
            env={**os.environ, "AGENTIX_TURNS": f"bare:{turns}"},
            check=True, capture_output=True,
        )
        return line_costs(out.name)


def site_lines(root, file, text):
    """The line numbers in agentix/src/`file` holding `text` (for a function: its body)."""
    lines = open(os.path.join(root, "agentix", "src", file)).read().splitlines()
    found = set()
    for index, line in enumerate(lines):
        if text in line:
            found.add(index + 1)
            if text.startswith("fn "):
                depth = 0
                for offset, body in enumerate(lines[index:]):
                    depth += body.count("{") - body.count("}")
                    found.add(index + offset + 1)
                    if depth == 0 and "}" in body:
                        break
    if not found:
        sys.exit(f"unused-layers.py: `{text}` is no longer in agentix/src/{file}: update LAYERS")
    return found


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    executable = turn_bench.executable({
        "CARGO_TARGET_DIR": os.path.join(root, "target", "own-code"),
        "CARGO_PROFILE_BENCH_DEBUG": "line-tables-only",
    }, bench="layers")
    many, few = run(executable, 210), run(executable, 10)
    total = (sum(many.values()) - sum(few.values())) / 200
    src = os.path.join(root, "agentix", "src") + os.sep
    print(f"the bare turn: {total:.0f} instructions; each layer's share when unused:")
    for layer, files, sites in LAYERS:
        lines = {(file, number) for file, text in sites for number in site_lines(root, file, text)}
        spent = 0
        for (file, number), cost in many.items():
            relative = file[len(src):] if file.startswith(src) else None
            if relative is None:
                continue
            if any(relative.startswith(prefix) for prefix in files) or (relative, number) in lines:
                spent += cost - few.get((file, number), 0)
        spent /= 200
        print(f"  {layer:22} {spent:6.0f}  ({100 * spent / total:.2f}%)")


if __name__ == "__main__":
    main()
