#!/usr/bin/env bash
# Remakes the README's screenshots (docs/images) with `weightscope --screenshot` on the fixtures,
# opened by a path relative to the fixtures folder so no picture shows the folders of the machine
# that made it. Needs a build (scripts/run.sh or scripts/test.sh) and xvfb-run.
# Usage: scripts/docs-screenshots.sh [BUILD-DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build}" && pwd)/app/weightscope"
fixtures="${WEIGHTSCOPE_FIXTURES:-$root/../shared/fixtures}"
images="$root/docs/images"
cd "$fixtures"
shot() {  # image name, view, checkpoint(s) relative to the fixtures
  local image="$1" view="$2"
  shift 2
  xvfb-run -a -s "-screen 0 1920x1200x24" "$bin" --screenshot "$images/$image" --view "$view" "$@"
  echo "$image: $view $*"
}
shot main-window.png tree hf/qwen3_moe
shot expert-map.png experts hf/qwen3_moe
shot rank-map.png ranks hf/deepseek_v3
shot scale-histogram.png histogram gguf/tiny-qwen3moe-kquants.gguf
shot dequant-preview.png preview hf/qwen3_moe_fp8
shot findings.png findings hf/qwen3_moe_fp8
shot residency.png residency hf/deepseek_v3
shot metadata.png metadata gguf/tiny-qwen3moe-kquants.gguf
shot diff-window.png diff hf/qwen3_moe hf/qwen3_moe_fp8
