#!/usr/bin/env bash
# Installs what is missing, builds everything (GUI included) and runs every test under CTest; then
# builds the whole suite again with clang under ASan + UBSan, runs it, and runs each libFuzzer
# target for 60 seconds (SKIP_SANITIZE=1 skips this second half, for a quick local run).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install-deps.sh
python="$(bash scripts/python-env.sh | tail -n 1)"
fixtures="${WEIGHTSCOPE_FIXTURES:-$root/../shared/fixtures}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIGHTSCOPE_PYTHON="$python" \
      -DWEIGHTSCOPE_FIXTURES="$fixtures"
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2

[ "${SKIP_SANITIZE:-0}" = 1 ] && exit 0
cmake --preset sanitize -DWEIGHTSCOPE_PYTHON="$python" -DWEIGHTSCOPE_FIXTURES="$fixtures" >/dev/null
cmake --build build-sanitize -j2
ctest --test-dir build-sanitize --output-on-failure -j2
# A fixed seed, so a red run can be repeated exactly; the long campaigns (docs/fuzzing.md) are random.
FUZZ_PRESET=sanitize FUZZ_SEED=1 JOBS=2 bash scripts/fuzz.sh 60
