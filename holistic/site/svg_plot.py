"""The accuracy-against-latency (Pareto) plots as SVG, written directly: no plotting library, no
layout pass, the same bytes for the same points.

Lengths are in points (the SVG's ``viewBox`` units; its width and height are given in ``pt``).
Text is measured with the advance widths of DejaVu Sans (the common sans-serif the SVG asks for
first, wider than Arial and Helvetica, which it falls back to); a character outside ASCII counts
as :data:`_WIDE` em, wider than any of their glyphs, so an estimate is never short.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

COLORS = ("#0b5cad", "#c2410c", "#15803d", "#7e22ce", "#a16207", "#0e7490", "#be185d", "#4d7c0f", "#475569", "#9f1239")
"""Each system's colour, in turn."""
MARKERS = ("o", "s", "^", "D", "v", "P")
"""Each system's marker, changed after each turn of the colours."""
FRONTIER_COLOR = "#b42318"

_FONT = "DejaVu Sans, Bitstream Vera Sans, Arial, Helvetica, sans-serif"
# fmt: off
# Advance widths (per 1000 em) of DejaVu Sans and DejaVu Sans Bold, characters 32 (space) to 126 (~).
_ADVANCE = (
    (318, 348), (401, 456), (460, 521), (838, 838), (636, 696), (950, 1002), (780, 872), (275, 306), (390, 457), (390, 457),
    (500, 523), (838, 838), (318, 380), (361, 415), (318, 380), (337, 365), (636, 696), (636, 696), (636, 696), (636, 696),
    (636, 696), (636, 696), (636, 696), (636, 696), (636, 696), (636, 696), (337, 400), (337, 400), (838, 838), (838, 838),
    (838, 838), (531, 580), (1000, 1000), (684, 774), (686, 762), (698, 734), (770, 830), (632, 683), (575, 683), (775, 821),
    (752, 837), (295, 372), (295, 372), (656, 775), (557, 637), (863, 995), (748, 837), (787, 850), (603, 733), (787, 850),
    (695, 770), (635, 720), (611, 682), (732, 812), (684, 774), (989, 1103), (685, 771), (611, 724), (685, 725), (390, 457),
    (337, 365), (390, 457), (838, 838), (500, 500), (500, 500), (613, 675), (635, 716), (550, 593), (635, 716), (615, 678),
    (352, 435), (635, 716), (634, 712), (278, 343), (278, 343), (579, 665), (278, 343), (974, 1042), (634, 712), (612, 687),
    (635, 716), (635, 716), (411, 493), (521, 595), (392, 478), (634, 712), (592, 652), (818, 924), (592, 645), (592, 652),
    (525, 582), (636, 712), (337, 365), (636, 712), (838, 838),
)
# fmt: on
_WIDE = 1.25
"""Width (em) counted for a character outside ASCII: more than a CJK ideograph or most emoji take."""
_ASCENT, _DESCENT = 0.95, 0.25
"""Height (em) of a line of text above and below its baseline: more than DejaVu Sans (0.93, 0.24)
and Arial (0.91, 0.21) take."""

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def escape(text: str) -> str:
    """``text`` as XML character data or an attribute value: markup escaped, characters XML cannot
    hold (controls, lone surrogates) replaced by U+FFFD. (Text from data is written in its own
    ``text`` element: a bidirectional control in it reorders none of the text around it.)"""
    text = _NOT_XML.sub("\ufffd", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width (points) ``text`` takes at ``size`` points: never less than a browser draws it."""
    return size * sum(_ADVANCE[ord(c) - 32][bold] / 1000 if 32 <= ord(c) < 127 else _WIDE for c in text)


def nice_ticks(lo: float, hi: float, most: int = 7) -> tuple[list[float], int]:
    """Round ticks (steps of 1, 2, 2.5 or 5 times a power of ten) inside ``[lo, hi]``, at most
    ``most`` of them; and the decimals that write them apart."""
    raw = (hi - lo) / max(most - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9)
    ticks = [(first + i) * step for i in range(int((hi - lo) / step + 1e-9) + 2)]
    ticks = [0.0 if abs(t) < step * 1e-9 else t for t in ticks if t <= hi + step * 1e-9]
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if round(step / power, 3) == 2.5 else 0)
    return ticks, decimals


def tick_label(value: float, decimals: int) -> str:
    if abs(value) >= 1e9 or decimals > 9:
        return f"{value:.3g}"
    return f"{value:.{decimals}f}"


def _limits(values: list[tuple[float, float, float]]) -> tuple[float, float]:
    """The axis range of ``(value, below, above)``: every interval, and a tenth of the span either side."""
    lo = min(v - below for v, below, _ in values)
    hi = max(v + above for v, _, above in values)
    if not hi > lo:
        pad = abs(lo) * 0.05 or 0.5
        return lo - pad, hi + pad
    return lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo)


def _num(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def marker_path(marker: str, x: float, y: float, size: float = 6.0) -> str:
    """An SVG path of ``marker`` (a matplotlib marker letter of :data:`MARKERS`) of ``size`` points at (x, y)."""
    r = size / 2
    if marker == "o":
        return f"M{_num(x - r)} {_num(y)}a{_num(r)} {_num(r)} 0 1 0 {_num(size)} 0a{_num(r)} {_num(r)} 0 1 0 {_num(-size)} 0Z"
    s = r * 0.8
    shapes = {
        "s": [(-s, -s), (s, -s), (s, s), (-s, s)],
        "^": [(0, -r), (r, r * 0.75), (-r, r * 0.75)],
        "v": [(0, r), (r, -r * 0.75), (-r, -r * 0.75)],
        "D": [(0, -r), (r * 0.75, 0), (0, r), (-r * 0.75, 0)],
        "P": [(a * s / 3, b * s / 3) for a, b in ((-1, -3), (1, -3), (1, -1), (3, -1), (3, 1), (1, 1), (1, 3))]
        + [(a * s / 3, b * s / 3) for a, b in ((-1, 3), (-1, 1), (-3, 1), (-3, -1), (-1, -1))],
    }
    corners = shapes[marker]
    return "M" + "L".join(f"{_num(x + dx)} {_num(y + dy)}" for dx, dy in corners) + "Z"


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def inside(self, other: Box) -> bool:
        return self.x0 >= other.x0 and self.x1 <= other.x1 and self.y0 >= other.y0 and self.y1 <= other.y1

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1


def text_box(text: str, x: float, size: float, anchor: str, baseline: float, bold: bool = False) -> Box:
    """The box of ``text`` written at ``x`` (``anchor``: start, middle or end) on baseline ``baseline``."""
    width = text_width(text, size, bold)
    x0 = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return Box(x0, baseline - _ASCENT * size, x0 + width, baseline + _DESCENT * size)


LABEL_SIZE = 8.0
_PLACEMENTS = ((3, -3, "start", "bottom"), (-3, -3, "end", "bottom"), (3, 3, "start", "top"), (-3, 3, "end", "top"))
"""Where a point's label may go: offset (points, y down) and alignment, up-right first."""


def label_spot(x: float, y: float, text: str, dx: float, dy: float, anchor: str, align: str) -> tuple[float, Box]:
    """The baseline and box of ``text`` offset by (dx, dy) from (x, y), its ``align`` edge (top or bottom) there."""
    edge = y + dy
    size = LABEL_SIZE
    baseline = edge - _DESCENT * size if align == "bottom" else edge + _ASCENT * size
    return baseline, text_box(text, x + dx, size, anchor, baseline, bold=True)


def place_labels(
    points: Sequence[tuple[float, float]], labels: Sequence[str], axes: Box
) -> list[tuple[float, float, str, Box]]:
    """Where each point's label is written, ``(x, baseline, anchor, box)``: the first placement
    (up-right, up-left, down-right, down-left) that stays inside ``axes`` and overlaps no label
    placed before, else the first that stays inside (centred above the point when none does)."""
    placed: list[tuple[float, float, str, Box]] = []
    for (x, y), text in zip(points, labels, strict=True):
        fits = []
        for dx, dy, anchor, align in _PLACEMENTS:
            baseline, box = label_spot(x, y, text, dx, dy, anchor, align)
            if box.inside(axes):
                fits.append((x + dx, baseline, anchor, box))
        if not fits:
            baseline, box = label_spot(x, y, text, 0, -4, "middle", "bottom")
            fits.append((x, baseline, "middle", box))
        free = [f for f in fits if not any(f[3].overlaps(other[3]) for other in placed)]
        placed.append((free or fits)[0])
    return placed


@dataclass
class Canvas:
    """SVG elements in points, and the box they cover (the figure is cut to it, as ``bbox_inches="tight"``)."""

    parts: list[str] = field(default_factory=list)
    box: Box = Box(math.inf, math.inf, -math.inf, -math.inf)

    def cover(self, box: Box) -> None:
        b = self.box
        self.box = Box(min(b.x0, box.x0), min(b.y0, box.y0), max(b.x1, box.x1), max(b.y1, box.y1))

    def text(
        self, text: str, x: float, baseline: float, size: float, anchor: str = "start", bold: bool = False, **attrs: str
    ) -> None:
        self.cover(text_box(text, x, size, anchor, baseline, bold))
        extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
        weight = ' font-weight="bold"' if bold else ""
        self.parts.append(
            f'<text x="{_num(x)}" y="{_num(baseline)}" font-size="{_num(size)}" text-anchor="{anchor}"'
            f"{weight}{extra}>{escape(text)}</text>"
        )

    def svg(self, title: str, pad: float = 4.0) -> str:
        b = self.box
        x0, y0, w, h = b.x0 - pad, b.y0 - pad, b.x1 - b.x0 + 2 * pad, b.y1 - b.y0 + 2 * pad
        return (
            '<?xml version="1.0" encoding="utf-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(w)}pt" height="{_num(h)}pt" '
            f'viewBox="{_num(x0)} {_num(y0)} {_num(w)} {_num(h)}" role="img" font-family="{_FONT}">\n'
            f"<title>{escape(title)}</title>\n"
            f'<rect x="{_num(x0)}" y="{_num(y0)}" width="{_num(w)}" height="{_num(h)}" fill="#fff"/>\n'
            + "\n".join(self.parts)
            + "\n</svg>\n"
        )


AXES_WIDTH, AXES_HEIGHT = 330.0, 210.0
"""The plot area (points); the title, ticks, axis labels and key are around it."""
_TICK = 3.5
_CAP = 2.5
_KEY_SIZE, _KEY_ROW = 7.0, 11.5
ONE_COLUMN = 12
"""Systems a plot's key lists in one column (more: two)."""

Reach = tuple[tuple[float, float], tuple[float, float]]
"""How far a system's 95% intervals reach: (latency below, above), (accuracy below, above)."""


@dataclass(frozen=True)
class _Scale:
    lo: float
    hi: float
    length: float
    flip: bool

    def __call__(self, value: float) -> float:
        at = (value - self.lo) / (self.hi - self.lo) * self.length
        return self.length - at if self.flip else at


def pareto_svg(
    title: str,
    axis_labels: tuple[str, str],
    pts: Sequence[tuple[float, float]],
    reach: Sequence[Reach],
    key: Sequence[str],
    front: Sequence[int],
    description: str,
) -> str:
    """An accuracy-against-latency plot: one numbered point per system (``pts``: latency, accuracy; all
    finite) with its 95% interval bars and caps, the Pareto frontier through ``front``, the key below
    naming each system (``key``, already cut to fit), ``title`` above; ``description`` is its SVG title."""
    reach = [((_finite(xb), _finite(xa)), (_finite(yb), _finite(ya))) for (xb, xa), (yb, ya) in reach]
    sx = _Scale(*_limits([(x, *r[0]) for (x, _), r in zip(pts, reach, strict=True)]), AXES_WIDTH, False)
    sy = _Scale(*_limits([(y, *r[1]) for (_, y), r in zip(pts, reach, strict=True)]), AXES_HEIGHT, True)
    canvas = Canvas()
    axes = Box(0.0, 0.0, AXES_WIDTH, AXES_HEIGHT)
    canvas.parts.append(
        f'<rect id="axes" x="0" y="0" width="{_num(AXES_WIDTH)}" height="{_num(AXES_HEIGHT)}" fill="#fff"/>'
    )
    canvas.cover(axes)
    where = [(sx(x), sy(y)) for x, y in pts]
    line = "L".join(f"{_num(where[i][0])} {_num(where[i][1])}" for i in front)
    canvas.parts.append(f'<path id="frontier" d="M{line}" fill="none" stroke="{FRONTIER_COLOR}" stroke-width="1"/>')
    for k, ((x, y), ((xb, xa), (yb, ya))) in enumerate(zip(pts, reach, strict=True)):
        px, py = where[k]
        color, marker = COLORS[k % len(COLORS)], MARKERS[k // len(COLORS) % len(MARKERS)]
        x0, x1, y0, y1 = sx(x - xb), sx(x + xa), sy(y - yb), sy(y + ya)
        bars = (
            f"M{_num(x0)} {_num(py)}H{_num(x1)}M{_num(x0)} {_num(py - _CAP)}V{_num(py + _CAP)}"
            f"M{_num(x1)} {_num(py - _CAP)}V{_num(py + _CAP)}",
            f"M{_num(px)} {_num(y0)}V{_num(y1)}M{_num(px - _CAP)} {_num(y0)}H{_num(px + _CAP)}"
            f"M{_num(px - _CAP)} {_num(y1)}H{_num(px + _CAP)}",
        )
        group = f'<g stroke="{color}" stroke-width="1" fill="{color}" opacity="0.9">'
        for i, d in enumerate(bars):  # latency, then accuracy (ids the site's tests read)
            group += f'<g id="intervals_{k + 1}_{i}"><path d="{d}" fill="none"/></g>'
        canvas.parts.append(f'{group}<g id="point_{k + 1}"><path d="{marker_path(marker, px, py)}"/></g></g>')
    labels = [str(k) for k in range(1, len(pts) + 1)]
    for k, (x, baseline, anchor, _) in enumerate(place_labels(where, labels, axes)):
        canvas.parts.append(f'<g id="pointlabel_{k + 1}">')
        canvas.text(labels[k], x, baseline, LABEL_SIZE, anchor, bold=True)
        canvas.parts.append("</g>")
    canvas.parts.append(
        f'<rect x="0" y="0" width="{_num(AXES_WIDTH)}" height="{_num(AXES_HEIGHT)}" fill="none" stroke="#000" stroke-width="0.8"/>'
    )
    bottom = _axes_ticks(canvas, sx, sy, axis_labels)
    canvas.text(title, AXES_WIDTH / 2, -6 - _DESCENT * 10, 10, "middle")
    _key(canvas, key, bottom + 8)
    return canvas.svg(description)


def _finite(value: float) -> float:
    return value if math.isfinite(value) and value > 0 else 0.0


def _axes_ticks(canvas: Canvas, sx: _Scale, sy: _Scale, axis_labels: tuple[str, str]) -> float:
    """The ticks, their labels and the axis labels; returns how far down they reach."""
    size = 8.0
    marks = []
    xticks, decimals = nice_ticks(sx.lo, sx.hi)
    baseline = AXES_HEIGHT + _TICK + 3 + _ASCENT * size
    for t in xticks:
        marks.append(f"M{_num(sx(t))} {_num(AXES_HEIGHT)}v{_TICK}")
        canvas.text(tick_label(t, decimals), sx(t), baseline, size, "middle")
    yticks, decimals = nice_ticks(sy.lo, sy.hi)
    widest = 0.0
    for t in yticks:
        marks.append(f"M0 {_num(sy(t))}h-{_TICK}")
        text = tick_label(t, decimals)
        widest = max(widest, text_width(text, size))
        canvas.text(text, -_TICK - 3, sy(t) + (_ASCENT - _DESCENT) / 2 * size, size, "end")
    canvas.parts.append(f'<path d="{"".join(marks)}" stroke="#000" stroke-width="0.8"/>')
    xlabel, ylabel = axis_labels
    size = 9.0
    baseline += _DESCENT * 8 + 4 + _ASCENT * size
    canvas.text(xlabel, AXES_WIDTH / 2, baseline, size, "middle")
    across = -_TICK - 3 - widest - 5 - _DESCENT * size  # the y label's baseline, written upwards
    half = text_width(ylabel, size) / 2
    canvas.cover(Box(across - _ASCENT * size, AXES_HEIGHT / 2 - half, across + _DESCENT * size, AXES_HEIGHT / 2 + half))
    canvas.parts.append(
        f'<text transform="translate({_num(across)} {_num(AXES_HEIGHT / 2)}) rotate(-90)" font-size="{_num(size)}" '
        f'text-anchor="middle">{escape(ylabel)}</text>'
    )
    return baseline + _DESCENT * size


def _key(canvas: Canvas, names: Sequence[str], top: float) -> None:
    """The key below the axes: each system's marker, number and name, then the frontier's line;
    in one column up to :data:`ONE_COLUMN` systems, else two (filled down the first column first)."""
    entries = len(names) + 1
    rows = entries if len(names) <= ONE_COLUMN else -(-entries // 2)
    number_width = text_width(str(len(names)), _KEY_SIZE)
    canvas.parts.append('<g id="legend">')
    left = 0.0
    for start in range(0, entries, rows):
        widest = 0.0
        for row, k in enumerate(range(start, min(start + rows, entries))):
            y = top + row * _KEY_ROW + _KEY_ROW / 2
            baseline = y + (_ASCENT - _DESCENT) / 2 * _KEY_SIZE
            if k == len(names):
                canvas.parts.append(
                    f'<path d="M{_num(left)} {_num(y)}h16" stroke="{FRONTIER_COLOR}" stroke-width="1" fill="none"/>'
                )
                canvas.text("Pareto frontier", left + 22, baseline, _KEY_SIZE)
                widest = max(widest, 22 + text_width("Pareto frontier", _KEY_SIZE))
                continue
            color, marker = COLORS[k % len(COLORS)], MARKERS[k // len(COLORS) % len(MARKERS)]
            canvas.parts.append(
                f'<path d="M{_num(left)} {_num(y)}h16" stroke="{color}" stroke-width="1"/>'
                f'<path d="{marker_path(marker, left + 8, y, 5)}" fill="{color}"/>'
            )
            canvas.text(str(k + 1), left + 22 + number_width, baseline, _KEY_SIZE, "end")
            canvas.text(names[k], left + 26 + number_width, baseline, _KEY_SIZE)
            widest = max(widest, 26 + number_width + text_width(names[k], _KEY_SIZE))
        left += widest + 14
    canvas.parts.append("</g>")
    canvas.cover(Box(0.0, top, 0.0, top + rows * _KEY_ROW))


_RDBU = (
    (0x67, 0x00, 0x1F), (0xB2, 0x18, 0x2B), (0xD6, 0x60, 0x4D), (0xF4, 0xA5, 0x82), (0xFD, 0xDB, 0xC7), (0xF7, 0xF7, 0xF7),
    (0xD1, 0xE5, 0xF0), (0x92, 0xC5, 0xDE), (0x43, 0x93, 0xC3), (0x21, 0x66, 0xAC), (0x05, 0x30, 0x61),
)  # fmt: skip
"""ColorBrewer's red-blue diverging scale, from -1 (red) to 1 (blue)."""
_CELL = 30.0


def diverging_color(value: float) -> str:
    """The colour of ``value`` in [-1, 1] on :data:`_RDBU` (interpolated between its steps; clipped)."""
    at = (min(1.0, max(-1.0, value)) + 1) / 2 * (len(_RDBU) - 1)
    k = min(int(at), len(_RDBU) - 2)
    t = at - k
    rgb = (round(a + (b - a) * t) for a, b in zip(_RDBU[k], _RDBU[k + 1], strict=True))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def correlation_svg(title: str, names: Sequence[str], matrix: Sequence[Sequence[float]], description: str) -> str:
    """A correlation matrix as a heatmap: a cell per pair of ``names``, coloured from -1 (red) to 1
    (blue) and labelled with its value; a non-finite value leaves its cell blank. The names label the
    rows (left) and the columns (below, slanted); a colour bar on the right; ``title`` above."""
    n = len(names)
    side = n * _CELL
    canvas = Canvas()
    canvas.cover(Box(0.0, 0.0, side, side))
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            x, y = j * _CELL, i * _CELL
            if not math.isfinite(value):
                continue
            canvas.parts.append(
                f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(_CELL)}" height="{_num(_CELL)}" '
                f'fill="{diverging_color(value)}"/>'
            )
            ink = "#fff" if abs(value) > 0.6 else "#000"
            baseline = y + _CELL / 2 + (_ASCENT - _DESCENT) / 2 * 7
            canvas.text(f"{value:.2f}", x + _CELL / 2, baseline, 7, "middle", fill=ink)
    canvas.parts.append(
        f'<rect x="0" y="0" width="{_num(side)}" height="{_num(side)}" fill="none" stroke="#000" stroke-width="0.8"/>'
    )
    size = 8.0
    for k, name in enumerate(names):
        middle = k * _CELL + _CELL / 2
        canvas.text(name, -4, middle + (_ASCENT - _DESCENT) / 2 * size, size, "end")
        width = text_width(name, size)
        reach = width * math.sqrt(0.5) + size  # slanted 45 degrees, down and to the left
        canvas.cover(Box(middle - reach, side, middle + size, side + 4 + reach))
        canvas.parts.append(
            f'<text transform="translate({_num(middle)} {_num(side + 4 + _ASCENT * size)}) rotate(-45)" '
            f'font-size="{_num(size)}" text-anchor="end">{escape(name)}</text>'
        )
    left, steps = side + 12, 40
    for k in range(steps):  # the colour bar, 1 at the top
        value = 1 - 2 * (k + 0.5) / steps
        y = k * side / steps
        canvas.parts.append(
            f'<rect x="{_num(left)}" y="{_num(y)}" width="10" height="{_num(side / steps + 0.3)}" '
            f'fill="{diverging_color(value)}"/>'
        )
    canvas.parts.append(
        f'<rect x="{_num(left)}" y="0" width="10" height="{_num(side)}" fill="none" stroke="#000" stroke-width="0.6"/>'
    )
    for tick in (1.0, 0.5, 0.0, -0.5, -1.0):
        y = (1 - tick) / 2 * side
        canvas.parts.append(f'<path d="M{_num(left + 10)} {_num(y)}h3" stroke="#000" stroke-width="0.6"/>')
        canvas.text(f"{tick:g}", left + 15, y + (_ASCENT - _DESCENT) / 2 * size, size)
    canvas.cover(Box(left, 0.0, left + 10, side))
    canvas.text(title, side / 2, -6 - _DESCENT * 9, 9, "middle")
    return canvas.svg(description)
