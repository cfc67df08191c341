#!/usr/bin/env python3
"""Help that points somewhere real: every command answers --help with exit 0, and every docs/*.md
that the top-level help or a command's help names exists in the source tree.

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
finish()
