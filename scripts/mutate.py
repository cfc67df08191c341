#!/usr/bin/env python3
"""Mutation check: applies each one-line bug of scripts/mutations.txt in turn to the source, rebuilds
the build folder (only what the bug touches recompiles), runs the tests named for it, and restores
the file - from a copy taken first, never from git, so uncommitted work is safe. Only the programs
those tests run are rebuilt (every target with --all-tests), so a mutation costs its tests' links,
not the suite's. A mutation whose
tests all pass SURVIVED: a test is missing. Too slow for every CI run (a rebuild per mutation); run
it when a rule or a decoder changes.

usage: scripts/mutate.py [BUILD_DIR] [--only SUBSTRING] [--all-tests]
  BUILD_DIR     a configured build (default: build)
  --only S      only the mutations whose description or file contains S
  --all-tests   run the whole suite for each mutation instead of the tests it names
Exit status: 0 when every mutation was caught, 1 when any survived or could not be applied."""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mutations():
    for n, line in enumerate(open(os.path.join(ROOT, "scripts", "mutations.txt")), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.rstrip("\n").split(" | ")]
        if len(parts) != 5:
            sys.exit(f"mutations.txt:{n}: expected 5 fields separated by ' | ', got {len(parts)}")
        path, old, new, tests, what = parts
        yield n, path, old.replace("\\n", "\n"), new.replace("\\n", "\n"), tests, what


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)


def targets_of(build, tests):
    """The build's programs the selected tests run: each executable under the build folder named on
    a test's command line or in its environment (a Python test is given the CLI's path). Empty:
    build everything."""
    out = run(["ctest", "--test-dir", build, "--show-only=json-v1"] + (["-R", tests] if tests else []))
    if out.returncode != 0:
        return []
    build_dir = os.path.realpath(os.path.join(ROOT, build))
    words = []
    for t in json.loads(out.stdout).get("tests", []):
        words += t.get("command", [])
        for p in t.get("properties", []):
            if p["name"] == "ENVIRONMENT":
                words += [v.split("=", 1)[-1] for v in p["value"]]
    found = {os.path.basename(w) for w in words
             if os.path.realpath(w).startswith(build_dir + os.sep) and os.path.isfile(w) and os.access(w, os.X_OK)}
    return sorted(found)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--only", default="")
    ap.add_argument("--all-tests", action="store_true")
    a = ap.parse_args()
    results = []
    for n, path, old, new, tests, what in mutations():
        if a.only and a.only not in what and a.only not in path:
            continue
        full = os.path.join(ROOT, path)
        original = open(full).read()
        if original.count(old) != 1:
            results.append((n, what, f"NOT APPLIED ({original.count(old)} matches in {path})"))
            continue
        start = time.time()
        try:
            open(full, "w").write(original.replace(old, new))
            targets = [] if a.all_tests else targets_of(a.build, tests)
            built = run(["cmake", "--build", a.build, "-j2"] + (["--target"] + targets if targets else []))
            if built.returncode != 0:
                verdict = "caught (does not compile)"
            else:
                args = ["ctest", "--test-dir", a.build, "-j2"] + ([] if a.all_tests else ["-R", tests])
                t = run(args)
                ran = "No tests were found" not in t.stdout + t.stderr
                verdict = "caught" if t.returncode != 0 and ran else ("NO TESTS MATCHED " + tests if not ran else "SURVIVED")
        finally:
            open(full, "w").write(original)
        results.append((n, what, f"{verdict} ({time.time() - start:.0f} s)"))
        print(f"mutations.txt:{n}: {what}: {results[-1][2]}", flush=True)
    run(["cmake", "--build", a.build, "-j2"])  # the build as the sources are again
    bad = [r for r in results if not r[2].startswith("caught")]
    print(f"{len(results) - len(bad)} of {len(results)} mutations caught")
    for n, what, verdict in bad:
        print(f"  mutations.txt:{n}: {what}: {verdict}")
    return 1 if bad or not results else 0


if __name__ == "__main__":
    sys.exit(main())
