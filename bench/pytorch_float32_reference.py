#!/usr/bin/env python3
"""Writes PyTorch's float32 rotary cos/sin (the recipe of HuggingFace's default RoPE) for a few
positions to tests/data/pytorch_float32_rope.csv, and prints how far its float32 angles are from
the exact ones. Needs PyTorch (Debian: python3-torch); the tests read the CSV, not PyTorch.

    /usr/bin/python3 bench/pytorch_float32_reference.py
"""
import math
import os
import sys

import torch

POSITIONS = [0, 1, 100, 4095, 65535, 1000000]
CONFIGS = [(128, 10000.0), (128, 500000.0), (64, 10000.0)]


def float32_tables(d, base, positions):
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    pos = torch.tensor(positions, dtype=torch.int64).float()
    angles = pos[:, None] @ inv_freq[None, :]  # one float32 product per entry
    return inv_freq, angles, angles.cos(), angles.sin()


def main():
    out = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "pytorch_float32_rope.csv")
    with open(out, "w") as f:
        f.write(f"# PyTorch {torch.__version__}, float32: d,base,position,pair,theta,cos,sin\n")
        for d, base in CONFIGS:
            inv_freq, angles, cos, sin = float32_tables(d, base, POSITIONS)
            for i, m in enumerate(POSITIONS):
                for j in range(d // 2):
                    f.write(f"{d},{base:.1f},{m},{j},{inv_freq[j].item():.9e},"
                            f"{cos[i, j].item():.9e},{sin[i, j].item():.9e}\n")
    print(f"wrote {os.path.normpath(out)}")
    for d, base in CONFIGS:
        inv_freq, angles, cos, sin = float32_tables(d, base, POSITIONS)
        for i, m in enumerate(POSITIONS):
            worst_angle = worst_cos = 0.0
            for j in range(d // 2):
                exact = m * base ** (-2.0 * j / d)  # double
                worst_angle = max(worst_angle, abs(angles[i, j].item() - exact))
                worst_cos = max(worst_cos, abs(cos[i, j].item() - math.cos(exact)),
                                abs(sin[i, j].item() - math.sin(exact)))
            print(f"d={d} base={base:g} position={m}: max |angle error| = {worst_angle:.3g} rad, "
                  f"max |cos/sin error| = {worst_cos:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
