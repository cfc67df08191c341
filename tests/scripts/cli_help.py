#!/usr/bin/env python3
"""Help that points somewhere real: every command answers --help with exit 0, and every docs/*.md
that the top-level help or a command's help names exists in the source tree. And a table that
cannot rot: every test docs/seeds.md names as proof exists - a suite with that test function, a
script in tests/scripts.

usage: cli_help.py WEIGHTSCOPE SOURCE_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

WS, SRC = sys.argv[1], sys.argv[2]

top = subprocess.run([WS, "--help"], capture_output=True, text=True)
check(top.returncode == 0, f"weightscope --help exits {top.returncode}")
commands = re.findall(r"^  ([a-z]+)  ", top.stdout, re.M)
check(len(commands) >= 9, f"the help lists the commands: {commands}")
texts = {"weightscope --help": top.stdout + top.stderr}
for c in commands:
    r = subprocess.run([WS, c, "--help"], capture_output=True, text=True)
    check(r.returncode == 0 and "usage: weightscope " + c in r.stdout + r.stderr, f"weightscope {c} --help: exit {r.returncode}")
    texts[c] = r.stdout + r.stderr
for where, text in texts.items():
    for doc in re.findall(r"docs/[A-Za-z0-9_.-]+\.md", text):
        check(os.path.isfile(os.path.join(SRC, doc)), f"{where} names {doc}, which does not exist")

seeds = open(os.path.join(SRC, "docs", "seeds.md")).read()
rows = [line for line in seeds.splitlines() if re.match(r"\| [KS][0-9]+ \|", line)]
check(len(rows) >= 30, f"docs/seeds.md lists {len(rows)} behaviours")
for row in rows:
    proof = row.rstrip(" |").rsplit(" | ", 1)[-1]
    for suite, functions in re.findall(r"(tst_[a-z_]+)((?: `[A-Za-z0-9_]+`,?)*)", proof):
        found = [p for p in (os.path.join(SRC, "tests", suite + ".cpp"), os.path.join(SRC, "tests", "ui", suite + ".cpp")) if os.path.isfile(p)]
        check(bool(found), f"docs/seeds.md names the suite {suite}, which does not exist")
        body = open(found[0]).read() if found else ""
        for fn in re.findall(r"`([A-Za-z0-9_]+)`", functions):
            check(re.search(r"void " + fn + r"\(\)", body) is not None, f"docs/seeds.md names {suite} {fn}, which it does not have")
    for script in re.findall(r"([A-Za-z0-9_]+\.py)", proof):
        check(os.path.isfile(os.path.join(SRC, "tests", "scripts", script)), f"docs/seeds.md names {script}, which does not exist")
finish()
