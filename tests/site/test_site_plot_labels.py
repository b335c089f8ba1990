"""The accuracy-against-latency plots, in headless Chromium: each system's point carries its 95%
intervals, and every label (long model names included) lies inside its figure, the point labels
inside the axes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from holistic.site import render_site
from holistic.summarize import summarize_suite
from tests.support.fake_suite import FakeRun, write_fake_suite

pytestmark = pytest.mark.browser

MODELS = (
    ("vendor/a-model-with-a-rather-long-deployment-name-instruct-v2", 0.82, 0.9),
    ("another-vendor/an-even-longer-deployment-name-for-a-chat-model-2026", 0.55, 0.15),
    ("lab/small", 0.35, 0.5),
    ("lab/medium-sized-model-with-quantization-q4-k-m", 0.7, 0.6),
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plot_labels")
    runs = [
        FakeRun(scenario, model, {"subject": "anatomy"}, skill=skill, latency=latency, num_instances=40)
        for scenario in ("mmlu", "boolq")
        for model, skill, latency in MODELS
    ]
    suite_dir = write_fake_suite(out, "plot_labels", runs)
    return render_site(suite_dir, summarize_suite(suite_dir, num_bootstrap=40))


_BOXES = """() => {
  const svg = document.querySelector('svg');
  const frame = svg.getBoundingClientRect();
  const axes = document.querySelector('#axes').getBoundingClientRect();
  const texts = [...document.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom,
            point: !!t.closest('g[id^="pointlabel_"]'), key: !!t.closest('g[id^="legend"]')};
  });
  const bars = [...document.querySelectorAll('g[id^="intervals_"] path')].map(p => {
    const r = p.getBoundingClientRect(); return Math.max(r.width, r.height);
  });
  const points = document.querySelectorAll('g[id^="point_"]').length;
  return {frame: {x0: frame.left, y0: frame.top, x1: frame.right, y1: frame.bottom},
          axes: {x0: axes.left, y0: axes.top, x1: axes.right, y1: axes.bottom}, texts, bars, points};
}"""


def _inside(box: dict[str, float], frame: dict[str, float], slack: float = 0.5) -> bool:
    return (
        box["x0"] >= frame["x0"] - slack
        and box["y0"] >= frame["y0"] - slack
        and box["x1"] <= frame["x1"] + slack
        and box["y1"] <= frame["y1"] + slack
    )


def test_every_label_is_inside_its_figure_and_every_point_has_its_intervals(page: Any, site: Path) -> None:
    plots = sorted((site.parent / "plots").glob("pareto_*.svg"))
    assert len(plots) == 2
    for svg in plots:
        page.set_viewport_size({"width": 1000, "height": 800})
        page.goto(svg.resolve().as_uri())
        page.wait_for_load_state("load")
        shots = os.environ.get("HOLISTIC_SCREENSHOTS")
        if shots:  # for a person to look at
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f"{svg.stem}.png"))
        found = page.evaluate(_BOXES)
        texts = found["texts"]
        assert texts
        for text in texts:
            assert _inside(text, found["frame"]), f"{svg.name}: {text['text']!r} leaves the figure"
        # each system's point is numbered inside the axes, and the key beneath names it in full
        numbers = [t for t in texts if t["point"]]
        assert sorted(t["text"] for t in numbers) == [str(k) for k in range(1, len(MODELS) + 1)]
        for number in numbers:
            assert _inside(number, found["axes"]), f"{svg.name}: point label {number['text']!r} leaves the axes"
        key = " ".join(t["text"] for t in texts if t["key"])
        for model, _, _ in MODELS:
            assert model in key, f"{svg.name}: {model} is not in the key"
        # two interval bars (latency and accuracy) per system, visibly long
        assert found["points"] == len(MODELS)
        assert len(found["bars"]) == 2 * len(MODELS)
        assert sum(1 for length in found["bars"] if length > 2) >= len(MODELS)
        assert page.console_errors == []


def test_the_plots_caption_says_what_the_bars_are(site: Path) -> None:
    pages = [p.read_text(encoding="utf-8") for p in site.parent.rglob("*.html")]
    assert any("its bars the 95% intervals" in text and "pareto_" in text for text in pages)
