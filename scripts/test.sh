#!/usr/bin/env bash
# Installs what is missing, builds everything (GUI included) and runs every test under CTest.
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
