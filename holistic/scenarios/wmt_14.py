"""WMT 2014 (Bojar et al., 2014) news translation, as HELM 0.5.16 runs it (``wmt_14:language_pair=de-en``).

HELM's protocol: instructions "Translate the following sentences from German to English.",
``German: <source>`` then ``English: <translation>``, one in-context example (HELM's
``max_train_instances=1``), greedy, at most 100 tokens, stopping at a blank line; scored by
BLEU-4 as HELM computes it (NLTK ``sentence_bleu`` of ``word_tokenize`` tokens with weights
``(0, 0, 0, 1)``: the 4-gram precision with the brevity penalty, unsmoothed), with BLEU-1,
ROUGE-L, F1 and the exact-match family beside it.

Data (under the data root's ``wmt_14/``), in WMT's NIST SGML (``<seg id="N">text</seg>``, one a line,
inside ``<doc docid=...>``):

- test: ``test-full/newstest2014-<xx>en-src.<xx>.sgm`` and ``test-full/newstest2014-<xx>en-ref.en.sgm``
  (statmt's ``test-full.tgz``; the Hugging Face ``wmt14`` builder HELM loads reads the same
  newstest2014 files from WMT's ``dev.tgz``);
- validation, read when present (HELM evaluates it with test): ``dev/newstest2013-src.<xx>.sgm`` and
  ``dev/newstest2013-ref.en.sgm`` (Hindi: ``dev/newsdev2014-{src.hi,ref.en}.sgm``);
- training pairs for the in-context example, read when present: the corpora's line-aligned plain-text
  release files ``train/<corpus>.<xx>-en.<xx>`` beside ``train/<corpus>.<xx>-en.en`` (Europarl,
  News Commentary, Common Crawl). HELM takes 20,000 pairs of the Hugging Face builder's
  concatenation of every corpus shuffled with seed 42; here the first 20,000 pairs in file order
  (files in name order), deduplicated on the target side as HELM does. Without training files, a
  fixed seeded set of 100 test pairs is the example pool and the others are evaluated (not
  comparable with HELM's published numbers), and ``--plan`` says so.

A segment's text is taken raw, as the builder's regular expression takes it (no unescaping, no
stripping). Source and reference are paired by document and segment id; a segment present in one
file and not the other, a ``<seg`` line the pattern does not match, or a line count mismatch in the
training files is an error naming the file, line and reason, never a shifted pair. Pairs with an
empty side are dropped, as the builder drops them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, AdapterDefaults, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CategoryPreset
from holistic.scenarios.loading.common import FileScenario, check_choice, with_train_pool
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.sources import DataFile, DataNeeds, ResolvedData, default_data_root

LANGUAGES = {"cs": "Czech", "de": "German", "fr": "French", "hi": "Hindi", "ru": "Russian", "en": "English"}
PAIRS: tuple[str, ...] = tuple(f"{x}-en" for x in ("cs", "de", "fr", "hi", "ru")) + tuple(
    f"en-{x}" for x in ("cs", "de", "fr", "hi", "ru")
)
TEST_SIZES = {"cs": 3003, "de": 3003, "fr": 3003, "hi": 2507, "ru": 3003}
VALID_SIZES = {"cs": 3000, "de": 3000, "fr": 3000, "hi": 520, "ru": 3000}
POOL_FROM_TEST = 100
"""Without training files: test pairs held out (a fixed seeded set) as the in-context example pool."""
MAX_TRAIN_PAIRS = 20_000
"""HELM's ``MAX_TRAIN_INSTANCES``: training pairs kept before deduplication."""

_SEG = re.compile(r'<seg id="(\d+)">(.*)</seg>')
_DOC = re.compile(r'<doc\b[^>]*\bdocid="([^"]*)"')

_NOT_ENGLISH = (
    "HELM's robustness and fairness perturbations rewrite English text, and the source sentence is not "
    "English; HELM runs WMT14 unperturbed"
)
TRANSLATION = CategoryPreset(
    metric_categories=("accuracy", "efficiency", "bias", "toxicity"),
    not_applicable_reasons={
        "calibration": "a translation has no single answer whose probability could be calibrated",
        "robustness": _NOT_ENGLISH,
        "fairness": _NOT_ENGLISH,
    },
)


def read_sgm(path: Path) -> dict[tuple[str, str], tuple[int, str]]:
    """(docid, seg id) -> (line, raw text) of every segment of a NIST SGML file, in file order."""
    out: dict[tuple[str, str], tuple[int, str]] = {}
    doc = ""
    try:
        # Universal newlines, as the builder's open() reads the file.
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if (found := _DOC.match(line)) is not None:
                    doc = found.group(1)
                    continue
                if not line.lstrip().startswith("<seg"):
                    continue
                seg = _SEG.match(line)
                if seg is None:
                    raise DataSourceError(
                        f'{path}:{number}: a <seg> line that is not <seg id="N">text</seg> on one line'
                    )
                key = (doc, seg.group(1))
                if key in out:
                    raise DataSourceError(f"{path}:{number}: segment {seg.group(1)} of document {doc!r} appears twice")
                out[key] = (number, seg.group(2))
    except UnicodeDecodeError as exc:
        raise DataSourceError(f"{path}: not UTF-8: {exc}") from None
    if not out:
        raise DataSourceError(f"{path}: no <seg> lines (is this a WMT SGML file?)")
    return out


def read_sgm_pair(source: Path, reference: Path) -> list[tuple[str, str]]:
    """(source, reference) texts paired by document and segment id, in the source file's order; a
    segment missing from either file is an error naming it."""
    src, ref = read_sgm(source), read_sgm(reference)
    for here, there, other in ((source, src, ref), (reference, ref, src)):
        for key, (line, _) in there.items():
            if key not in other:
                missing_from = reference if here == source else source
                raise DataSourceError(
                    f"{here}:{line}: segment {key[1]} of document {key[0]!r} has no counterpart in {missing_from}"
                )
    return [(text, ref[key][1]) for key, (_, text) in src.items()]


def read_parallel_text(source: Path, target: Path, limit: int) -> list[tuple[str, str]]:
    """Up to ``limit`` line pairs of two line-aligned plain-text files (a corpus release's pair)."""
    pairs: list[tuple[str, str]] = []
    with source.open(encoding="utf-8") as fs, target.open(encoding="utf-8") as ft:
        number = 0
        while len(pairs) < limit:
            a, b = fs.readline(), ft.readline()
            number += 1
            if not a and not b:
                break
            if not a or not b:
                short = source if not a else target
                raise DataSourceError(f"{short}:{number}: ends before {target if short == source else source}")
            pairs.append((a.rstrip("\n"), b.rstrip("\n")))
    return pairs


@dataclass(frozen=True, kw_only=True)
class WMT14Scenario(FileScenario):
    """One WMT 2014 news translation direction (HELM Lite: Czech, German, French, Hindi, Russian into English)."""

    info = ScenarioInfo(
        name="wmt_14",
        description="WMT 2014 news translation (newstest2014), scored by BLEU-4 as HELM computes it.",
        task="generation",
        # HELM's instructions carry no newline of their own: one newline, then the example; the blank
        # line between an example and the next block is the answer's suffix (HELM's output suffix and
        # instance prefix, one newline each).
        default_adapter=prompt_format(
            max_tokens=100, max_train_instances=1, stop_sequences=("\n\n",), output_suffix="\n\n", instance_prefix=""
        ),
        main_metric="bleu_4",
        extra_metrics=("rouge", "bleu"),
        **TRANSLATION,
        tags=("translation", "multilingual", "lite"),
    )
    samples_prompts = True
    language_pair: str = arg(enum=PAIRS)

    def __post_init__(self) -> None:
        check_choice(self.language_pair, PAIRS, "WMT14 language pair")

    @property
    def source(self) -> str:
        return self.language_pair.split("-")[0]

    @property
    def target(self) -> str:
        return self.language_pair.split("-")[1]

    @property
    def foreign(self) -> str:
        return self.source if self.source != "en" else self.target

    def adapter_defaults(self) -> AdapterDefaults:
        """HELM's machine-translation adapter: the language names in the instructions and prefixes."""
        src, tgt = LANGUAGES[self.source], LANGUAGES[self.target]
        return {
            **self.info.default_adapter,
            "instructions": f"Translate the following sentences from {src} to {tgt}.",
            "input_prefix": f"{src}: ",
            "output_prefix": f"{tgt}: ",
        }

    def _test_files(self) -> tuple[str, str]:
        x = self.foreign
        return f"test-full/newstest2014-{x}en-src.{x}.sgm", f"test-full/newstest2014-{x}en-ref.en.sgm"

    def _valid_files(self) -> tuple[str, str]:
        name = "newsdev2014" if self.foreign == "hi" else "newstest2013"
        return f"dev/{name}-src.{self.foreign}.sgm", f"dev/{name}-ref.en.sgm"

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        root = data_root if data_root is not None else default_data_root()
        notes: list[str] = []
        if root is not None:
            base = Path(root) / "wmt_14"
            if not all((base / f).is_file() for f in self._test_files()):
                notes.append(f"wmt_14: {', '.join(self._test_files())} not under {base}; the run fails offline")
            if not all((base / f).is_file() for f in self._valid_files()):
                notes.append(f"wmt_14: no validation files ({', '.join(self._valid_files())}): test alone is evaluated")
            if not self._train_files(base):
                notes.append(
                    f"wmt_14: no training pairs under {base / 'train'}: {POOL_FROM_TEST} test pairs are the example pool "
                    "(HELM draws its 1 in-context example from the training corpora)"
                )
        n = TEST_SIZES[self.foreign] + VALID_SIZES[self.foreign]
        return PlanFacts(num_instances=n, notes=tuple(notes), samples_prompts=True)

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "wmt_14",
            layouts=(tuple(DataFile(f) for f in self._test_files()),),
            hint="https://www.statmt.org/wmt14/test-full.tgz (newstest2014 SGML files, into test-full/)",
        )

    def _train_files(self, base: Path) -> list[tuple[Path, Path]]:
        x = self.foreign
        folder = base / "train"
        if not folder.is_dir():
            return []
        out = []
        for src in sorted(folder.glob(f"*.{x}-en.{x}")):
            eng = src.with_name(src.name[: -len(x)] + "en")
            if not eng.is_file():
                raise DataSourceError(f"{src}: no English side {eng.name} beside it")
            out.append((src, eng))
        return out

    def _ordered(self, pair: tuple[str, str]) -> tuple[str, str]:
        """(source side, target side) of a (foreign, English) pair for this direction."""
        return pair if self.target == "en" else (pair[1], pair[0])

    def load(self, data: ResolvedData) -> list[Instance]:
        test_src, test_ref = self._test_files()
        base = data[test_src].parents[1]
        train: list[tuple[str, str]] = []
        for foreign, english in self._train_files(base):
            train += read_parallel_text(foreign, english, MAX_TRAIN_PAIRS - len(train))
        seen: set[str] = set()
        instances: list[Instance] = []
        for pair in train:
            src, tgt = self._ordered(pair)
            if tgt in seen:
                continue
            seen.add(tgt)
            instances.append(self._instance(f"train-{len(instances):05d}", src, tgt, TRAIN_SPLIT))
        valid_src, valid_ref = (base / f for f in self._valid_files())
        splits = [(VALID_SPLIT, valid_src, valid_ref)] if valid_src.is_file() and valid_ref.is_file() else []
        splits.append((TEST_SPLIT, data[test_src], data[test_ref]))
        for split, src_path, ref_path in splits:
            pairs = [p for p in read_sgm_pair(src_path, ref_path) if p[0] and p[1]]
            for index, pair in enumerate(pairs):
                src, tgt = self._ordered(pair)
                instances.append(self._instance(f"{split}-{index:05d}", src, tgt, split))
        if not train:
            return with_train_pool(instances, POOL_FROM_TEST, f"wmt_14-{self.language_pair}-train-pool")
        return instances

    def _instance(self, id_: str, source: str, target: str, split: str) -> Instance:
        return Instance(
            id=id_,
            input=source,
            references=(Reference(target, (CORRECT_TAG,)),),
            split=split,
            metadata={"language_pair": self.language_pair},
        )
