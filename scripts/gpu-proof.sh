#!/usr/bin/env bash
# The GPU-proof run, meant for the lent GPU machine (no Qt there): build without the GUI, run the
# gpu tests (with large synthetic tensors) and the GPU benchmarks; results go to $OUT (or ./out).
# Before calling it from the development machine, copy the fixtures into the git-ignored
# gpu-fixtures/ (cp -r ../shared/fixtures gpu-fixtures) and name gpu-fixtures in `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/out}"
mkdir -p "$out"
cmake -S . -B build-gpu -G Ninja -DWEIGHTSCOPE_GUI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
      -DWEIGHTSCOPE_FIXTURES="$PWD/gpu-fixtures" > "$out/configure.log" 2>&1
cmake --build build-gpu -j"$(nproc)" > "$out/build.log" 2>&1
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
WS_GPU_LARGE=1 WEIGHTSCOPE_FIXTURES="$PWD/gpu-fixtures" ctest --test-dir build-gpu -L gpu --output-on-failure > "$out/gpu-tests.log" 2>&1 || true
tail -5 "$out/gpu-tests.log"
python3 bench/run_gpu_bench.py build-gpu "$out" > "$out/gpu-bench.log" 2>&1 || true
tail -8 "$out/gpu-bench.log"
