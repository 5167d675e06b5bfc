#!/usr/bin/env python3
"""Draws docs/performance.svg from layout_bench's JSON output (Python standard library only).

    layout_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \\
        --benchmark_out=layout_bench.json --benchmark_out_format=json
    python3 bench/plot_performance.py layout_bench.json performance.svg

One panel per element type; in each, per shape, four bars: the time of rope's in-place and
out-of-place calls for both layouts divided by the time of the limit pass over the same bytes
(x *= k in place, a copy loop out of place), medians of the repetitions of one run. Lower is
better; 1 is the memory-bandwidth limit; the dashed line is the 1.3 target of the cache-resident
shapes.
"""

import json
import os
import re
import sys
from xml.sax.saxutils import escape

TYPES = ["float", "double", "half", "bfloat16"]
LAYOUTS = ["interleaved", "half_split"]
# (kernel prefix, limit, legend label, colour)
SERIES = [
    ("apply/interleaved", "limit_in_place", "interleaved, in place", "#1f77b4"),
    ("apply/half_split", "limit_in_place", "half_split, in place", "#ff7f0e"),
    ("apply_out_of_place/interleaved", "limit_copy", "interleaved, out of place", "#aec7e8"),
    ("apply_out_of_place/half_split", "limit_copy", "half_split, out of place", "#ffbb78"),
]
TARGET = 1.3
Y_MAX = 3.0  # bars above are clipped and labelled with their value


def medians(path):
    """run_name -> median real time, from aggregates (or single runs)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    times = {}
    for run in data["benchmarks"]:
        if run.get("run_type") == "aggregate" and run.get("aggregate_name") != "median":
            continue
        # The registered name: without "/min_time:0.300" and similar suffixes.
        name = re.sub(r"/(min_time|iterations|repeats):[^/]*", "", run["run_name"])
        times[name] = run["real_time"]
    return data.get("context", {}), times


def shapes_of(times):
    """Shapes in the order layout_bench runs them, e.g. 'd128x40/t512'."""
    shapes = []
    for name in times:
        if name.startswith("limit_in_place/float/"):
            shape = name[len("limit_in_place/float/"):]
            if shape not in shapes:
                shapes.append(shape)

    def key(shape):
        d, t = shape.split("/")
        return (d != "d128x40", int(d[1:].split("x")[0]), int(t[1:]))

    return sorted(shapes, key=key)


def ratios(times, dtype, shape):
    """The four bars of one shape: kernel time / limit time, None where not measured."""
    out = []
    for kernel, limit, _, _ in SERIES:
        k = times.get(f"{kernel}/{dtype}/{shape}")
        l = times.get(f"{limit}/{dtype}/{shape}")
        out.append(k / l if k and l else None)
    return out


def svg(context, times):
    shapes = shapes_of(times)
    types = [t for t in TYPES if any(f"apply/interleaved/{t}/{s}" in times for s in shapes)]
    panel_w, panel_h = 520, 230
    left, top, gap = 60, 100, 90
    width = left + panel_w + 220
    height = top + len(types) * (panel_h + gap)
    group_w = panel_w / max(1, len(shapes))
    bar_w = group_w * 0.8 / len(SERIES)

    def y_of(value, y0):
        return y0 + panel_h - min(value, Y_MAX) / Y_MAX * panel_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="10" y="22" font-size="15" font-weight="bold">rope: time / time of the '
        "memory-bandwidth limit (lower is better)</text>",
        f'<text x="10" y="42" fill="#555">{escape(context.get("cpu_model", "CPU not recorded"))}'
        f', kernels for {escape(context.get("instruction_set", "an instruction set not recorded"))}'
        f', {context.get("num_cpus", "?")} CPUs, {escape(context.get("date", "")[:10])}</text>',
        '<text x="10" y="60" fill="#555">median of the repetitions of one run; in place against '
        "x *= k, out of place against a copy loop, over the same bytes</text>",
    ]
    for p, dtype in enumerate(types):
        y0 = top + p * (panel_h + gap)
        out.append(f'<text x="{left}" y="{y0 - 24}" font-weight="bold">{dtype}</text>')
        mid = y0 + panel_h / 2
        out.append(f'<text x="16" y="{mid:.1f}" text-anchor="middle" '
                   f'transform="rotate(-90 16 {mid:.1f})">time / limit time</text>')
        out.append(f'<text x="{left + panel_w / 2:.1f}" y="{y0 + panel_h + 34}" '
                   'text-anchor="middle" fill="#555">shape: d(head size)x(heads)/t(tokens)</text>')
        for tick in [0, 0.5, 1, 1.5, 2, 2.5, 3]:
            y = y_of(tick, y0)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + panel_w}" y2="{y:.1f}" '
                       f'stroke="#eee"/>')
            out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
        for value, style in [(1.0, 'stroke="#000"'), (TARGET, 'stroke="#c00" stroke-dasharray="6 4"')]:
            y = y_of(value, y0)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + panel_w}" y2="{y:.1f}" {style}/>')
        for g, shape in enumerate(shapes):
            x0 = left + g * group_w + group_w * 0.1
            for b, value in enumerate(ratios(times, dtype, shape)):
                if value is None:
                    continue
                x = x0 + b * bar_w
                y = y_of(value, y0)
                colour = SERIES[b][3]
                out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 1:.1f}" '
                           f'height="{y0 + panel_h - y:.1f}" fill="{colour}">'
                           f"<title>{escape(SERIES[b][2])}, {shape}: {value:.2f}</title></rect>")
                if value > Y_MAX:
                    out.append(f'<text x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" '
                               f'text-anchor="middle" font-size="9">{value:.1f}</text>')
            out.append(f'<text x="{left + (g + 0.5) * group_w:.1f}" y="{y0 + panel_h + 16}" '
                       f'text-anchor="middle" font-size="10">{escape(shape)}</text>')
    lx = left + panel_w + 20
    for i, (_, _, label, colour) in enumerate(SERIES):
        out.append(f'<rect x="{lx}" y="{top + i * 20}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{lx + 18}" y="{top + i * 20 + 10}">{escape(label)}</text>')
    n = len(SERIES)
    out.append(f'<line x1="{lx}" y1="{top + n * 20 + 6}" x2="{lx + 12}" y2="{top + n * 20 + 6}" '
               'stroke="#000"/>')
    out.append(f'<text x="{lx + 18}" y="{top + n * 20 + 10}">the limit (1)</text>')
    out.append(f'<line x1="{lx}" y1="{top + n * 20 + 26}" x2="{lx + 12}" '
               f'y2="{top + n * 20 + 26}" stroke="#c00" stroke-dasharray="4 2"/>')
    out.append(f'<text x="{lx + 18}" y="{top + n * 20 + 30}">target in cache ({TARGET})</text>')
    for i, line in enumerate(["d128x40/t512: head size 128,", "40 heads (32 query + 8 key),",
                              "512 tokens; t1: one token", "decoded at position 4000"]):
        out.append(f'<text x="{lx}" y="{top + n * 20 + 60 + i * 16}" fill="#555">{line}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 3:
        sys.exit(f"usage: {argv[0]} layout_bench.json out.svg")
    context, times = medians(argv[1])
    if not shapes_of(times):
        sys.exit(f"{argv[1]}: no limit_in_place/float/* benchmark: not layout_bench output?")
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(svg(context, times))
    print(f"SVG: {os.path.abspath(argv[2])}")


if __name__ == "__main__":
    main(sys.argv)
