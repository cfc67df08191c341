#!/usr/bin/env bash
# Installs what is missing, builds everything (GUI included) and runs every test under CTest; runs
# the GPU proof's CPU rehearsal (the GPU machine's build: GUI off, no simdjson; its tests); then
# builds the whole suite again with clang under ASan + UBSan, runs it, and runs each libFuzzer
# target for 30 s (FUZZ_SECONDS) from a fixed seed (SKIP_SANITIZE=1 skips this second half, for a
# quick local run). Every compiler runs through ccache where it is installed (CMakeLists.txt; README
# "Compiler cache"). At the end, pass or fail, one line per stage with its wall time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# The stage table: begin_stage names the stage that runs until the next begin_stage (or the end);
# the EXIT trap closes the last one, marks it FAILED when the script is leaving on an error, and
# prints every line. Stages not reached are not listed.
stage_lines=()
stage_name=""
stage_start=0
script_start=$SECONDS
end_stage() {  # status word
  if [ -n "$stage_name" ]; then
    stage_lines+=("$(printf '%-18s %6d s  %s' "$stage_name" $((SECONDS - stage_start)) "$1")")
  fi
  stage_name=""
}
begin_stage() {
  end_stage ok
  stage_name="$1"
  stage_start=$SECONDS
  echo "== $1"
}
print_stages() {
  local status=$?
  end_stage "$([ $status -eq 0 ] && echo ok || echo "FAILED (exit $status)")"
  echo
  echo "stage               wall"
  printf '%s\n' "${stage_lines[@]}"
  printf '%-18s %6d s\n' total $((SECONDS - script_start))
  exit $status
}
trap print_stages EXIT

begin_stage deps
bash scripts/install-deps.sh
python="$(bash scripts/python-env.sh | tail -n 1)"
fixtures="${WEIGHTSCOPE_FIXTURES:-$root/../shared/fixtures}"
# The hit rate of each build below says whether the cache served it (ccache -z resets the counts).
have_ccache=0
command -v ccache > /dev/null && have_ccache=1
cache_stats() {  # build name
  [ $have_ccache = 1 ] || return 0
  echo "ccache after the $1 build: $(ccache --print-stats | awk -F'\t' '$1=="direct_cache_hit"{d=$2} $1=="preprocessed_cache_hit"{p=$2} $1=="cache_miss"{m=$2} END{printf "%d hits, %d misses", d+p, m}')"
  ccache -z > /dev/null
}
[ $have_ccache = 1 ] && ccache -z > /dev/null

begin_stage "normal build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIGHTSCOPE_PYTHON="$python" \
      -DWEIGHTSCOPE_FIXTURES="$fixtures" -DWEIGHTSCOPE_REQUIRE_REFERENCES=ON
cmake --build build -j2
cache_stats normal

begin_stage tests
ctest --test-dir build --output-on-failure -j2
# "100% tests passed" above does not include the GPU test without a GPU: say so in the summary.
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "NOTE: tst_gpu was SKIPPED (no GPU here): the GPU path is proved only by scripts/gpu-proof.sh on a GPU machine"
fi
# A QSKIP inside a test leaves CTest's verdict "Passed": name each skipped case, so none is missed.
skipped_cases() {
  local skips
  skips=$(grep -h '^SKIP   : ' "$1/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u || true)
  if [ -n "$skips" ]; then echo "NOTE: cases skipped inside passing tests ($1):"; echo "$skips"; else echo "no case skipped inside a passing test ($1)"; fi
}
skipped_cases build

# The GPU proof's rehearsal: the build the GPU machine gets (GUI off, CUDA for sm_90, simdjson
# hidden, so the headers and index.json go through the nlohmann/json parsers), the tests that build
# there, and tst_gpu expected to skip for want of a device (scripts/gpu-proof.sh --cpu-rehearsal).
rehearsal() {
  OUT="$root/out/gpu-rehearsal" WEIGHTSCOPE_FIXTURES="$fixtures" WEIGHTSCOPE_PYTHON="$python" \
    bash scripts/gpu-proof.sh --cpu-rehearsal "$@"
}
begin_stage "rehearsal build"
rm -f "$root/out/gpu-rehearsal/steps.txt"
rehearsal --step build
cache_stats rehearsal

begin_stage "rehearsal tests"
rehearsal --step tests --step bench --step sass --step scan
# The kernels' machine code as the device ran it (cuobjdump from the test venv): the table fails the
# stage above when a 16-values-a-thread body regains a stack frame or loses its 16-byte stores.
cat "$root/out/gpu-rehearsal/sass-table.md"
# What a device call would send, packed from the rehearsal's build (its programs, the shared
# fixtures tst_gpu names, nlohmann): over 48 MiB fails here rather than on a lent device.
WEIGHTSCOPE_FIXTURES="$fixtures" bash scripts/gpu-proof.sh --pack

[ "${SKIP_SANITIZE:-0}" = 1 ] && exit 0
begin_stage "sanitizer build"
cmake --preset sanitize -DWEIGHTSCOPE_PYTHON="$python" -DWEIGHTSCOPE_FIXTURES="$fixtures" -DWEIGHTSCOPE_REQUIRE_REFERENCES=ON >/dev/null
cmake --build build-sanitize -j2
cache_stats sanitizer

begin_stage "sanitizer tests"
ctest --test-dir build-sanitize --output-on-failure -j2
skipped_cases build-sanitize

begin_stage fuzz
# A fixed seed, so a red run can be repeated exactly, and 30 s a target: every target runs, its
# regressions first, the first 30 s of what a 60-s run from the same seed would do (a fresh clone
# starts from the same seeds each time). The long campaigns are random (docs/fuzzing.md).
FUZZ_PRESET=sanitize FUZZ_SEED=1 JOBS=2 bash scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
