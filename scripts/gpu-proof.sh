#!/usr/bin/env bash
# The GPU proof, for the lent GPU machine (no Qt, no package access there), in steps that each
# write their results under $OUT (or ./out) as they go, so a run cut short still leaves its logs:
#   build   configure and build with the GUI off, CUDA for sm_90 and simdjson not required
#           (configure.log, build.log)
#   tests   tst_gpu run directly, its lines written as they come (gpu-tests.log); a skip (no
#           device) or a run without its closing "N passed, M failed" line is a failure here
#   bench   bench/run_gpu_bench.py, which checks the goals of the GPU-proof issue (gpu-bench.log)
#   scan    bench/run_scan_bench.py on that machine's cores (scan-bench.log): the distributed issue's
#           warm `scales` figure, bounded on the 2-core development machine by counting each scale
#           (docs/benchmarks.md), where the count divides over the cores and cat's read does not.
#           Not one of the default steps: run it as a second command (`--step scan`) when the
#           session's device time allows, after the GPU proof. On the development machine it
#           took 68 s with its two checkpoints already written; a fresh machine writes them
#           (about 6 GB) first.
# Each step has a time limit below the device tool's 10 minutes a command; steps.txt says how each
# ended. Exit status: 0 when every step asked for passed, else 1 (the first failing step is named).
#
# usage: scripts/gpu-proof.sh [--step build|tests|bench|scan]... [--cpu-rehearsal]
#   --cpu-rehearsal  everything a machine without a GPU can do: the same configure and build (here
#                    with simdjson hidden, as it is absent there), the tests that build without a
#                    device, tst_gpu expected to skip for want of one, and the benchmark script's
#                    own check. scripts/test.sh runs it, so a device session starts from a build
#                    known to configure and compile.
# Before a device run from the development machine: cp -r ../shared/fixtures gpu-fixtures and name
# gpu-fixtures in `carry` (../shared does not travel).
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out="${OUT:-$root/out}"
mkdir -p "$out"
build="${GPU_BUILD_DIR:-$root/build-gpu}"
fixtures="${WEIGHTSCOPE_FIXTURES:-$root/gpu-fixtures}"
rehearsal=0
steps=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-rehearsal) rehearsal=1 ;;
    --step) steps+=("$2"); shift ;;
    *) echo "usage: $0 [--step build|tests|bench|scan]... [--cpu-rehearsal]" >&2; exit 2 ;;
  esac
  shift
done
# The rehearsal checks the scan step too; on the device it is a command of its own (above).
if [ ${#steps[@]} -eq 0 ]; then
  steps=(build tests bench)
  [ "$rehearsal" = 1 ] && steps+=(scan)
fi

record() {  # step, status, seconds
  echo "$1 $2 ${3}s" | tee -a "$out/steps.txt"
}

step_build() {
  local extra=()
  # The GPU machine has no simdjson and maybe no libcurl or MPI: the rehearsal hides all three here
  # so the same build is proved.
  [ "$rehearsal" = 1 ] && extra+=(-DCMAKE_DISABLE_FIND_PACKAGE_simdjson=ON -DCMAKE_DISABLE_FIND_PACKAGE_CURL=ON -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON
                                  -DWEIGHTSCOPE_PYTHON="${WEIGHTSCOPE_PYTHON:-}")
  timeout 240 cmake -S . -B "$build" -G Ninja -DWEIGHTSCOPE_GUI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    -DWEIGHTSCOPE_FIXTURES="$fixtures" "${extra[@]}" > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; return 1; }
  grep -q '^CMAKE_CUDA_COMPILER:.*nvcc' "$build/CMakeCache.txt" || { echo "no CUDA compiler found: the kernels would not be built" | tee -a "$out/configure.log"; return 1; }
  if [ "$rehearsal" = 1 ]; then
    grep -q "simdjson not found" "$out/configure.log" || { echo "simdjson was not left out" | tee -a "$out/configure.log"; return 1; }
    grep -q "libcurl not found" "$out/configure.log" || { echo "libcurl was not left out" | tee -a "$out/configure.log"; return 1; }
    grep -q "MPI not found" "$out/configure.log" || { echo "MPI was not left out" | tee -a "$out/configure.log"; return 1; }
  fi
  # 540 s keeps a device command under the tool's 10 minutes on its 16 cores; the rehearsal builds
  # the same tree on the development machine's 2 cores, where no such limit applies.
  local limit=540
  [ "$rehearsal" = 1 ] && limit=2400
  timeout "$limit" cmake --build "$build" -j"$(nproc)" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; return 1; }
  [ -x "$build/tests/tst_gpu" ] || { echo "tst_gpu was not built" | tee -a "$out/build.log"; return 1; }
}

step_tests() {
  local log="$out/gpu-tests.log" rc
  if [ "$rehearsal" = 1 ]; then
    # Without a device: every test this build has, and tst_gpu must say it skipped (exit 77).
    timeout 540 ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -E '^tst_gpu$' > "$out/tests.log" 2>&1 || { tail -30 "$out/tests.log"; return 1; }
    grep -q "tests passed" "$out/tests.log" || { echo "no tests ran" | tee -a "$out/tests.log"; return 1; }
    # Without MPI, --distributed is refused with a reason (exit 2), not a crash.
    "$build/app/weightscope" load "$fixtures/hf/qwen3_moe" --distributed --device host > "$out/no-mpi.log" 2>&1
    rc=$?
    { [ $rc -eq 2 ] && grep -q "this build has no MPI" "$out/no-mpi.log"; } || { echo "load --distributed without MPI: exit $rc" | tee -a "$out/no-mpi.log"; return 1; }
    WEIGHTSCOPE_FIXTURES="$fixtures" timeout 60 "$build/tests/tst_gpu" > "$log" 2>&1
    rc=$?
    [ $rc -eq 77 ] || { echo "tst_gpu exited $rc without a device; expected 77 (skipped)" | tee -a "$log"; return 1; }
    return 0
  fi
  # On the device: line by line into the log (ctest would hold it until the end), large tensors on.
  WS_GPU_LARGE=1 WEIGHTSCOPE_FIXTURES="$fixtures" timeout 540 stdbuf -oL "$build/tests/tst_gpu" > "$log" 2>&1
  rc=$?
  tail -5 "$log"
  [ $rc -eq 77 ] && { echo "tst_gpu skipped: no device answered" | tee -a "$log"; return 1; }
  grep -Eq '^[0-9]+ passed, [0-9]+ failed$' "$log" || { echo "tst_gpu ended (exit $rc) before its summary line" | tee -a "$log"; return 1; }
  return $rc
}

step_bench() {
  local python="${WEIGHTSCOPE_PYTHON:-python3}"
  if [ "$rehearsal" = 1 ]; then
    # No device, no torch here: the script must at least parse and describe itself.
    timeout 60 "$python" -c "import ast, sys; ast.parse(open('bench/run_gpu_bench.py').read())" > "$out/gpu-bench.log" 2>&1 || { cat "$out/gpu-bench.log"; return 1; }
    return 0
  fi
  timeout 540 "$python" bench/run_gpu_bench.py "$build" "$out" > "$out/gpu-bench.log" 2>&1
  local rc=$?
  tail -12 "$out/gpu-bench.log"
  return $rc
}

step_scan() {
  local python="${WEIGHTSCOPE_PYTHON:-python3}"
  # The bench's programs are part of every build; the rehearsal proves they are there and that the
  # script parses (its runs take minutes on 2 cores, and are docs/benchmarks.md's table).
  for program in app/weightscope bench/scale_count_floor; do
    [ -x "$build/$program" ] || { echo "$program was not built" | tee "$out/scan-bench.log"; return 1; }
  done
  if [ "$rehearsal" = 1 ]; then
    timeout 60 "$python" -c "import ast; ast.parse(open('bench/run_scan_bench.py').read())" > "$out/scan-bench.log" 2>&1 || { cat "$out/scan-bench.log"; return 1; }
    return 0
  fi
  # The checkpoints (about 6 GB) go outside $OUT, which comes back to the development machine.
  timeout 540 "$python" bench/run_scan_bench.py "$build" --runs 3 --data "${TMPDIR:-/tmp}/ws-scan-bench" > "$out/scan-bench.log" 2>&1
  local rc=$?
  tail -8 "$out/scan-bench.log"
  return $rc
}

status=0
for s in "${steps[@]}"; do
  case "$s" in build|tests|bench|scan) ;; *) echo "unknown step '$s'" >&2; exit 2 ;; esac
  start=$(date +%s)
  if "step_$s"; then
    record "$s" ok $(( $(date +%s) - start ))
  else
    record "$s" FAILED $(( $(date +%s) - start ))
    status=1
    break  # later steps need this one
  fi
done
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || echo "no nvidia-smi here" > "$out/nvidia-smi.txt"
exit $status
