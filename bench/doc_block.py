"""The one way the benchmark scripts write their tables into docs/benchmarks.md: the text between
`<!-- NAME begin -->` and `<!-- NAME end -->` is replaced, everything else kept; the block is
appended when the document (or the file) does not have it yet."""
import os
import platform


def replace_block(path, name, content):
    begin, end = f"<!-- {name} begin -->", f"<!-- {name} end -->"
    if os.path.exists(path):
        with open(path) as f:  # read whole before opening it for writing, which truncates it
            doc = f.read()
    else:
        doc = ""
    block = f"{begin}\n{content.strip(chr(10))}\n{end}"
    if begin in doc and end in doc[doc.index(begin):]:
        at = doc.index(begin)
        doc = doc[:at] + block + doc[doc.index(end, at) + len(end):]
    else:
        doc = doc.rstrip("\n") + ("\n\n" if doc else "") + block + "\n"
    with open(path, "w") as f:
        f.write(doc)


def cpu_name():
    """The machine's CPU model as /proc/cpuinfo names it, for a table's heading."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()
