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


def fail(what):
    failed.append(what)


def finish(limit=50):
    for f in failed[:limit]:
        print(f)
    print(f"{passed} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)
