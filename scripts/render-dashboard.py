#!/usr/bin/env python3
"""Draws the Grafana dashboard's panels (config/grafana/tbmq-brokers.json) as one SVG, from the
Prometheus range data MonitoringDashboardIT saved while a real Prometheus scraped a broker under load.
Usage: scripts/render-dashboard.py broker/target/monitoring/dashboard-data.json docs/img/dashboard.svg"""
import json
import math
import re
import sys

COLORS = ["#3b6ea5", "#d1603d", "#4f9a56", "#8e5ea2", "#c9a227", "#5aa5b5", "#a0522d", "#777777"]
PANEL_W, PANEL_H, COLS, PAD = 460, 210, 2, 14


def legend(fmt, labels):
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt) or "value"


def human(v, unit):
    if unit == "s":
        return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s"
    if unit == "bytes":
        return f"{v / 2**20:.0f} MiB"
    if abs(v) >= 1000:
        return f"{v / 1000:.1f}k"
    return f"{v:.2f}".rstrip("0").rstrip(".") if v != int(v) else f"{int(v)}"


def panel_svg(panel, x0, y0):
    lines = []
    for s in panel["series"]:
        for r in s["result"] or []:
            pts = [(float(t), float(v)) for t, v in r["values"] if not math.isnan(float(v)) and not math.isinf(float(v))]
            if pts:
                lines.append((legend(s["legend"], r.get("metric", {})), pts))
    out = [f'<rect x="{x0}" y="{y0}" width="{PANEL_W}" height="{PANEL_H}" fill="#fafafa" stroke="#ccc"/>',
           f'<text x="{x0 + 8}" y="{y0 + 16}" font-weight="bold">{panel["title"]}</text>']
    left, right, top, bottom = x0 + 58, x0 + PANEL_W - 10, y0 + 26, y0 + PANEL_H - 46
    if not lines:
        out.append(f'<text x="{x0 + PANEL_W / 2}" y="{y0 + PANEL_H / 2}" text-anchor="middle" fill="#999">no data</text>')
        return out
    t_min = min(p[0] for _, pts in lines for p in pts)
    t_max = max(p[0] for _, pts in lines for p in pts)
    v_max = max(p[1] for _, pts in lines for p in pts) or 1.0
    v_max *= 1.1
    for frac in (0, 0.5, 1):
        y = bottom - (bottom - top) * frac
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#e2e2e2"/>')
        out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{human(v_max * frac, panel["unit"])}</text>')
    out.append(f'<text x="{right}" y="{bottom + 14}" text-anchor="end" fill="#555">{int(t_max - t_min)} s</text>')
    per_row = 2 if max(len(n) for n, _ in lines[:8]) > 20 else 3
    for i, (name, pts) in enumerate(lines[:8]):
        color = COLORS[i % len(COLORS)]
        span = (t_max - t_min) or 1
        path = " ".join(f"{left + (right - left) * (t - t_min) / span:.1f},{bottom - (bottom - top) * v / v_max:.1f}" for t, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        lx = x0 + 10 + (i % per_row) * (450 // per_row)
        ly = bottom + 26 + (i // per_row) * 13
        out.append(f'<rect x="{lx}" y="{ly - 8}" width="10" height="3" fill="{color}"/>')
        out.append(f'<text x="{lx + 14}" y="{ly - 3}" fill="#333">{name[:32]}</text>')
    return out


def main():
    panels = json.load(open(sys.argv[1]))
    rows = math.ceil(len(panels) / COLS)
    w, h = COLS * (PANEL_W + PAD) + PAD, rows * (PANEL_H + PAD) + PAD + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{PAD}" y="18" font-size="14" font-weight="bold">TBMQ brokers (config/grafana/tbmq-brokers.json), '
           f'from a real Prometheus scraping a broker under load</text>']
    for i, panel in enumerate(panels):
        out += panel_svg(panel, PAD + (i % COLS) * (PANEL_W + PAD), 30 + (i // COLS) * (PANEL_H + PAD))
    out.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
