#!/usr/bin/env bash
# The GPU proof, for the lent GPU machine (no Qt, no package access there), in steps that each
# write their results under $OUT (or ./out) as they go, so a run cut short still leaves its logs:
#   build   configure and build with the GUI off, CUDA for sm_90 and simdjson not required; on the
#           device only the programs the later steps run (configure.log, build.log)
#   bench   bench/run_gpu_bench.py, which checks the goals of the GPU-proof issue and that what it
#           timed decodes to the CPU's values (gpu-bench.log, gpu-bench.json)
#   tests   tst_gpu run directly, its lines written as they come (gpu-tests.log); a skip (no
#           device) or a run without its closing "N passed, M failed" line is a failure here
#   sass    each kernel's registers, stack frame and local memory (cuobjdump --dump-resource-usage)
#           and its machine code, for docs/benchmarks.md (sass.txt)
#   scan    bench/run_scan_bench.py on that machine's cores (scan-bench.log): the distributed issue's
#           warm `scales` figure, bounded on the 2-core development machine by counting each scale
#           (docs/benchmarks.md), where the count divides over the cores and cat's read does not.
#           Not one of the default steps: run it as a second command (`--step scan`) when the
#           session's device time allows. A fresh machine writes its checkpoints (about 6 GB) first.
# The default run is build, bench, tests, sass - the benchmark first, as its figures are what a
# short run must not lose - under one deadline (GPU_PROOF_SECONDS, 540 s: the device tool allows
# 600 s a command). Only a failed build stops the later steps; steps.txt says how each ended and
# the exit status is 1 when any failed. At the end everything is packed into all-logs.tgz, as the
# device tool brings back at most 8 files.
#
# usage: scripts/gpu-proof.sh [--step build|bench|tests|sass|scan]... [--cpu-rehearsal]
#        scripts/gpu-proof.sh --pack
#   --cpu-rehearsal  everything a machine without a GPU can do: the same configure and build (here
#                    with simdjson hidden, as it is absent there), the tests that build without a
#                    device, tst_gpu expected to skip for want of one, and the benchmark script's
#                    own check. scripts/test.sh runs it, so a device session starts from a build
#                    known to configure and compile.
#   --pack           on the development machine, before a device call: gpu-carry/ (git-ignored)
#                    with the shared fixtures tst_gpu needs (`tst_gpu --list-fixtures`; the rest
#                    of its corpus is checked-in data, which every call sends) as one xz archive,
#                    nlohmann/json's headers and CMake files (the device's image has no nlohmann)
#                    and the device's programs, then the size of what the call sends - tracked
#                    files plus gpu-carry - against 48 MiB (the GPU-proof issue's goal; the device
#                    tool refuses a call over 64 MiB). scripts/test.sh runs it after the rehearsal,
#                    so CI fails when the payload grows past it. The call:
#                    run(command="bash scripts/gpu-proof.sh", carry=["gpu-carry"], timeout_s=600).
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out="${OUT:-$root/out}"
mkdir -p "$out"
build="${GPU_BUILD_DIR:-$root/build-gpu}"
carried="$root/gpu-carry"
fixtures="${WEIGHTSCOPE_FIXTURES:-$root/gpu-fixtures}"
deadline=$(( $(date +%s) + ${GPU_PROOF_SECONDS:-540} ))
rehearsal=0
pack=0
steps=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-rehearsal) rehearsal=1 ;;
    --pack) pack=1 ;;
    --step) steps+=("$2"); shift ;;
    *) echo "usage: $0 [--step build|bench|tests|sass|scan]... [--cpu-rehearsal] | --pack" >&2; exit 2 ;;
  esac
  shift
done

# What a device call may send: the GPU-proof issue's 48 MiB, well inside the device tool's 64.
payload_limit=$(( 48 << 20 ))
# What the device's steps run, as build targets and as paths in the build folder.
device_targets=(tst_gpu weightscope gpu_dequant_bench scale_count_floor)
device_programs=(tests/tst_gpu app/weightscope bench/gpu_dequant_bench bench/scale_count_floor)

payload_bytes() {  # tracked files plus gpu-carry: what a device call sends
  local tracked carry=0
  tracked=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
  [ -d "$carried" ] && carry=$(find "$carried" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  echo "$tracked $carry"
}

if [ "$pack" = 1 ]; then
  src="${WEIGHTSCOPE_FIXTURES:-$root/../shared/fixtures}"
  rm -rf "$carried" && mkdir -p "$carried/nlohmann/include" "$carried/nlohmann/share/cmake"
  # nlohmann_jsonTargets.cmake finds its headers three folders above itself: prefix/share/cmake/nlohmann_json.
  cp -r /usr/include/nlohmann "$carried/nlohmann/include/" && cp -r /usr/share/cmake/nlohmann_json "$carried/nlohmann/share/cmake/" ||
    { echo "nlohmann/json's headers or CMake files are missing here (apt install nlohmann-json3-dev)" >&2; exit 1; }
  # The device's programs, built here for sm_90 with the static CUDA runtime (the same nvcc 13.0 as
  # the device's): a call that can run them spends no device time compiling. The build step there
  # compiles from source instead when they do not run.
  [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DWEIGHTSCOPE_GUI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_DISABLE_FIND_PACKAGE_simdjson=ON -DCMAKE_DISABLE_FIND_PACKAGE_CURL=ON -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON > /dev/null || exit 1
  cmake --build "$build" -j"$(nproc)" --target "${device_targets[@]}" > /dev/null || { echo "the device's programs do not build here" >&2; exit 1; }
  tar -C "$build" -cf - "${device_programs[@]}" | xz -9 > "$carried/prebuilt.tar.xz" || exit 1
  # The shared fixtures tst_gpu names as carried (tests/device_corpus.h), from the program itself.
  mapfile -t gpu_fixtures < <("$build/tests/tst_gpu" --list-fixtures)
  [ ${#gpu_fixtures[@]} -gt 0 ] || { echo "tst_gpu --list-fixtures named nothing" >&2; exit 1; }
  tar -C "$src" -cf - "${gpu_fixtures[@]}" | xz -9 -T2 > "$carried/fixtures.tar.xz" || { echo "cannot pack the fixtures from $src" >&2; exit 1; }
  read -r tracked carry < <(payload_bytes)
  total=$(( tracked + carry ))
  awk -v t="$tracked" -v c="$carry" -v l="$payload_limit" 'BEGIN { m = 1048576;
    printf "device call payload: %.1f MiB (tracked files %.1f MiB, gpu-carry %.1f MiB); limit %.0f MiB\n", (t + c) / m, t / m, c / m, l / m }'
  [ "$total" -le "$payload_limit" ] || { echo "over the limit: shrink the carried fixtures or the tracked data (the device tool refuses a call over 64 MiB)" >&2; exit 1; }
  exit 0
fi

# On the device: the carried fixtures unpacked (python's tarfile: the image may lack xz), nlohmann
# from the carry when the image has none.
if [ "$rehearsal" = 0 ] && [ ! -d "$fixtures" ] && [ -f "$carried/fixtures.tar.xz" ]; then
  mkdir -p "$fixtures" && python3 -m tarfile -e "$carried/fixtures.tar.xz" "$fixtures" || { echo "cannot unpack the carried fixtures" >&2; exit 1; }
fi
prefix_path=()
[ -d "$carried/nlohmann" ] && prefix_path=(-DCMAKE_PREFIX_PATH="$carried/nlohmann")

# The rehearsal checks the scan step too; on the device it is a command of its own (above).
if [ ${#steps[@]} -eq 0 ]; then
  steps=(build bench tests sass)
  [ "$rehearsal" = 1 ] && steps+=(scan)
fi

record() {  # step, status, seconds
  echo "$1 $2 ${3}s" | tee -a "$out/steps.txt"
}

left() {  # seconds a step may take: its own limit, or what is left before the deadline if less
  local rest=$(( deadline - $(date +%s) - 15 ))  # 15 s kept for packing the logs
  [ "$rehearsal" = 1 ] && rest=$1
  [ "$rest" -lt 1 ] && rest=1
  echo $(( $1 < rest ? $1 : rest ))
}

# The carried programs, when they run here: a missing library or a refused binary falls back to compiling.
prebuilt_runs() {
  [ "$rehearsal" = 0 ] && [ -f "$carried/prebuilt.tar.xz" ] || return 1
  mkdir -p "$build" && python3 -m tarfile -e "$carried/prebuilt.tar.xz" "$build" || return 1
  ! ldd "$build/tests/tst_gpu" "$build/app/weightscope" "$build/bench/gpu_dequant_bench" | grep -q "not found" &&
    "$build/app/weightscope" --version > "$out/build.log" 2>&1
}

step_build() {
  if prebuilt_runs; then
    echo "the programs built on the development machine (gpu-carry/prebuilt.tar.xz) run here: not compiled again" | tee -a "$out/build.log"
    return 0
  fi
  rm -rf "$build"
  local extra=()
  # The GPU machine has no simdjson and maybe no libcurl or MPI: the rehearsal hides all three here
  # so the same build is proved.
  [ "$rehearsal" = 1 ] && extra+=(-DCMAKE_DISABLE_FIND_PACKAGE_simdjson=ON -DCMAKE_DISABLE_FIND_PACKAGE_CURL=ON -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON
                                  -DWEIGHTSCOPE_PYTHON="${WEIGHTSCOPE_PYTHON:-}")
  timeout "$(left 240)" cmake -S . -B "$build" -G Ninja -DWEIGHTSCOPE_GUI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    -DWEIGHTSCOPE_FIXTURES="$fixtures" "${prefix_path[@]}" "${extra[@]}" > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; return 1; }
  grep -q '^CMAKE_CUDA_COMPILER:.*nvcc' "$build/CMakeCache.txt" || { echo "no CUDA compiler found: the kernels would not be built" | tee -a "$out/configure.log"; return 1; }
  if [ "$rehearsal" = 1 ]; then
    grep -q "simdjson not found" "$out/configure.log" || { echo "simdjson was not left out" | tee -a "$out/configure.log"; return 1; }
    grep -q "libcurl not found" "$out/configure.log" || { echo "libcurl was not left out" | tee -a "$out/configure.log"; return 1; }
    grep -q "MPI not found" "$out/configure.log" || { echo "MPI was not left out" | tee -a "$out/configure.log"; return 1; }
  fi
  # The device builds only what its steps run, inside the deadline; the rehearsal builds the whole
  # tree on the development machine's 2 cores (its tests run below), where no such limit applies.
  local targets=(--target "${device_targets[@]}")
  [ "$rehearsal" = 1 ] && targets=()
  timeout "$(left 2400)" cmake --build "$build" -j"$(nproc)" "${targets[@]}" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; return 1; }
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
  WS_GPU_LARGE=1 WEIGHTSCOPE_FIXTURES="$fixtures" WEIGHTSCOPE_SOURCE_DIR="$root" timeout "$(left 540)" stdbuf -oL "$build/tests/tst_gpu" > "$log" 2>&1
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
  PYTHONUNBUFFERED=1 timeout "$(left 540)" "$python" bench/run_gpu_bench.py "$build" "$out" > "$out/gpu-bench.log" 2>&1
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
  timeout "$(left 540)" "$python" bench/run_scan_bench.py "$build" --runs 3 --data "${TMPDIR:-/tmp}/ws-scan-bench" > "$out/scan-bench.log" 2>&1
  local rc=$?
  tail -8 "$out/scan-bench.log"
  return $rc
}

step_sass() {
  # cuobjdump reads the kernels' machine code out of the test program that links them: the device
  # image's, or here the test venv's (PyPI nvidia-cuda-cuobjdump and -nvdisasm, scripts/python-env.sh).
  local python="${WEIGHTSCOPE_PYTHON:-python3}" venvbin
  venvbin=$("$python" -c "import nvidia, os; print(next((os.path.join(p, 'cu13', 'bin') for p in nvidia.__path__ if os.path.isdir(os.path.join(p, 'cu13', 'bin'))), ''))" 2>/dev/null)
  [ -n "$venvbin" ] && export PATH="$PATH:$venvbin"
  command -v cuobjdump > /dev/null || { echo "no cuobjdump here or in the test venv" | tee "$out/sass.txt"; return 1; }
  { cuobjdump --dump-resource-usage "$build/tests/tst_gpu" && cuobjdump --dump-sass "$build/tests/tst_gpu"; } > "$out/sass.txt" 2>&1 || { tail -3 "$out/sass.txt"; return 1; }
  # The per-kernel table for docs/benchmarks.md; it fails when a 16-values-a-thread body has a stack
  # frame or lost its 16-byte stores.
  python3 scripts/sass_table.py "$out/sass.txt" > "$out/sass-table.md"
}

status=0
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || echo "no nvidia-smi here" > "$out/nvidia-smi.txt"
for s in "${steps[@]}"; do
  case "$s" in build|bench|tests|sass|scan) ;; *) echo "unknown step '$s'" >&2; exit 2 ;; esac
  start=$(date +%s)
  if "step_$s"; then
    record "$s" ok $(( $(date +%s) - start ))
  else
    record "$s" FAILED $(( $(date +%s) - start ))
    status=1
    [ "$s" = build ] && break  # every later step runs what the build makes
  fi
done
if [ "$rehearsal" = 0 ]; then
  # At most 8 files come back from a device call: everything in one archive, the large logs only there.
  tar -C "$out" -czf "$root/all-logs.tgz" . && mv "$root/all-logs.tgz" "$out/" && rm -f "$out/configure.log" "$out/build.log" "$out/load-report.json" "$out/sass.txt"
fi
exit $status
