#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS, JOBS at a time, on
# a corpus seeded from ../shared/fixtures and small synthetic checkpoints. Every input in
# fuzz/regressions/<target>/ (past crashes) is run first.
#
#   scripts/fuzz.sh [SECONDS=60] [TARGET...]
#   env: JOBS (default: cores), FUZZ_OUT (logs), FUZZ_PRESET (CMake preset: "fuzz", optimized
#        targets only, the default; "sanitize", the Debug build CI also runs the tests from),
#        FUZZ_SEED (libFuzzer's -seed: CI fixes it so a run can be repeated; unset, random)
#
# Exit status 1 when any target crashes, leaks, times out or exceeds the memory limits; the input
# that did it is kept in build-<preset>/artifacts/<target>/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds="${1:-60}"
shift || true
bash scripts/install-deps.sh
fixtures="${WEIGHTSCOPE_FIXTURES:-$root/../shared/fixtures}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_safetensors_header fuzz_safetensors_index fuzz_gguf fuzz_config fuzz_tensor_names
                                    fuzz_gguf_blocks fuzz_checkpoint fuzz_torch_save)
jobs="${JOBS:-$(nproc)}"

preset="${FUZZ_PRESET:-fuzz}"
build="build-$preset"
out="${FUZZ_OUT:-$root/$build/fuzz-logs}"
cmake --preset "$preset" >/dev/null
cmake --build "$build" -j"$(nproc)" --target weightscope "${targets[@]}"
rm -rf "$build/seeds"
python3 fuzz/make_seeds.py "$build/app/weightscope" "$fixtures" "$build/seeds"
mkdir -p "$out"

# One target: regressions once, then the timed run. Memory limits make "allocated from a declared
# count" a failure: no input of a few hundred KiB may need a 256 MiB allocation.
run_one() {
  local t="$1" corpus="$build/corpus/$1" art="$build/artifacts/$1/"
  mkdir -p "$corpus" "$art" "$build/seeds/$t"
  local opts=(-malloc_limit_mb=256 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$art")
  [ -n "${FUZZ_SEED:-}" ] && opts+=(-seed="$FUZZ_SEED")
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    "$build/fuzz/$t" "${opts[@]}" fuzz/regressions/"$t"/* >"$out/$t.regressions.log" 2>&1 || { echo "$t: a regression input fails (see $out/$t.regressions.log)"; return 1; }
  fi
  if "$build/fuzz/$t" "${opts[@]}" -max_total_time="$seconds" "$corpus" "$build/seeds/$t" >"$out/$t.log" 2>&1; then
    local stats
    stats=$(grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$out/$t.log" | sed 's/stat:://' | tr '\n' ' ')
    echo "$t: ok  $(grep -E '#[0-9]+.*DONE' "$out/$t.log" | tail -n 1 | sed -E 's/.*(cov: [0-9]+ ft: [0-9]+).*/\1/')  $stats"
  else
    echo "$t: FAILED (see $out/$t.log; input in $art)"
    grep -E 'ERROR|SUMMARY|invariant' "$out/$t.log" | head -n 5 | sed 's/^/    /'
    return 1
  fi
}
export -f run_one
export seconds out build FUZZ_SEED
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}' && status=0 || status=1
exit $status
