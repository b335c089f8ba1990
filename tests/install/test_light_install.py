"""The light install: ``pip install holistic`` (no extras) and ``pip install 'holistic[openai]'``,
each in a fresh virtual environment, exercised as their users would.

The wheel is built once per test session; each environment installs it with pip (whose
cache makes the core's dependencies quick). Commands run in the environment's own
interpreter, outside the repository and without ``PYTHONPATH``, so what they import is
what the install brought.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.rate_limited_server import RateLimitedServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
HELM_RUNS = REPO / "tests" / "helm_import" / "helm_runs" / "fixtures"
# What the wheel is built from (the rest of the repository is not part of it).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "holistic", "schemas", "site_templates")
HEAVY = ("torch", "transformers", "sentence_transformers", "bert_score", "accelerate", "ray", "llama_cpp")
INSTALL_TIMEOUT_S = 900
COMMAND_TIMEOUT_S = 300


@dataclass(frozen=True)
class Env:
    """A virtual environment holding one install of holistic."""

    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def run(
        self, command: str, *args: object, cwd: Path, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """One of the environment's console scripts (``helm-run``...), as a user would start it."""
        return subprocess.run(
            [str(self.root / "bin" / command), *map(str, args)],
            cwd=cwd,
            env={**_clean_env(cwd), **(env or {})},
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )

    def importable(self, *modules: str) -> list[str]:
        """Which of ``modules`` the environment can import (looked up, not imported)."""
        code = f"import importlib.util as u; print(' '.join(m for m in {modules!r} if u.find_spec(m)))"
        out = subprocess.run(
            [str(self.python), "-c", code],
            env=_clean_env(self.root),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=True,
        )
        return out.stdout.split()


def _clean_env(cwd: Path) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH into the repository, caches in ``cwd``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["HOLISTIC_CACHE_DIR"] = str(cwd / "holistic-cache")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _pip(python: Path, *args: str, cwd: Path) -> subprocess.Popen[str]:
    """``pip ARGS`` started (quiet); :func:`_finish` waits for it."""
    return subprocess.Popen(
        [str(python), "-m", "pip", *args, "-q", "--progress-bar", "off"],
        cwd=cwd,
        env=_clean_env(cwd),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(pip: subprocess.Popen[str]) -> None:
    try:
        out, err = pip.communicate(timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pip.kill()
        out, err = pip.communicate()
    assert pip.returncode == 0, f"{pip.args!r} failed:\n{out}\n{err}"


def _wheel(folder: Path) -> Path:
    """holistic's wheel, built from a copy of the package's sources."""
    source = folder / "source"
    for name in WHEEL_SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, source / name)
    out = folder / "wheel"
    _finish(_pip(Path(sys.executable), "wheel", "--no-deps", "--wheel-dir", str(out), str(source), cwd=folder))
    (built,) = out.glob("holistic-*.whl")
    return built


@pytest.fixture(scope="session")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Env]]:
    """Fresh environments by the extras installed in them (``""``: none, ``"[openai]"``), from one
    wheel built for the session. They install side by side: pip mostly waits for its index."""
    root = tmp_path_factory.mktemp("install")
    wheel = _wheel(root)
    envs = {extras: Env(root / f"env{extras or '-core'}") for extras in ("", "[openai]")}
    for env in envs.values():
        subprocess.run([sys.executable, "-m", "venv", str(env.root)], check=True, timeout=INSTALL_TIMEOUT_S)
    # --no-compile: byte-compiling every installed module would cost more than the tests save by it
    installs = [
        _pip(env.python, "install", "--no-compile", f"{wheel}{extras}", cwd=env.root) for extras, env in envs.items()
    ]
    for pip in installs:
        _finish(pip)
    yield envs
    shutil.rmtree(root, ignore_errors=True)  # about 1.5 GB: not kept with pytest's last temporary folders


@pytest.fixture
def core_env(envs: dict[str, Env]) -> Env:
    """``pip install holistic``: no extras."""
    return envs[""]


@pytest.fixture
def openai_env(envs: dict[str, Env]) -> Env:
    """``pip install 'holistic[openai]'``: an API model's user."""
    return envs["[openai]"]


def _spec(folder: Path, suite: str, model: str, *, digits: int = 1, metrics: str = "accuracy, efficiency") -> Path:
    path = folder / f"{suite}.yaml"
    path.write_text(
        f"suite: {suite}\nseed: 0\nmodels: [{model}]\n"
        f"defaults:\n  max_eval_instances: 4\n  adaptation: {{max_train_instances: 2}}\n  metrics: [{metrics}]\n"
        f"runs:\n  - scenario: arithmetic\n    args: {{digits: [{digits}], num_train: 10, num_test: 8}}\n",
        encoding="utf-8",
    )
    return path


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_core_install_has_no_torch_and_runs_summarizes_diffs_and_imports(core_env: Env, tmp_path: Path) -> None:
    assert core_env.importable(*HEAVY, "openai", "anthropic") == []
    out = tmp_path / "out"
    for suite, digits in (("old", 1), ("new", 2)):
        _ok(
            core_env.run(
                "helm-run", _spec(tmp_path, suite, "simple/echo", digits=digits), "--output-dir", out, cwd=tmp_path
            )
        )
    summary = _ok(core_env.run("helm-summarize", "--suite", "new", "--output-dir", out, cwd=tmp_path))
    assert (out / "new" / "site" / "index.html").is_file(), summary
    assert list((out / "new" / "site").rglob("*.png")) or list((out / "new" / "site").rglob("*.svg"))
    diff = _ok(core_env.run("helm-diff", out / "old", out / "new", "--format", "json", cwd=tmp_path))
    assert '"arithmetic' in diff

    imported = _ok(
        core_env.run(
            "helm-import",
            HELM_RUNS,
            "--suite",
            "helm",
            "--output-dir",
            out,
            "--model",
            "holistic/smollm2-135m-instruct=embedded/smollm2-135m-instruct",
            cwd=tmp_path,
        )
    )
    assert "imported 2 HELM runs" in imported
    stats = list((out / "helm" / "runs").glob("*/stats.parquet"))
    assert len(stats) == 2 and all(pq.read_table(p).num_rows > 0 for p in stats)
    _ok(core_env.run("helm-summarize", "--suite", "helm", "--output-dir", out, cwd=tmp_path))
    assert (out / "helm" / "site" / "index.html").is_file()


@pytest.mark.parametrize(
    ("model", "metrics", "extra"),
    [
        ("embedded/smollm2-135m-instruct", "accuracy", "local"),
        ("openai/gpt-4.1-mini", "accuracy", "openai"),
        ("anthropic/claude-3-5-haiku-20241022", "accuracy", "anthropic"),
        ("simple/echo", "accuracy, bertscore", "metrics"),
    ],
)
def test_a_run_needing_a_missing_extra_stops_before_writing_and_names_it(
    core_env: Env, tmp_path: Path, model: str, metrics: str, extra: str
) -> None:
    out = tmp_path / "out"
    done = core_env.run("helm-run", _spec(tmp_path, "needs", model, metrics=metrics), "--output-dir", out, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"needs the `{extra}` extra" in done.stderr
    assert f"pip install 'holistic[{extra}]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()  # nothing written: no suite folder, no request cache


def test_the_openai_install_runs_a_spec_against_a_loopback_server_without_torch(
    openai_env: Env, tmp_path: Path
) -> None:
    assert openai_env.importable(*HEAVY) == []
    assert openai_env.importable("openai") == ["openai"]
    with RateLimitedServer(limit=4, latency_s=0.0, max_requests=200, deadline_s=240) as server:
        models = tmp_path / "models.yaml"
        models.write_text(
            "models:\n  - name: loopback/tiny\n    provider: openai\n    model_id: tiny\n    context_window: 4096\n"
            f"    args: {{base_url: '{server.url}', timeout_s: 10, max_attempts: 2}}\n"
            "    capabilities: {logprobs: true, completions: true, chat: false}\n",
            encoding="utf-8",
        )
        out = tmp_path / "out"
        spec = _spec(tmp_path, "api", "loopback/tiny")
        ran = _ok(
            openai_env.run(
                "helm-run",
                spec,
                "--models-file",
                models,
                "--output-dir",
                out,
                cwd=tmp_path,
                env={"OPENAI_API_KEY": "sk-test"},
            )
        )
        served = server.stats().served
    assert "1 runs written" in ran and "0 failed" in ran
    assert served == 4  # max_eval_instances: one request per instance, all answered by the loopback server
    (requests,) = (out / "api" / "runs").glob("*/requests.parquet")
    assert pq.read_table(requests).num_rows == 4
    _ok(openai_env.run("helm-summarize", "--suite", "api", "--output-dir", out, cwd=tmp_path))
    assert (out / "api" / "site" / "index.html").is_file()
