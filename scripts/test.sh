#!/usr/bin/env bash
# Installs what is missing, builds everything (GUI included) and runs every test under CTest; runs
# the GPU proof's CPU rehearsal (the GPU machine's build: GUI off, no simdjson; its tests); then
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
# "100% tests passed" above does not include the GPU test without a GPU: say so in the summary.
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "NOTE: tst_gpu was SKIPPED (no GPU here): the GPU path is proved only by scripts/gpu-proof.sh on a GPU machine"
fi

# The GPU proof's rehearsal: the build the GPU machine gets (GUI off, CUDA for sm_90, simdjson
# hidden, so the headers and index.json go through the nlohmann/json parsers), the tests that build
# there, and tst_gpu expected to skip for want of a device (scripts/gpu-proof.sh --cpu-rehearsal).
OUT="$root/out/gpu-rehearsal" WEIGHTSCOPE_FIXTURES="$fixtures" WEIGHTSCOPE_PYTHON="$python" bash scripts/gpu-proof.sh --cpu-rehearsal

[ "${SKIP_SANITIZE:-0}" = 1 ] && exit 0
cmake --preset sanitize -DWEIGHTSCOPE_PYTHON="$python" -DWEIGHTSCOPE_FIXTURES="$fixtures" >/dev/null
cmake --build build-sanitize -j2
ctest --test-dir build-sanitize --output-on-failure -j2
# A fixed seed, so a red run can be repeated exactly; the long campaigns (docs/fuzzing.md) are random.
FUZZ_PRESET=sanitize FUZZ_SEED=1 JOBS=2 bash scripts/fuzz.sh 60
