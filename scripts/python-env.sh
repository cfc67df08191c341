#!/usr/bin/env bash
# Creates .venv with the reference packages the tests and benchmarks compare against (never used
# by the product at run time). Prints the venv's python path on the last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
# mlx[cpu]: MLX is one of the third-party writers of the real-file corpus (tests/scripts/reference_writers.py);
# hf-mem (pinned: its formulas are what docs/plan.md compares with) estimates the KV cache beside plan.
# nvidia-cuda-cuobjdump/-nvdisasm: the kernels' machine code read on this machine (scripts/gpu-proof.sh's
# sass step; no GPU needed), the CUDA 13.2 tools reading the CUDA 13.0 build exactly as the device's did.
if ! "$venv/bin/python" -c "import numpy, safetensors, gguf, ml_dtypes, mlx.core, hf_mem" 2>/dev/null ||
   ! ls "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvdisasm > /dev/null 2>&1; then
  "$venv/bin/pip" install -q --disable-pip-version-check numpy safetensors gguf ml_dtypes "mlx[cpu]" hf-mem==0.5.6 \
    nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86 >&2
fi
echo "$venv/bin/python"
