"""The llama.cpp engine (llama-cpp-python): scoring and generation from its own logits.

Log-likelihoods are computed here from the raw logits llama.cpp keeps for every
position (``logits_all=True``), not from ``create_completion(echo=True, logprobs=...)``:
those echo logprobs are known to be wrong in llama-cpp-python 0.3.36.

Prefix reuse: llama.cpp keeps one sequence's key/value cache. Jobs are served in
lexicographic token order, and each one keeps the longest prefix it shares with the
previous sequence (the cache beyond it is dropped), so contexts shared by
multiple-choice continuations or by few-shot prompts are evaluated once. Results are
returned in input order.

llama.cpp's "extra buffer types" (weight repacking, AMX kernels) are off by default:
on CPUs that advertise AMX inside some virtual machines they crash the process with a
general-protection fault at the first evaluation, which no ``try`` can catch. Turn them
on with ``extra_buffer_types=True`` where they are known to work. Sampling (``temperature > 0``) is done here with NumPy from a
per-completion seed, so it does not depend on llama.cpp's sampler state.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from holistic.core.errors import ModelError
from holistic.core.extras import install_command
from holistic.core.types import Message
from holistic.models.chat_template import render_chat_template
from holistic.models.engine_options import EngineCounters
from holistic.models.local_engine import (
    Generated,
    GenerateJob,
    ScoreJob,
    SpecialIds,
    TokenScore,
    log_softmax_np,
    top_k_np,
)
from holistic.models.prefix_plan import common_prefix_len
from holistic.models.stops import tail_has_stop


def import_llama_cpp() -> Any:
    """``llama_cpp``, or a clear error saying how to install it."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelError(
            f"the llama_cpp engine needs llama-cpp-python, which the `llama_cpp` extra installs: "
            f"{install_command('llama_cpp')} [{exc}]"
        ) from exc
    return llama_cpp


_PARAMS_LOCK = threading.Lock()


@contextlib.contextmanager
def _model_params(llama_cpp: Any, extra_buffer_types: bool) -> Iterator[None]:
    """Set ``use_extra_bufts`` for models loaded inside the block.

    ``Llama()`` takes no argument for it, so the default-params factory it calls is
    wrapped for the duration of the construction.
    """
    low = llama_cpp.llama_cpp
    original = low.llama_model_default_params

    def params() -> Any:
        p = original()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = extra_buffer_types
        return p

    with _PARAMS_LOCK:
        low.llama_model_default_params = params
        try:
            yield
        finally:
            low.llama_model_default_params = original


class LlamaCppTokenizer:
    """llama.cpp's tokenizer for a GGUF, and the GGUF's own chat template."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm
        meta = getattr(llm, "metadata", {}) or {}
        self._template: str | None = meta.get("tokenizer.chat_template")
        self._bos = self._piece(llm.token_bos())
        self._eos = self._piece(llm.token_eos())

    def _piece(self, token: int) -> str:
        return self.decode([token]) if token is not None and token >= 0 else ""

    def encode(self, text: str) -> list[int]:
        if not text:
            return []
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def decode(self, ids: Sequence[int]) -> str:
        data: bytes = self._llm.detokenize(list(ids), special=True)
        return data.decode("utf-8", errors="replace")

    def count(self, text: str) -> int:
        return len(self.encode(text))

    @property
    def has_chat_template(self) -> bool:
        return bool(self._template)

    def render_chat(self, messages: Sequence[Message]) -> str:
        if not self._template:
            raise ModelError("this GGUF has no chat template (tokenizer.chat_template); use plain prompts")
        return render_chat_template(self._template, messages, bos_token=self._bos, eos_token=self._eos)


class LlamaCppEngine:
    """Runs a GGUF with llama-cpp-python (see the module docstring)."""

    name = "llama_cpp"
    counters: EngineCounters | None = None
    """llama.cpp's work is not counted."""

    def __init__(
        self,
        path: Path,
        *,
        n_ctx: int,
        n_threads: int | None = None,
        n_batch: int = 512,
        extra_buffer_types: bool = False,
    ) -> None:
        llama_cpp = import_llama_cpp()
        if not path.is_file():
            raise ModelError(f"GGUF file {path} does not exist")
        try:
            with _model_params(llama_cpp, extra_buffer_types):
                self.llm = llama_cpp.Llama(
                    model_path=str(path),
                    logits_all=True,
                    n_ctx=n_ctx,
                    n_batch=n_batch,
                    n_threads=n_threads,
                    verbose=False,
                )
        except Exception as exc:  # llama-cpp raises ValueError/RuntimeError on bad files
            raise ModelError(f"llama.cpp cannot load {path}: {exc}") from exc
        self.version = str(getattr(llama_cpp, "__version__", "unknown"))
        self._tokenizer = LlamaCppTokenizer(self.llm)
        bos = self.llm.token_bos()
        eos = self.llm.token_eos()
        self._special = SpecialIds(
            bos=bos if bos >= 0 else (eos if eos >= 0 else None),
            eos=frozenset({eos} if eos >= 0 else set()),
        )

    def tokenizer(self) -> LlamaCppTokenizer:
        return self._tokenizer

    def special_ids(self) -> SpecialIds:
        return self._special

    def load(self) -> None:
        pass  # the GGUF is opened when the engine is made

    def begin_run(self) -> None:
        self.llm.reset()

    def close(self) -> None:
        llm = getattr(self, "llm", None)
        if llm is not None and hasattr(llm, "close"):
            llm.close()

    # -- evaluation with prefix reuse -----------------------------------------------------------

    def _eval(self, seq: Sequence[int]) -> None:
        """Make the context hold exactly ``seq``, re-using the prefix already evaluated."""
        llm = self.llm
        held = [int(t) for t in llm.input_ids[: llm.n_tokens]]
        keep = common_prefix_len(held, seq)
        if keep == len(seq) and keep > 0:
            llm.n_tokens = keep  # every needed logit row is already there
            return
        llm.n_tokens = keep
        llm.eval(list(seq[keep:]))

    def _logprobs(self, start: int, stop: int) -> np.ndarray:
        """Log-softmax of the logits at positions ``start .. stop-1``."""
        return log_softmax_np(np.asarray(self.llm.scores[start:stop]))

    def score(self, jobs: Sequence[ScoreJob]) -> list[list[TokenScore]]:
        out: list[list[TokenScore]] = [[] for _ in jobs]
        for i in sorted(range(len(jobs)), key=lambda k: jobs[k].context + jobs[k].continuation):
            job = jobs[i]
            seq = job.context + job.continuation
            if not job.continuation:
                continue
            self._eval(seq)
            lp = self._logprobs(len(job.context) - 1, len(seq) - 1)
            out[i] = [
                TokenScore(tok, float(row[tok]), int(row.argmax()) == tok, top_k_np(row, job.top_k))
                for tok, row in zip(job.continuation, lp, strict=True)
            ]
        return out

    def generate(self, jobs: Sequence[GenerateJob]) -> list[Generated]:
        out: list[Generated] = [Generated((), "length")] * len(jobs)
        for i in sorted(range(len(jobs)), key=lambda k: jobs[k].prompt):
            out[i] = self._generate_one(jobs[i])
        return out

    def _generate_one(self, job: GenerateJob) -> Generated:
        rng = np.random.default_rng(job.seed) if job.temperature > 0 else None
        self._eval(job.prompt)
        tokens: list[TokenScore] = []
        decode = self._tokenizer.decode
        while len(tokens) < job.max_tokens:
            logits = np.asarray(self.llm.scores[self.llm.n_tokens - 1], dtype=np.float64)
            lp = log_softmax_np(logits[None, :])[0]
            argmax = int(lp.argmax())
            if rng is not None:
                z = logits / job.temperature
                p = np.exp(z - z.max())
                tok = int(rng.choice(len(p), p=p / p.sum()))
            else:
                tok = argmax
            tokens.append(TokenScore(tok, float(lp[tok]), tok == argmax, top_k_np(lp, job.top_k)))
            ids = [t.token_id for t in tokens]
            if tok in self._special.eos or tail_has_stop(decode, ids, job.stop):
                return Generated(tuple(tokens), "stop")
            if len(tokens) < job.max_tokens:
                self.llm.eval([tok])
        return Generated(tuple(tokens), "length")
