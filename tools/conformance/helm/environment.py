"""HELM's environment: crfm-helm in a virtual environment of its own, its ranking extra, and its
configuration for the local model."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from tools.conformance.helm.deviations import PYTREC_EVAL
from tools.conformance.helm.keys import CONTEXT_WINDOW, HELM_MODEL, HELM_VERSION


def helm_venv(path: Path) -> Path:
    """The Python of a virtual environment with crfm-helm installed (created on first use)."""
    python = path / "bin" / "python"
    if python.is_file() and _has_helm(python):
        return python
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    # HELM pins torchvision; the CPU torch it runs on is kept and torchvision removed after.
    subprocess.run(["nice", *pip, "torch==2.13.0", "torchvision==0.28.0", f"crfm-helm=={HELM_VERSION}"], check=True)
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "torchvision"], check=False)
    if not _has_helm(python):
        raise SystemExit(f"crfm-helm {HELM_VERSION} did not install into {path}")
    return python


def _has_helm(python: Path) -> bool:
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('crfm-helm'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.returncode == 0 and probe.stdout.strip() == HELM_VERSION


def helm_ranking_extra(helm_python: Path) -> Path:
    """A folder holding :data:`PYTREC_EVAL` for HELM's process (installed there on first use,
    never into HELM's environment)."""
    target = helm_python.parents[2] / "helm_ranking"
    if not (target / "pytrec_eval").is_dir():
        pip = ["nice", str(helm_python), "-m", "pip", "install", "-q", "--only-binary", ":all:", "--no-deps"]
        subprocess.run([*pip, "--target", str(target), PYTREC_EVAL], check=True)
    return target


def write_prod_env(prod_env: Path, model_dir: Path) -> None:
    """HELM's configuration for the local model: deployment, tokenizer, metadata."""
    prod_env.mkdir(parents=True, exist_ok=True)
    (prod_env / "model_deployments.yaml").write_text(
        textwrap.dedent(f"""\
        model_deployments:
          - name: {HELM_MODEL}
            model_name: {HELM_MODEL}
            tokenizer_name: {HELM_MODEL}
            max_sequence_length: {CONTEXT_WINDOW}
            client_spec:
              class_name: "helm.clients.huggingface_client.HuggingFaceClient"
              args:
                pretrained_model_name_or_path: "{model_dir}"
                apply_chat_template: false
                torch_dtype: "float32"
        """)
    )
    (prod_env / "tokenizer_configs.yaml").write_text(
        textwrap.dedent(f"""\
        tokenizer_configs:
          - name: {HELM_MODEL}
            tokenizer_spec:
              class_name: "helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer"
              args:
                pretrained_model_name_or_path: "{model_dir}"
            end_of_text_token: "<|im_end|>"
            prefix_token: ""
        """)
    )
    (prod_env / "model_metadata.yaml").write_text(
        textwrap.dedent(f"""\
        models:
          - name: {HELM_MODEL}
            display_name: SmolLM2-135M-Instruct (holistic's embedded weights)
            description: The embedded model's weights as a local Hugging Face directory.
            creator_organization_name: HuggingFaceTB
            access: open
            release_date: 2024-11-01
            tags: [TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG, LIMITED_FUNCTIONALITY_TEXT_MODEL_TAG]
        """)
    )


def wait_for_helm(proc: subprocess.Popen[bytes], written: Callable[[], bool], grace_s: float = 60) -> None:
    """Wait for a helm-run process. helm-run 0.5.16 can linger after it has written everything
    (threads of the Hugging Face server): once ``written()`` holds and ``grace_s`` has passed, it
    is stopped."""
    finished_at = None
    while proc.poll() is None:
        if finished_at is None and written():
            finished_at = time.monotonic()
        if finished_at is not None and time.monotonic() - finished_at > grace_s:
            proc.kill()
            proc.wait()
            break
        time.sleep(5)
