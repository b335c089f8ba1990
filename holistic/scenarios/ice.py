"""ICE, the International Corpus of English: language modelling by region, in bits per byte.

As HELM's ``ice``: every text of each regional subset is one instance, its corpus
markup removed (see :func:`strip_markup`), scored in rolling windows
(``language_modeling``). ``subset`` picks one region (default: all of them, with every
value also reported per region, ``region=ind``, pooled within the region);
``category`` keeps spoken (``S``; ``S1`` dialogues, ``S2`` monologues) or written
(``W``; ``W1`` private, ``W2`` public) texts, by the first letters of the text's file
name (East Africa: by HELM's table of its file names).

Data (the user's copy: ICE is licensed per region by its compilers and cannot be
shipped): each region's archive extracted under ``ice/`` with the folder names HELM
expects — ``ICE-CAN``, ``ICE-HK``, ``ICE India``, ``ICE-JA``, ``ICE Philippines``,
``ICE SINGAPORE``, ``ICE-USA``, ``ICE-IRL/ICE-Ireland version 1.2#6DAE.2/ICE-Ireland txt``,
``ICE-EA/corpus/retagged for wsmith`` — each holding its texts in ``Corpus``,
``CORPUS`` or ``corpus`` (Ireland: ``ICE combined running txt``; East Africa:
``all east africa``, where one file holds several texts, each starting at its text
code line such as ``W2A001K``). Files are read as UTF-8, else Latin-1, in name order.
Gender filtering from the speakers' metadata (HELM's ``gender``) is not offered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import TEST_SPLIT, Instance
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import bits_per_byte
from holistic.scenarios.loading.common import FileScenario, check_choice
from holistic.scenarios.loading.part_files import places

FOLDER = "ice"
ALL = "all"
# Region code -> folder of its extracted archive (HELM's names).
REGIONS: dict[str, str] = {
    "can": "ICE-CAN",
    "ea": "ICE-EA/corpus/retagged for wsmith",
    "hk": "ICE-HK",
    "ind": "ICE India",
    "irl": "ICE-IRL/ICE-Ireland version 1.2#6DAE.2/ICE-Ireland txt",
    "ja": "ICE-JA",
    "phi": "ICE Philippines",
    "sin": "ICE SINGAPORE",
    "usa": "ICE-USA",
}
CATEGORIES: tuple[str, ...] = (ALL, "S", "W", "S1", "S2", "W1", "W2")
# East Africa's file names (dashes and the 5-character ending removed) -> text category.
EA_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(("brdisc", "brint", "clless", "conv", "conv1", "conv2", "crossx", "parlia"), "S1"),
    **dict.fromkeys(("brnews", "brtalk", "schbr", "splect"), "S2"),
    **dict.fromkeys(("buslet", "essays", "exam", "judge", "soclet"), "W1"),
    **dict.fromkeys(
        (
            "column",
            "crea",
            "creat1",
            "creat2",
            "editor",
            "feat",
            "instruct",
            "ldhum",
            "ldnats",
            "ldsoc",
            "ldtech",
            "ppgen",
            "pphum",
            "ppnats",
            "ppsoc",
            "pptech",
            "splash",
        ),
        "W2",
    ),
}
_EA_TEXT_START = re.compile(r"[WS]\d[A-F]\d{3}[A-Z]*[KT]\n")

# The markup clean-up HELM applies, in its order: patterns deleted outright, patterns
# replaced, tags dropped with their contents kept, tags dropped with their contents.
_DELETE = (
    r"[WS]\d[A-F]-\d{3} *",
    " <l> ",
    "<#> ",
    r"BBB\S+ \S+RRR *",
    r"BBB\S+ *",
    r"RRR\S+ *",
    "UUU",
    r"III\S+ *",
)
_REPLACE = (
    (r"<\/*mention>", '"'),
    (r"</\*\*>", "*"),
    (r"</\*\*/>", "*"),
    ("&eacute;", "é"),
    (" <,+>", ","),
    ("&ersand;", "&"),
    ("&obrack;", "("),
    ("&cbrack;", ")"),
    ("&percent;", "%"),
    ("&hash;", "#"),
    ("&dash", "-"),
    ("&ldquo;", '"'),
    ("&atsign;", "@"),
    (r"\n+[\n ]+", "\n\n"),
    (r"\S+><\+_(\S+)>", r"\1"),
)
_UNTAG = re.compile(
    r"<\/*("
    + "|".join(
        (
            "I",
            "ICE.+",
            r"[\[\]\{\}]\d*",
            "X",
            "@",
            "quote",
            "foreign",
            "indig",
            "smallcaps",
            "roman",
            "sb",
            "ss",
            "footnote",
            "p",
            "h",
            "bold",
            "it",
            "ul",
            r"\+",
            r"\=",
            r"\?",
            "sp",
            "}",
            "ea",
            "slang",
        )
    )
    + ")>"
)
_REMOVE_WITH_CONTENT = ("O", "-", "&", ".", "fnr", "marginalia", "del", "w")


def strip_markup(text: str) -> str:
    """A corpus text without its markup, as HELM prepares it (speaker tags such as ``<$A>`` kept)."""
    text = text.strip()
    for pattern in _DELETE:
        text = re.sub(pattern, "", text)
    for pattern, replacement in _REPLACE:
        text = re.sub(pattern, replacement, text)
    text = _UNTAG.sub("", text)
    for tag in _REMOVE_WITH_CONTENT:
        opening, closing = f"<{tag}>", f"</{tag}>"
        end = text.find(closing)
        while end >= 0:
            # From the nearest opening tag before the closing one (or the closing tag alone).
            start = text.rfind(opening, 0, end)
            text = text[: start if start >= 0 else end] + text[end + len(closing) :]
            end = text.find(closing)
    return text.strip()


def corpus_folder(region: str, base: Path) -> Path:
    """The folder holding a region's texts inside its extracted archive."""
    names = {p.name for p in base.iterdir()}
    for name in ("Corpus", "CORPUS"):
        if name in names:
            return base / name
    if region == "irl":
        return base / "ICE combined running txt"
    if region == "ea":
        return base / "all east africa"
    return base / "corpus"


def text_category(region: str, file_name: str, path: Path) -> str:
    """The category code of a text file (``S1``, ``W2``...)."""
    if region == "ea":
        key = file_name.replace("-", "")[:-5].lower()
        if key not in EA_CATEGORIES:
            raise DataSourceError(f"{path}: East Africa file name {key!r} is not in the category table")
        return EA_CATEGORIES[key]
    return file_name[:2].upper()


def in_category(category: str, wanted: str) -> bool:
    return wanted == ALL or category.startswith(wanted)


def read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("iso-8859-1")


def read_region(region: str, base: Path, category: str) -> list[Instance]:
    """The instances of one region's extracted archive at ``base``."""
    folder = corpus_folder(region, base)
    if not folder.is_dir():
        raise DataSourceError(f"{base}: no corpus folder (expected Corpus/, CORPUS/ or corpus/)")
    out = []
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        if category != ALL and not in_category(text_category(region, path.name, path), category):
            continue
        raw = read_text(path)
        parts = [t for t in _EA_TEXT_START.split(raw) if t] if region == "ea" else [raw]
        for index, part in enumerate(parts):
            text = strip_markup(part)
            if not text:
                continue
            suffix = f"-{index}" if region == "ea" else ""
            out.append(
                Instance(
                    id=f"{region}/{path.name}{suffix}",
                    input=text,
                    split=TEST_SPLIT,
                    metadata={"region": region, "file": path.name},
                )
            )
    return out


@dataclass(frozen=True, kw_only=True)
class ICEScenario(FileScenario):
    """Bits per byte on the International Corpus of English, per region."""

    info = ScenarioInfo(
        name="ice",
        description="ICE: how well the model predicts English as written and spoken in nine regions (bits per byte).",
        **bits_per_byte(
            robustness="HELM scores the texts unperturbed",
            fairness="the comparison between regions is the measurement itself (see the per-region rows)",
        ),
        tags=("language_modeling", "dialect", "targeted:language"),
        breakdowns=("region",),
    )

    subset: str = arg(ALL, enum=(ALL, *REGIONS))
    category: str = arg(ALL, enum=CATEGORIES)

    def __post_init__(self) -> None:
        check_choice(self.subset, [ALL, *REGIONS], "ICE subset")
        check_choice(self.category, CATEGORIES, "ICE category")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        wanted = self.regions()
        roots = places(ScenarioContext(data_root=data_root), FOLDER)
        present = [r for r in wanted if any((root / REGIONS[r]).is_dir() for root in roots)]
        missing = [r for r in wanted if r not in present]
        facts = PlanFacts(num_instances=500 * len(wanted))
        if not missing:
            return facts
        where = " or ".join(str(r) for r in roots)
        use = "runs use those" if present else "ICE cannot be downloaded: extract your licensed archives there"
        note = (
            f"ice: {len(present)} of {len(wanted)} regional corpora present under {where}; {use}; "
            f"missing: {', '.join(f'{REGIONS[r]}/ ({r})' for r in missing)}"
        )
        return replace(facts, notes=(note,))

    def regions(self) -> list[str]:
        return list(REGIONS) if self.subset == ALL else [self.subset]

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        roots = places(ctx, FOLDER)
        instances: list[Instance] = []
        missing = []
        for region in self.regions():
            base = next((r / REGIONS[region] for r in roots if (r / REGIONS[region]).is_dir()), None)
            if base is None:
                missing.append(f"{REGIONS[region]}/ ({region})")
                continue
            instances.extend(read_region(region, base, self.category))
        if missing and (self.subset != ALL or not instances):
            looked = ", ".join(str(r) for r in roots)
            raise DataSourceError(
                f"data for scenario 'ice' not found: {', '.join(missing)} under {looked}. ICE cannot be "
                "downloaded automatically: extract each region's archive there (https://www.ice-corpora.uzh.ch/)"
            )
        return instances
