#!/usr/bin/env bash
# Installs what is missing, builds everything (GUI included) and runs every test under CTest; builds
# again without the optional libraries (GUI off, no simdjson) and runs what that build has; then
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

# The build a machine without package access gets (the GPU machine: no Qt, no simdjson): GUI off
# and simdjson hidden, so the headers and index.json go through the nlohmann/json parsers; its
# tests must pass the same. (CUDA is left out here only to save CI time: the first build has it.)
cmake -S . -B build-minimal -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIGHTSCOPE_GUI=OFF -DWEIGHTSCOPE_CUDA=OFF \
      -DWEIGHTSCOPE_BENCH=OFF -DCMAKE_DISABLE_FIND_PACKAGE_simdjson=ON -DWEIGHTSCOPE_PYTHON="$python" \
      -DWEIGHTSCOPE_FIXTURES="$fixtures" | grep -i "simdjson" || { echo "the minimal build did not say simdjson is left out"; exit 1; }
cmake --build build-minimal -j2
ctest --test-dir build-minimal --output-on-failure -j2

[ "${SKIP_SANITIZE:-0}" = 1 ] && exit 0
cmake --preset sanitize -DWEIGHTSCOPE_PYTHON="$python" -DWEIGHTSCOPE_FIXTURES="$fixtures" >/dev/null
cmake --build build-sanitize -j2
ctest --test-dir build-sanitize --output-on-failure -j2
# A fixed seed, so a red run can be repeated exactly; the long campaigns (docs/fuzzing.md) are random.
FUZZ_PRESET=sanitize FUZZ_SEED=1 JOBS=2 bash scripts/fuzz.sh 60
