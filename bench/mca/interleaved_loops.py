#!/usr/bin/env python3
"""Cycles of the kernels' inner loops on CPUs this machine is not, from llvm-mca's models.

Writes the loop over one head of 128 floats as the kernels compile it (8 registers of pairs,
AVX2 ymm or AVX-512 zmm) in three forms and prints llvm-mca's cycles per iteration for each
core: the interleaved product with duplicating loads (AVX-512's form), the prepared form (one
load, one swap, AVX2's form) and half_split's loop, for comparison. A model, not a measurement:
docs/design.md ("The kernels") says what each was used for.

    python3 bench/mca/interleaved_loops.py [llvm-mca]
"""
import os
import re
import subprocess
import sys
import tempfile


def loops(width):
    reg = "ymm" if width == 32 else "zmm"
    duplicating, prepared, half_split = [], [], []
    for k in range(8):
        o = width * k
        duplicating += [
            f"vmovshdup {o}(%rax), %{reg}15", f"vmovsldup {o}(%rax), %{reg}0",
            f"vmulps %{reg}15, %{reg}{8 + k}, %{reg}15",
            f"vfmaddsub132ps %{reg}{k}, %{reg}15, %{reg}0", f"vmovups %{reg}0, {o}(%rdx)"]
        # The row's cos and sin, read only: ymm2..7 and ymm8..13 (16 registers: some repeat),
        # zmm16..23 and zmm24..31.
        c, s = (2 + k % 6, 8 + k % 6) if width == 32 else (16 + k, 24 + k)
        prepared += [
            f"vmovups {o}(%rax), %{reg}1", f"vpermilps $177, %{reg}1, %{reg}0",
            f"vmulps %{reg}{s}, %{reg}0, %{reg}0", f"vfmaddsub231ps %{reg}{c}, %{reg}1, %{reg}0",
            f"vmovups %{reg}0, {o}(%rdx)"]
    for k in range(4):
        o = width * k
        half = 4 * width
        a, b, y0, y1 = (12, 13, 14, 15) if width == 32 else (24, 25, 26, 27)
        half_split += [
            f"vmovups {o}(%rax), %{reg}{a}", f"vmovups {o + half}(%rax), %{reg}{b}",
            f"vmulps %{reg}{k}, %{reg}{a}, %{reg}{y0}",
            f"vfnmadd231ps %{reg}{k + 4}, %{reg}{b}, %{reg}{y0}", f"vmovups %{reg}{y0}, {o}(%rdx)",
            f"vmulps %{reg}{k}, %{reg}{b}, %{reg}{y1}",
            f"vfmadd231ps %{reg}{k + 4}, %{reg}{a}, %{reg}{y1}",
            f"vmovups %{reg}{y1}, {o + half}(%rdx)"]
    tail = [f"addq ${8 * width}, %rax", f"addq ${8 * width}, %rdx", "decq %rcx", "jne .L0"]
    return {name: "\n".join(body + tail) + "\n" for name, body in
            (("duplicating loads", duplicating), ("prepared", prepared), ("half_split", half_split))}


def cycles(mca, cpu, text):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run([mca, f"-mcpu={cpu}", "-iterations=200", f.name],
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    m = re.search(r"Total Cycles:\s+(\d+)", out)
    return f"{int(m.group(1)) / 200:.1f}" if m else "-"


def main():
    mca = sys.argv[1] if len(sys.argv) > 1 else "llvm-mca"
    print("| core | width | duplicating loads | prepared | half_split |")
    print("| --- | --- | ---: | ---: | ---: |")
    for cpu, widths in (("znver2", (32,)), ("znver3", (32,)), ("haswell", (32,)),
                        ("skylake", (32,)), ("icelake-server", (32, 64)),
                        ("skylake-avx512", (64,)), ("sapphirerapids", (64,))):
        for width in widths:
            row = [cycles(mca, cpu, text) for text in loops(width).values()]
            print(f"| {cpu} | {'ymm' if width == 32 else 'zmm'} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
