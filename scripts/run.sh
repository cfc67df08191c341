#!/usr/bin/env bash
# Installs what is missing, builds the product, and opens the bundled sample checkpoint (written at build time
# by `weightscope synth`): the GUI where a display exists, the headless inspect report otherwise.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
# Only what runs: the product and its sample (the tests and benchmarks are scripts/test.sh's).
cmake --build build -j2 --target weightscope sample
sample="$root/build/sample"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -z "${WEIGHTSCOPE_HEADLESS:-}" ]; then
  exec build/app/weightscope "$sample"
fi
exec build/app/weightscope inspect "$sample"
