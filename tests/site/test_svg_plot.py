"""The accuracy-against-latency plots written as SVG: well-formed XML whatever the names, every point
and its number inside the axes, numbers apart when there is room, round ticks, and the key's columns."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from holistic.site import plots
from holistic.site.svg_plot import AXES_HEIGHT, AXES_WIDTH, LABEL_SIZE, Box, nice_ticks, text_box

NS = {"s": "http://www.w3.org/2000/svg"}
HOSTILE = (
    "<script>alert(1)</script>",
    "a & b \"quoted\" 'single' ]]> <!-- x",
    "\u202eevil-model\u200f \u05e9\u05dc\u05d5\u05dd",
    "ctrl\x00\x07\x1b\ud800chars",
    "x" * 500,
)


def _plot(tmp_path: Path, pts: list[tuple[float, float]], names: list[str], col: str = "mmlu") -> ET.Element:
    reach = [((0.05, 0.1), (0.02, 0.03))] * len(pts)
    figure = plots._pareto_plot((col, pts, names, reach, tmp_path / "plots"))
    return ET.fromstring((tmp_path / figure["src"]).read_bytes())


def _group(root: ET.Element, gid: str) -> ET.Element:
    found = root.find(f".//s:g[@id='{gid}']", NS)
    assert found is not None, gid
    return found


def _path_box(d: str) -> Box:
    """The box of a marker path (absolute moves and lines, or a circle drawn as two arcs)."""
    nums = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", d)]
    if "a" in d:  # M x-r y a r r 0 1 0 2r 0 ...
        x, y, r = nums[0], nums[1], nums[2]
        return Box(x, y - r, x + 2 * r, y + r)
    xs, ys = nums[0::2], nums[1::2]
    return Box(min(xs), min(ys), max(xs), max(ys))


def _label_box(root: ET.Element, k: int) -> Box:
    text = _group(root, f"pointlabel_{k}").find("s:text", NS)
    assert text is not None and text.text == str(k)
    return text_box(
        text.text, float(text.get("x", "")), LABEL_SIZE, text.get("text-anchor", ""), float(text.get("y", "")), True
    )


def _check_inside(root: ET.Element, count: int) -> list[Box]:
    axes = Box(0, 0, AXES_WIDTH, AXES_HEIGHT)
    rect = root.find(".//s:rect[@id='axes']", NS)
    assert rect is not None and float(rect.get("width", "")) == AXES_WIDTH
    labels = []
    for k in range(1, count + 1):
        point = _group(root, f"point_{k}").find("s:path", NS)
        assert point is not None and _path_box(point.get("d", "")).inside(axes)
        assert [len(_group(root, f"intervals_{k}_{i}").findall("s:path", NS)) for i in (0, 1)] == [1, 1]
        labels.append(_label_box(root, k))
        assert labels[-1].inside(axes), k
    return labels


def test_points_and_their_numbers_lie_inside_the_axes_and_apart(tmp_path: Path) -> None:
    # points crowded into corners and against each other: the numbers must move, and still fit
    pts = [(0.1, 0.9), (0.1, 0.2), (3.0, 0.9), (3.0, 0.2), (1.5, 0.55), (1.52, 0.56), (1.54, 0.55), (1.5, 0.54)]
    root = _plot(tmp_path, pts, [f"lab/model-{k}" for k in range(len(pts))])
    labels = _check_inside(root, len(pts))
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    assert root.get("viewBox") and root.get("width", "").endswith("pt")
    title = root.find("s:title", NS)
    assert title is not None and title.text == "Accuracy against latency for mmlu"


def test_the_key_and_the_axes_read_as_the_systems_and_round_ticks(tmp_path: Path) -> None:
    names = [f"vendor/model-{k}" for k in range(20)]
    root = _plot(tmp_path, [(0.2 + 0.1 * k, 0.3 + 0.02 * k) for k in range(20)], names)
    _check_inside(root, 20)
    key = _group(root, "legend")
    texts = [t.text for t in key.iter("{http://www.w3.org/2000/svg}text")]
    assert set(names) | {str(k) for k in range(1, 21)} | {"Pareto frontier"} <= set(texts)
    columns = {t.get("x") for t in key.iter("{http://www.w3.org/2000/svg}text") if t.text in names}
    assert len(columns) == 2  # more than twelve systems: two columns
    ticks = [
        t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text and re.fullmatch(r"[\d.]+", t.text)
    ]
    assert "1.0" in ticks and "0.5" in ticks


def test_names_from_data_are_escaped_and_the_svg_stays_well_formed(tmp_path: Path) -> None:
    col = '<img src=x onerror="alert(1)"> & scenario'
    root = _plot(tmp_path, [(0.5 + k, 0.2 + 0.1 * k) for k in range(len(HOSTILE))], list(HOSTILE), col)
    raw = next((tmp_path / "plots").glob("pareto_*.svg")).read_text(encoding="utf-8")
    assert "<script" not in raw and "<img" not in raw and "\x00" not in raw
    assert not root.findall(".//s:script", NS) and not root.findall(".//s:img", NS)
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "<script>alert(1)</script>" in texts  # shown as text, in its own element
    assert any(t.startswith("\u202eevil-model") for t in texts)
    assert any(t.startswith("ctrl\ufffd") for t in texts)  # what XML cannot hold, replaced
    assert all(len(t) <= 80 for t in texts)  # a very long name is cut
    assert any(t.startswith("<img src=x") for t in texts)  # the title
    _check_inside(root, len(HOSTILE))


@pytest.mark.parametrize(("lo", "hi"), [(0.0, 1.0), (0.37, 0.41), (12.0, 2400.0), (-3.0, 7.5), (1e-5, 3e-5)])
def test_ticks_are_round_and_within_the_range(lo: float, hi: float) -> None:
    ticks, decimals = nice_ticks(lo, hi)
    assert 2 <= len(ticks) <= 7
    assert all(lo - 1e-12 <= t <= hi + 1e-12 for t in ticks)
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5))
    assert len({f"{t:.{decimals}f}" for t in ticks}) == len(ticks)


def test_a_single_system_or_equal_points_still_draw(tmp_path: Path) -> None:
    root = _plot(tmp_path, [(1.0, 0.5)], ["only"])
    _check_inside(root, 1)
    root = _plot(tmp_path, [(0.0, 0.0), (0.0, 0.0)], ["a", "b"], "zeros")
    _check_inside(root, 2)


def test_the_cache_key_of_a_plot_follows_the_svg_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to the SVG writer draws every plot again: its source is in the plots' code fingerprint."""
    seen: list[str] = []

    def fingerprint(*objects: object) -> str:
        seen.extend(getattr(o, "__module__", "") for o in objects)
        return "f"

    monkeypatch.setattr(plots, "code_fingerprint", fingerprint)
    plots._plot_code.cache_clear()
    try:
        plots._plot_code()
    finally:
        plots._plot_code.cache_clear()
    assert {"holistic.site.plots", "holistic.site.svg_plot"} <= set(seen)
