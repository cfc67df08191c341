"""Every row of docs/seeds.md names where a seed behaviour lives and the test that proves it. This
holds each row to its citation: every test file it names exists; every `function` it names is a
function of that file; every quoted corpus case exists; and each cited function or case mentions
what the row says the behaviour is - one of its rule codes (WS-...) or a `name` from its "where"
column. A row that fails lists what is missing.

Rows known not to hold yet are listed in UNPROVEN with the reason (issue 50); such a row that starts
to hold fails too, so the list only shrinks.

usage: seeds_rows.py SOURCE_DIR"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Rows whose test does not (yet) show what the row claims - each a finding of the issue-50 audit.
UNPROVEN = {}


def test_file(name):
    """tst_x -> tests/tst_x.cpp or tests/ui/tst_x.cpp; x.py -> tests/scripts/x.py."""
    for cand in (f"tests/{name}.cpp", f"tests/ui/{name}.cpp", f"tests/scripts/{name}", f"tests/scripts/{name}.py"):
        p = os.path.join(ROOT, cand)
        if os.path.isfile(p):
            return p
    return None


def function_body(text, fn):
    """The text of `void fn(` up to the next function at the same indentation (C++), or of
    `def fn(` up to the next top-level def (Python); None when absent."""
    m = re.search(r"^(\s*)(?:void|def) " + re.escape(fn) + r"\(", text, re.M)
    if not m:
        return None
    indent = m.group(1)
    rest = text[m.end():]
    end = re.search(r"^" + indent + r"(?:void|def) \w+\(", rest, re.M)
    return rest[:end.start()] if end else rest


def row_problems(where, proved):
    codes = set(re.findall(r"WS-[A-Z]\d{3}", where))
    names = {n.split("(")[0].split(" ")[0].strip("-") for n in re.findall(r"`([^`]+)`", where)}
    names = {n for n in names if re.fullmatch(r"[A-Za-z_][\w:.]*", n)}
    names |= {n.split("::")[-1].split(".")[-1] for n in names}
    names |= {re.sub(r"_(\w)", lambda m: m.group(1).upper(), n) for n in names if "_" in n}  # kv_cache_scales -> kvCacheScales
    marks = set() if where.startswith("Differs") else codes | names
    problems = []
    # "tst_x `fn` (\"case\", ...), `fn2`; script.py part F" - a test name, then what of it
    for part in re.split(r";\s*", proved):
        m = re.match(r"\s*([\w.]+)(.*)", part)
        if not m:
            continue
        name, rest = m.group(1), m.group(2)
        path = test_file(name)
        if not path:
            problems.append(f"no test file for {name}")
            continue
        text = open(path, encoding="utf-8").read()
        pieces = []
        for fn in re.findall(r"`(\w+)`", rest):
            body = function_body(text, fn)
            if body is None:
                problems.append(f"{name} has no function {fn}")
            else:
                pieces.append((f"{name} {fn}", body))
        cases = []
        for case in re.findall(r'"([^"]+)"', rest):
            lines = [l for l in text.splitlines() if f'"{case}"' in l]
            if not lines:
                problems.append(f'{name} has no case "{case}"')
            else:
                cases.append((f'{name} "{case}"', "\n".join(lines)))
        for code in re.findall(r"\((WS-[A-Z]\d{3})", rest) + re.findall(r", (WS-[A-Z]\d{3})", rest):  # corpus cases by rule code
            lines = [l for l in text.splitlines() if f'"{code}"' in l]
            if not lines:
                problems.append(f"{name} has no case of {code}")
            else:
                cases.append((f"{name} {code} cases", "\n".join(lines)))
        # Quoted cases are the evidence where given (a data-driven function names no rule itself).
        pieces = cases or pieces or [(name, text)]
        if marks and not any(any(k in body for k in marks) for _, body in pieces):
            problems.append(f"{' / '.join(label for label, _ in pieces)} mention none of {sorted(marks)}")
    return problems


def main():
    rows = 0
    failed = []
    for line in open(os.path.join(ROOT, "docs", "seeds.md"), encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not re.fullmatch(r"[KS]\d+(/[KS]?\d+)?", cells[0]):
            continue
        if cells[3].startswith("Differs"):  # nothing here to prove: the row says why
            rows += 1
            continue
        rows += 1
        problems = row_problems(cells[2], cells[3])
        known = cells[0] in UNPROVEN
        if problems and not known:
            failed.append(f"{cells[0]}: " + "; ".join(problems))
        if known and not problems:
            failed.append(f"{cells[0]} now holds: take it off UNPROVEN")
        if problems and known:
            print(f"{cells[0]}: known unproven ({UNPROVEN[cells[0]]}): " + "; ".join(problems))
    print(f"{rows} rows of docs/seeds.md, {len(failed)} failing")
    for f in failed:
        print("FAIL " + f)
    return 1 if failed or rows < 30 else 0


if __name__ == "__main__":
    sys.exit(main())
