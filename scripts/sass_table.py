#!/usr/bin/env python3
"""Per-kernel machine-code table from `cuobjdump --dump-resource-usage` + `--dump-sass` output
(scripts/gpu-proof.sh's sass step writes both into sass.txt): for each kernel its registers and
stack frame, SASS instructions, and its global loads and stores by width - what shows whether a
kernel moves its bytes in 16-byte accesses and keeps no per-thread stack (docs/benchmarks.md).

usage: sass_table.py SASS_TXT   (markdown on stdout; exit 1 when a 16-values-a-thread decode body
       has a stack frame or no 16-byte global store, or a tiled transpose has a stack frame or does
       not go through shared memory)"""
import collections
import re
import sys

# Body numbers of kernel_threads.h's enum class Body, as they appear in the mangled names.
BODIES = ["Elements", "Blocks", "Fp8Runs", "Fp4Runs", "IntRuns", "Q4kRuns", "GgufRuns"]
RUN_BODIES = {"Fp8Runs", "Fp4Runs", "IntRuns", "Q4kRuns", "GgufRuns"}
ACCESS = re.compile(r"\b(LDG|STG|LDL|STL|LDS|STS)((?:\.[A-Z0-9_]+)*)\s")
WIDTH = {"128": 16, "64": 8, "U8": 1, "S8": 1, "U16": 2, "S16": 2}
# transposeKernel<T>'s element type as the mangling spells it: unsigned char, short, int, long.
TRANSPOSE_BYTES = {"h": 1, "t": 2, "j": 4, "m": 8}


def readable(mangled):
    m = re.search(r"decodeKernelILNS_3num4BodyE(\d)E([ft])E", mangled)
    if m:
        return f"decode<{BODIES[int(m.group(1))]}, {'float' if m.group(2) == 'f' else 'bf16'}>", BODIES[int(m.group(1))]
    m = re.search(r"transposeKernelI([a-z])E", mangled)
    if m:
        return f"transpose<{TRANSPOSE_BYTES.get(m.group(1), '?')} B>", "Transpose"
    # Itanium mangling: a name is its length in digits, then the name itself.
    for i in range(len(mangled)):
        for j in range(i + 1, min(i + 3, len(mangled)) + 1):
            if mangled[i:j].isdigit():
                name = mangled[j:j + int(mangled[i:j])]
                if name.endswith("Kernel") and name.isidentifier():
                    return name, None
    return mangled, None


def width(modifiers):
    for part in modifiers.split("."):
        if part in WIDTH:
            return WIDTH[part]
    return 4  # no width modifier: 32 bits


def main(path):
    text = open(path, errors="replace").read()
    resources = {}
    for name, reg, stack in re.findall(r"Function (\S+):\s*\n\s*REG:(\d+) STACK:(\d+)", text):
        resources[name] = (int(reg), int(stack))
    rows, bad = [], []
    for name, body in re.findall(r"\n\t\tFunction : (\S+)\n(.*?)(?=\n\t\tFunction : |\Z)", text, re.S):
        instructions = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]+);", body)
        counts = collections.Counter()
        for ins in instructions:
            m = ACCESS.search(ins + " ")
            if m:
                counts[(m.group(1), width(m.group(2)))] += 1
        label, kind = readable(name)
        reg, stack = resources.get(name, (None, None))

        def fmt(op):
            return ", ".join(f"{n}x{w}B" for (o, w), n in sorted(counts.items()) if o == op) or "-"
        rows.append((label, reg, stack, len(instructions), fmt("LDG"), fmt("STG"), fmt("LDL") if counts else "-", fmt("STL") if counts else "-",
                     fmt("LDS") if counts else "-", fmt("STS") if counts else "-"))
        if kind in RUN_BODIES and (stack or not any(o == "STG" and w == 16 for (o, w) in counts)):
            bad.append(label)
        if kind == "Transpose" and (stack or not any(o == "LDS" for (o, w) in counts) or not any(o == "STS" for (o, w) in counts)):
            bad.append(label)
    print("| kernel | registers | stack (bytes) | SASS instructions | global loads | global stores | local loads | local stores | shared loads | shared stores |")
    print("|---|---:|---:|---:|---|---|---|---|---|---|")
    for r in sorted(rows):
        print("| `%s` | %s | %s | %d | %s | %s | %s | %s | %s | %s |" % r)
    for b in bad:
        print(f"\nREGRESSION: {b} has a stack frame, or lost its 16-byte global stores or its shared-memory tile", file=sys.stderr)
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
