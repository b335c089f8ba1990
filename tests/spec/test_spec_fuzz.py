"""Property test: mutated run specs and model files give exit 0 or 2, never a traceback,
in bounded time and memory (the YAML limits hold for any input)."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holistic.cli.run import main

SPEC = """\
suite: fuzz
seed: 0
x-shared: &shared {max_train_instances: 1}
models: [simple/echo, simple/mine]
defaults:
  max_eval_instances: 3
  adaptation: *shared
  metrics: [accuracy, efficiency]
runs:
  - scenario: arithmetic
    args: {digits: [1, 2], num_train: 5, num_test: 5}
  - scenario: synthetic_reasoning
    args: {mode: pattern_match, num_train: 5, num_test: 5}
    adaptation: {instructions: "Answer.", template: "{{ input }} => {{ output }}"}
"""

MODELS = """\
models:
  - name: simple/mine
    provider: simple
    model_id: echo
    context_window: 2048
    args: {delay_s: 0}
    capabilities: {logprobs: true, chat: true, completions: true}
"""

PIECES = [
    "&a ",
    "*a",
    "*shared",
    "<<: *shared\n",
    ": ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "\n",
    "  ",
    "\t",
    "'",
    '"',
    "!!python/object:os.system ",
    "!!binary ",
    "%YAML 1.1\n",
    "---\n",
    "...\n",
    "|\n",
    ">-\n",
    "\x00",
    "\x07",
    "\u202e",
    "é",
    "\ufeff",
    "include: [nope.yaml]\n",
    "{{ cycler.__init__ }}",
    "9" * 30,
    "~",
    "?",
    "@",
    "`",
    "#",
    "&b [*b]\n",
    "x: &c {y: *c}\n",
    "2020-01-01",
    "1e999",
    ".nan",
    "0x1F",
    "no",
]

mutation = st.one_of(
    st.tuples(st.just("insert"), st.integers(0, 10_000), st.sampled_from(PIECES)),
    st.tuples(st.just("delete"), st.integers(0, 10_000), st.integers(1, 40)),
    st.tuples(st.just("dup"), st.integers(0, 100), st.integers(1, 3)),
    st.tuples(st.just("text"), st.integers(0, 10_000), st.text(max_size=12)),
)


def _mutate(text: str, ops: list[tuple[str, int, object]]) -> str:
    for kind, pos, arg in ops:
        at = pos % (len(text) + 1)
        if kind in ("insert", "text"):
            text = text[:at] + str(arg) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + int(str(arg)) :]
        else:
            lines = text.splitlines(keepends=True) or [""]
            i = pos % len(lines)
            text = "".join(lines[: i + 1] + [lines[i]] * int(str(arg)) + lines[i + 1 :])
    return text


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(spec_ops=st.lists(mutation, max_size=4), model_ops=st.lists(mutation, max_size=3))
def test_mutated_specs_and_model_files_never_crash(
    folder: Path,
    capsys: pytest.CaptureFixture[str],
    spec_ops: list[tuple[str, int, object]],
    model_ops: list[tuple[str, int, object]],
) -> None:
    spec, models = folder / "spec.yaml", folder / "models.yaml"
    spec.write_bytes(_mutate(SPEC, spec_ops).encode("utf-8", "surrogatepass"))
    models.write_bytes(_mutate(MODELS, model_ops).encode("utf-8", "surrogatepass"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rc = main([str(spec), "--plan", "--models-file", str(models)])
    captured = capsys.readouterr()
    assert rc in (0, 2), captured.err
    assert "Traceback" not in captured.err
    if rc == 2:
        assert len([ln for ln in captured.err.splitlines() if ln.startswith("helm-run: error: ")]) == 1
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 512
