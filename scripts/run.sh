#!/usr/bin/env bash
# Installs what is missing, builds, and opens the bundled sample checkpoint (written at build time
# by `weightscope synth`): the GUI where a display exists, the headless inspect report otherwise.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2
sample="$root/build/sample"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -z "${WEIGHTSCOPE_HEADLESS:-}" ]; then
  exec build/app/weightscope "$sample"
fi
exec build/app/weightscope inspect "$sample"
