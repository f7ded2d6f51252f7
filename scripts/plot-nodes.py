#!/usr/bin/env python3
"""Bar chart of a BENCH_NODES sweep: reads the result lines bench.sh printed (one file per node
count, given in order 1, 2, 3, ...) and writes an SVG of throughput per server core and broker cores.
Usage: scripts/plot-nodes.py out.svg bench-n1.log bench-n2.log bench-n3.log"""
import json
import re
import sys

rows = []
for n, path in enumerate(sys.argv[2:], start=1):
    for line in open(path):
        m = re.match(r"(\S+)\s+tbmq\s+in\+out\s+(\d+) msg/s.*server cores ([\d.]+) (\{[^}]*\})", line)
        if m:
            cpu = json.loads(m.group(4))
            brokers = sum(v for k, v in cpu.items() if k.startswith("broker"))
            rows.append((n, int(m.group(2)), float(m.group(3)), brokers))
w, h, left, bottom = 520, 300, 60, 40
top = max(r[1] / r[2] for r in rows) * 1.15
bar = 60
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
       f'<text x="{w/2}" y="16" text-anchor="middle">P2P QoS 1, 1000 pairs x 5 msg/s: throughput per server core by broker nodes</text>']
for i, (n, rate, cores, brokers) in enumerate(rows):
    per_core = rate / cores
    x = left + 30 + i * (bar + 70)
    bh = (h - bottom - 40) * per_core / top
    y = h - bottom - bh
    out.append(f'<rect x="{x}" y="{y:.0f}" width="{bar}" height="{bh:.0f}" fill="#3b6ea5"/>')
    out.append(f'<text x="{x + bar/2}" y="{y - 4:.0f}" text-anchor="middle">{per_core:,.0f}</text>')
    out.append(f'<text x="{x + bar/2}" y="{h - bottom + 16}" text-anchor="middle">{n} node{"s" if n > 1 else ""}</text>')
    out.append(f'<text x="{x + bar/2}" y="{h - bottom + 30}" text-anchor="middle" fill="#555">brokers {brokers:.2f} cores</text>')
out.append(f'<line x1="{left}" y1="{h - bottom}" x2="{w - 20}" y2="{h - bottom}" stroke="#000"/>')
out.append(f'<text x="14" y="{(h - bottom) / 2}" transform="rotate(-90 14 {(h - bottom) / 2})" text-anchor="middle">msg/s per server core</text>')
out.append('</svg>')
open(sys.argv[1], "w").write("\n".join(out) + "\n")
