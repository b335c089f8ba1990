"""The correlation matrix written as SVG: well-formed whatever the metric groups' names, a coloured
and labelled cell per finite value, a blank cell for a missing one, the colour scale's ends right."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from holistic.site.svg_plot import correlation_svg, diverging_color
from tests.site.test_svg_plot import HOSTILE, NS


def _cells(svg: ET.Element) -> list[ET.Element]:
    """The matrix's cells (the colour bar's steps are 10 wide; a cell is wider)."""
    return [r for r in svg.iterfind("s:rect", NS) if r.get("fill", "").startswith("#") and r.get("width") == "30"]


def test_a_cell_per_finite_value_labelled_and_a_blank_one_for_a_missing_value() -> None:
    matrix = [[1.0, -0.5, math.nan], [-0.5, 1.0, 0.25], [math.nan, 0.25, 1.0]]
    svg = ET.fromstring(correlation_svg("T", ["accuracy", "robustness", "efficiency"], matrix, "d"))
    assert len(_cells(svg)) == 7
    labels = [t.text for t in svg.iterfind("s:text", NS)]
    assert labels.count("1.00") == 3 and labels.count("-0.50") == 2 and labels.count("0.25") == 2
    assert "nan" not in " ".join(str(x) for x in labels)
    assert {"accuracy", "robustness", "efficiency"} <= set(labels)


def test_the_colour_scale_runs_from_red_through_white_to_blue() -> None:
    assert diverging_color(-1.0) == "#67001f" and diverging_color(-7.0) == "#67001f"
    assert diverging_color(0.0) == "#f7f7f7"
    assert diverging_color(1.0) == "#053061" and diverging_color(3.0) == "#053061"
    reds = [int(diverging_color(v)[1:3], 16) for v in (-0.9, -0.5, 0.0, 0.5, 0.9)]
    assert reds[2] > reds[3] > reds[4]  # less red towards 1


def test_names_from_data_are_escaped_and_the_svg_stays_well_formed() -> None:
    names = list(HOSTILE)
    matrix = [[1.0 if i == j else 0.1 for j in range(len(names))] for i in range(len(names))]
    text = correlation_svg("T", names, matrix, "<d>")
    assert "<script>" not in text
    svg = ET.fromstring(text)
    labels = [t.text or "" for t in svg.iterfind("s:text", NS)]
    assert any("alert(1)" in label for label in labels)
