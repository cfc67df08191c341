#!/usr/bin/env bash
# Renders every --screenshot view of the GUI on a fixture and checks that each run succeeds and
# leaves a PNG of its window's size. Usage: gui_screenshots.sh XVFB-RUN ARGS... -- WEIGHTSCOPE FIXTURES
set -euo pipefail
xvfb=()
while [ "$1" != "--" ]; do xvfb+=("$1"); shift; done
shift
bin="$1" fixtures="$2"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export XDG_CONFIG_HOME="$out/config"  # where the user's settings would be
check() {  # view, expected WIDTHxHEIGHT, checkpoint(s)
  local view="$1" want="$2"
  shift 2
  "${xvfb[@]}" "$bin" --screenshot "$out/$view.png" --view "$view" "$@"
  [ "$(head -c 8 "$out/$view.png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ] || { echo "$view: not a PNG"; exit 1; }
  # width and height from the IHDR chunk
  size="$(od -An -tu1 -j16 -N8 "$out/$view.png" | awk '{print $3*256+$4 "x" $7*256+$8}')"
  [ "$size" = "$want" ] || { echo "$view: $size, expected $want"; exit 1; }
  echo "$view: ok ($size, $(stat -c %s "$out/$view.png") bytes)"
}
main=1440x860  # the main window's default size
for view in tree experts ranks findings residency metadata; do check "$view" $main "$fixtures/hf/qwen3_moe"; done
check histogram $main "$fixtures/gguf/tiny-qwen3moe-kquants.gguf"
check preview $main "$fixtures/hf/qwen3_moe_fp8"
check diff 1500x900 "$fixtures/hf/qwen3_moe" "$fixtures/hf/qwen3_moe_fp8"
if "${xvfb[@]}" "$bin" --screenshot "$out/x.png" --view nonsense "$fixtures/hf/qwen3_moe" 2>"$out/err"; then
  echo "an unknown view was accepted"; exit 1
fi
grep -q "unknown --view 'nonsense'" "$out/err" || { cat "$out/err"; exit 1; }
# --screenshot keeps to settings of its own: nothing was read from or written to the user's.
if [ -e "$out/config/Weightscope" ]; then
  echo "--screenshot wrote the user's settings:"; ls -R "$out/config"; exit 1
fi
echo "all views rendered"
