#!/usr/bin/env python3
"""Makes tests/data/kt/expert_distribution*.pt: files as SGLang's expert-distribution recorder writes
them (sglang/srt/eplb/expert_distribution.py: torch.save(dict(rank=..., logical_count=<int32
[buffer, layers, experts]>, average_utilization_rate_over_window=...))), shaped for the
transformers-written qwen3_moe fixture (3 layers, 8 experts), which KTransformers' frequency
placement reads as --init-expert-location (kt_ep_wrapper.py _init_kt_gpu_experts_masks).

- expert_distribution.pt: two buffered steps; layer 0 (dense: nothing routed) all zero, layers 1
  and 2 distinct counts, so the top-k of their sums is settled;
- expert_distribution_tied.pt: the same but experts 2..7 of layer 2 all counted 10, so a top-k
  that cuts among them is not settled by torch.topk's definition.

Not run by the suite; run by hand with torch (2.15.0 made the committed files):

  python3 tests/scripts/make_expert_distribution.py tests/data/kt
"""
import os
import sys

import torch


def counts(tied):
    g = torch.Generator().manual_seed(7)
    c = torch.zeros(2, 3, 8, dtype=torch.int32)
    # distinct sums: a permutation of 1..16 scaled, split over the two steps
    sums = (torch.randperm(16, generator=g) + 1) * 37
    c[0, 1:, :] = (sums.view(2, 8) // 3).to(torch.int32)
    c[1, 1:, :] = (sums.view(2, 8) - sums.view(2, 8) // 3).to(torch.int32)
    if tied:
        c[0, 2, 2:] = 4
        c[1, 2, 2:] = 6
    return c


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, tied in (("expert_distribution.pt", False), ("expert_distribution_tied.pt", True)):
        torch.save(dict(rank=0, logical_count=counts(tied), average_utilization_rate_over_window=None), os.path.join(out, name))
