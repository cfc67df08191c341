#!/usr/bin/env bash
# Renders every --screenshot view of the GUI on a fixture and checks that each run succeeds and
# leaves a PNG of the main window's size. Usage: gui_screenshots.sh XVFB-RUN ARGS... -- WEIGHTSCOPE FIXTURES
set -euo pipefail
xvfb=()
while [ "$1" != "--" ]; do xvfb+=("$1"); shift; done
shift
bin="$1" fixtures="$2"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export XDG_CONFIG_HOME="$out/config"  # fresh settings: the default window size, no recent files
check() {  # view, checkpoint
  "${xvfb[@]}" "$bin" --screenshot "$out/$1.png" --view "$1" "$2"
  [ "$(head -c 8 "$out/$1.png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ] || { echo "$1: not a PNG"; exit 1; }
  # width and height from the IHDR chunk: the default main window, 1440 x 860
  size="$(od -An -tu1 -j16 -N8 "$out/$1.png" | awk '{print $3*256+$4 "x" $7*256+$8}')"
  [ "$size" = "1440x860" ] || { echo "$1: $size, expected 1440x860"; exit 1; }
  echo "$1: ok ($size, $(stat -c %s "$out/$1.png") bytes)"
}
for view in tree experts ranks findings residency; do check "$view" "$fixtures/hf/qwen3_moe"; done
check histogram "$fixtures/gguf/tiny-qwen3moe-kquants.gguf"
check preview "$fixtures/hf/qwen3_moe_fp8"
if "${xvfb[@]}" "$bin" --screenshot "$out/x.png" --view nonsense "$fixtures/hf/qwen3_moe" 2>"$out/err"; then
  echo "an unknown view was accepted"; exit 1
fi
grep -q "unknown --view 'nonsense'" "$out/err" || { cat "$out/err"; exit 1; }
echo "all views rendered"
