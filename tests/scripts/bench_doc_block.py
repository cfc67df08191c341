#!/usr/bin/env python3
"""The benchmark scripts' --write (bench/doc_block.py) on a copy of the real docs/benchmarks.md:
each bench's marked block is there to be found; replacing one changes only the text between its
markers and keeps every byte outside them; writing it again changes nothing; a document without
the block, or no file at all, gets it appended. (An earlier --write opened the document for
writing before reading it and would have left only its own section.)

usage: bench_doc_block.py SOURCE_DIR
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

SRC = sys.argv[1]
sys.path.insert(0, os.path.join(SRC, "bench"))
from doc_block import replace_block  # noqa: E402

original = open(os.path.join(SRC, "docs", "benchmarks.md")).read()
with tempfile.TemporaryDirectory() as d:
    doc = os.path.join(d, "benchmarks.md")
    for name in ("dequant-bench", "open-bench", "scan-bench"):
        begin, end = f"<!-- {name} begin -->", f"<!-- {name} end -->"
        check(original.count(begin) == 1 and original.count(end) == 1 and original.index(begin) < original.index(end),
              f"docs/benchmarks.md has one {name} block")
        shutil.copy(os.path.join(SRC, "docs", "benchmarks.md"), doc)
        replace_block(doc, name, "| new | table |\n")
        after = open(doc).read()
        a, b = original.index(begin), original.index(end) + len(end)
        check(after == original[:a] + f"{begin}\n| new | table |\n{end}" + original[b:], f"{name}: only its block changed")
        replace_block(doc, name, "| new | table |")
        check(open(doc).read() == after, f"{name}: writing the same table again changes nothing")

    with open(doc, "w") as f:
        f.write("# Benchmarks\n\nText.\n")
    replace_block(doc, "scan-bench", "table")
    check(open(doc).read() == "# Benchmarks\n\nText.\n\n<!-- scan-bench begin -->\ntable\n<!-- scan-bench end -->\n", "a missing block is appended")
    fresh = os.path.join(d, "none.md")
    replace_block(fresh, "open-bench", "table")
    check(open(fresh).read() == "<!-- open-bench begin -->\ntable\n<!-- open-bench end -->\n", "a missing file is created")
finish()
