"""Small SVG line charts for the benchmark report (stdlib only).

matplotlib is not available on the bench machines, and the charts needed
are simple: lines with markers, linear or log axes, a legend. PNG copies
are made from the SVG by rsvg-convert (see png_copy).
"""
import math
import shutil
import subprocess
from xml.sax.saxutils import escape

# Colour-blind-safe palette (Okabe & Ito), then greys.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
           "#C9B400", "#000000", "#777777", "#8B4513", "#6A3D9A", "#AAAAAA"]
MARKERS = ["circle", "square", "diamond", "triangle"] * 3


def _nice_step(span, target_ticks=6):
    raw = span / max(1, target_ticks)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _fmt(v):
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6 or a < 1e-3:
        exp = int(math.floor(math.log10(a)))
        mant = v / 10 ** exp
        return ("%g" % mant if mant != 1 else "") + ("e%d" % exp if mant != 1 else "1e%d" % exp)
    return "%g" % round(v, 6)


class Axis:
    def __init__(self, lo, hi, log=False, label="", reverse=False):
        if log:
            lo, hi = max(lo, 1e-12), max(hi, 1e-12)
            if hi <= lo:
                hi = lo * 10
        elif hi <= lo:
            hi = lo + 1
        self.lo, self.hi, self.log, self.label, self.reverse = lo, hi, log, label, reverse

    def frac(self, v):
        if self.log:
            v = max(v, self.lo)
            f = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            f = (v - self.lo) / (self.hi - self.lo)
        return 1 - f if self.reverse else f

    def ticks(self):
        if self.log:
            out = []
            e = math.floor(math.log10(self.lo))
            while 10 ** e <= self.hi * 1.0001:
                if 10 ** e >= self.lo * 0.9999:
                    out.append(10 ** e)
                e += 1
            return out
        step = _nice_step(self.hi - self.lo)
        v = math.ceil(self.lo / step) * step
        out = []
        while v <= self.hi + step * 1e-9:
            out.append(round(v, 10))
            v += step
        return out


def _marker(kind, x, y, color, r=3.5):
    if kind == "square":
        return '<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' % (
            x - r, y - r, 2 * r, 2 * r, color)
    if kind == "diamond":
        return '<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>' % (
            x, y - r * 1.3, x + r * 1.3, y, x, y + r * 1.3, x - r * 1.3, y, color)
    if kind == "triangle":
        return '<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>' % (
            x, y - r * 1.3, x + r * 1.2, y + r, x - r * 1.2, y + r, color)
    return '<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>' % (x, y, r, color)


def line_chart(path, title, series, xaxis, yaxis, width=720, height=440, note=""):
    """series: [(label, [(x, y), ...])]; y values above yaxis.hi are drawn
    at the top edge with an open marker (clipped), None breaks a line."""
    left, right, top, bottom = 70, 190, 40, 60
    pw, ph = width - left - right, height - top - bottom

    def px(x):
        return left + xaxis.frac(x) * pw

    def py(y):
        return top + (1 - yaxis.frac(y)) * ph

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">'
           % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>' % (left, escape(title))]
    for t in xaxis.ticks():
        x = px(t)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>' % (x, top, x, top + ph))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, top + ph + 18, _fmt(t)))
    for t in yaxis.ticks():
        y = py(t)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>' % (left, y, left + pw, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 6, y + 4, _fmt(t)))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>' % (left, top, pw, ph))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (left + pw / 2, height - 18,
                                                                           escape(xaxis.label)))
    out.append('<text transform="translate(16,%.1f) rotate(-90)" text-anchor="middle">%s</text>'
               % (top + ph / 2, escape(yaxis.label)))
    for i, (label, points) in enumerate(series):
        color, marker = PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]
        # Successive series are offset by a pixel so identical lines stay visible.
        dy = (i - len(series) / 2) * 0.8
        segs, cur = [], []
        for x, y in points:
            if y is None or x is None:
                if cur:
                    segs.append(cur)
                cur = []
                continue
            cur.append((x, y))
        if cur:
            segs.append(cur)
        for seg in segs:
            pts = " ".join("%.1f,%.1f" % (px(x), py(min(y, yaxis.hi)) + dy) for x, y in seg)
            if len(seg) > 1:
                out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"/>' % (pts, color))
            for x, y in seg:
                if y > yaxis.hi:
                    out.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="white" stroke="%s"/>'
                               % (px(x), py(yaxis.hi) + dy, color))
                else:
                    out.append(_marker(marker, px(x), py(y) + dy, color))
        ly = top + 10 + i * 20
        lx = left + pw + 14
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                   % (lx, ly, lx + 22, ly, color))
        out.append(_marker(marker, lx + 11, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 28, ly + 4, escape(label)))
    if note:
        out.append('<text x="%d" y="%d" font-size="10" fill="#555">%s</text>' % (left, height - 4, escape(note)))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def png_copy(svg_path):
    """Writes <name>.png next to the SVG; returns its path, or None when
    rsvg-convert is missing or fails."""
    exe = shutil.which("rsvg-convert")
    if exe is None:
        return None
    png = svg_path[:-4] + ".png"
    r = subprocess.run([exe, "-b", "white", "-o", png, svg_path], capture_output=True)
    return png if r.returncode == 0 else None
