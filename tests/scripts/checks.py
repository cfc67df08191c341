"""The tiny check-and-count harness the reference scripts share (standard library only).
Each script calls check(...) per assertion and finish() last, which prints every failure and the
closing line "N passed, M failed" that CTest logs show, and exits 1 on any failure."""
import sys

passed, failed = 0, []


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failed.append(what)


def said(stderr, limit=300):
    """What a failed run said, for a check's message: a sanitizer's report (its ERROR line, the
    first frames and the SUMMARY) where there is one - it comes after the program's own lines and
    would be cut off - else the first `limit` characters."""
    lines = stderr.strip().splitlines()
    at = next((i for i, l in enumerate(lines) if "Sanitizer:" in l and "ERROR" in l), None)
    if at is None:
        return stderr.strip()[:limit]
    report = [l for l in lines[at:] if l.strip()]
    summary = [l for l in report[6:] if l.startswith("SUMMARY:")]
    return "\n".join(report[:6] + summary)


def fail(what):
    failed.append(what)


def check_doc_block(path, name, text):
    """The text between `<!-- NAME:start -->` and `<!-- NAME:end -->` in the document at `path` is
    `text` (a table the calling test computes), as a check."""
    doc = open(path).read()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in doc or end not in doc:
        fail(f"{path} has no {name} markers")
    else:
        check(doc[doc.index(start) + len(start):doc.index(end)].strip() == text.strip(),
              f"{path}'s {name} block differs from what this run computes (paste the table printed above between the markers)")


def finish(limit=50):
    for f in failed[:limit]:
        print(f)
    print(f"{passed} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


def schemes_by_logical(inspect_json):
    """logical tensor -> the set of schemes its stored tensors carry, from `inspect --json`."""
    out = {}
    for t in inspect_json["tensors"]:
        out.setdefault(t["logical"], set()).add(t["scheme"])
    return out
