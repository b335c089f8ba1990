"""WikiFact (HELM, after Petroni et al., 2019): relation-wise fact completion from Wikidata.

Each instance is one Wikidata triple in natural language with the object left out
(``Doug Eckerty is an instance of``); every object name of the triple is a correct
reference. ``relation`` selects one Wikidata property by HELM's name (``author``,
``place_of_birth``...; the Wikidata id ``P50`` is accepted too), as HELM runs one
run per relation.

HELM's protocol: the template continued after a space (no prefixes, the answer ends
the line), five in-context examples of the same relation, ``k = 5`` samples at
temperature 1 of up to 8 tokens, stopping at a newline. Scored with the exact-match
family (``quasi_exact_match`` main) on the most probable sample and, as top-k
accuracy, the best of the five (``quasi_exact_match@k`` and the others with ``@k``). Values are also
reported per relation (``relation=author``).

Data: HELM's ``train.jsonl``, ``dev.jsonl`` and ``test.jsonl`` (one JSON object per
line; HELM reads ``property`` (the Wikidata id), ``template`` (the prompt) and
``result_names`` (a list of name lists, one per object); other fields are ignored),
from HELM's CodaLab bundle. The bundle is immutable, but its host could not be reached
to take sha256 sums, so the files are not pinned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import OPEN_QA
from holistic.scenarios.loading.common import SplitFilesScenario, check_choice
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require, require_text
from holistic.scenarios.loading.sources import Download

_BUNDLE = "https://worksheets.codalab.org/rest/bundles/0x8c3b60eb7c6b462e822a150f194d3b35/contents/blob"
ALL = "all"

RELATIONS: dict[str, str] = {
    # General facts
    "instance_of": "P31",
    "subclass_of": "P279",
    "part_of": "P361",
    "has_part": "P527",
    "named_after": "P138",
    "country": "P17",
    "country_of_origin": "P495",
    "country_of_citizenship": "P27",
    "continent": "P30",
    "capital": "P36",
    "capital_of": "P1376",
    "shares_border_with": "P47",
    "located_in_the_administrative_territorial_entity": "P131",
    "location": "P276",
    "location_of_formation": "P740",
    "headquarters_location": "P159",
    "twinned_administrative_body": "P190",
    "official_language": "P37",
    "native_language": "P103",
    "languages_spoken_written_or_signed": "P1412",
    "language_of_work_or_name": "P407",
    "place_of_birth": "P19",
    "place_of_death": "P20",
    "religion": "P140",
    # Humanities and arts
    "genre": "P136",
    "instrument": "P1303",
    "author": "P50",
    "creator": "P170",
    "composer": "P86",
    "director": "P57",
    "movement": "P135",
    "influenced_by": "P737",
    "original_network": "P449",
    "original_language_of_film_or_TV_show": "P364",
    "record_label": "P264",
    # Law
    "applies_to_jurisdiction": "P1001",
    "overrules": "P4006",
    "laws_applied": "P3014",
    "repealed_by": "P2568",
    "majority_opinion_by": "P5826",
    "plaintiff": "P1620",
    "defendant": "P1591",
    # Politics and government
    "member_of_political_party": "P102",
    "diplomatic_relation": "P530",
    "position_held": "P39",
    "basic_form_of_government": "P122",
    "office_held_by_head_of_state": "P1906",
    "head_of_state": "P35",
    "office_held_by_head_of_government": "P1313",
    "head_of_government": "P6",
    # Economy and organisations
    "currency": "P38",
    "central_bank": "P1304",
    "subsidiary": "P355",
    "stock_exchange": "P414",
    "industry": "P452",
    "owned_by": "P127",
    "manufacturer": "P176",
    "developer": "P178",
    "employer": "P108",
    "member_of": "P463",
    # People and work
    "occupation": "P106",
    "field_of_work": "P101",
    "work_location": "P937",
    "educated_at": "P69",
    "award_received": "P166",
    "position_played_on_team": "P413",
    "member_of_sports_team": "P54",
    "participating_team": "P1923",
    # Science and technology
    "statement_describes": "P2384",
    "solved_by": "P1136",
    "programming_language": "P277",
    "file_extension": "P1195",
    "number_of_processor_cores": "P1141",
    "operating_system": "P306",
    "measured_physical_quantity": "P111",
    "recommended_unit_of_measurement": "P8111",
    "atomic_number": "P1086",
    "electron_configuration": "P8000",
    "discoverer_or_inventor": "P61",
    "time_of_discovery_or_invention": "P575",
    "location_of_discovery": "P189",
    # Medicine
    "medical_condition_treated": "P2175",
    "drug_or_therapy_used_for_treatment": "P2176",
    "genetic_association": "P2293",
    "therapeutic_area": "P4044",
    "symptoms_and_signs": "P780",
}
"""HELM's relation names -> Wikidata property ids (the 86 relations of HELM's scenario)."""

PROPERTY_NAMES: dict[str, str] = {pid: name for name, pid in RELATIONS.items()}

HELM_RELATIONS: tuple[str, ...] = (
    "plaintiff",
    "place_of_birth",
    "medical_condition_treated",
    "instance_of",
    "part_of",
    "currency",
    "position_held",
    "author",
    "discoverer_or_inventor",
    "symptoms_and_signs",
)
"""The ten relations of HELM's headline WikiFact runs (general facts, humanities, social sciences, STEM)."""


def relation_name(value: Any) -> str:
    """A relation argument (HELM name, Wikidata id or ``all``) as a HELM name or ``all``."""
    if isinstance(value, str) and value in PROPERTY_NAMES:
        return PROPERTY_NAMES[value]
    return check_choice(value, [ALL, *RELATIONS], "WikiFact relation")


def object_names(value: Any, where: str) -> list[str]:
    """The flattened ``result_names`` (a list of name lists) with surrounding space stripped."""
    if not isinstance(value, list) or not all(isinstance(names, list) for names in value):
        raise DataSourceError(f"{where}: 'result_names' must be a list of lists of names")
    out = []
    for names in value:
        for name in names:
            if not isinstance(name, str):
                raise DataSourceError(f"{where}: 'result_names' holds {name!r}, not a name")
            out.append(name.strip())
    return out


def read_wikifact(path: Path, split: str, relation: str = ALL) -> list[Instance]:
    """The triples of one split file (of one relation unless ``relation`` is ``all``)."""
    wanted = None if relation == ALL else RELATIONS[relation]
    out = []
    for number, where, row in iter_located_jsonl(path):
        pid = require(row, "property", where)
        if wanted is not None and pid != wanted:
            continue
        template = require_text(row, "template", where)
        names = [n for n in object_names(require(row, "result_names", where), where) if n]
        if not names:
            raise DataSourceError(f"{where}: 'result_names' has no object name")
        out.append(
            Instance(
                id=f"{path.stem}-{number}",
                input=template,
                references=tuple(Reference(n, (CORRECT_TAG,)) for n in dict.fromkeys(names)),
                split=split,
                metadata={"relation": PROPERTY_NAMES.get(str(pid), str(pid))},
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class WikiFactScenario(SplitFilesScenario):
    """Fact completion over Wikidata relations (HELM's knowledge component)."""

    notes_missing_files = True
    info = ScenarioInfo(
        name="wikifact",
        description="WikiFact: complete a Wikidata fact stated in English; accuracy on one sample and top-5.",
        task="generation",
        default_adapter={
            **prompt_format(
                input_suffix="",
                output_prefix=" ",
                max_tokens=8,
                temperature=1.0,
            ),
            "num_outputs": 5,
        },
        main_metric="quasi_exact_match",
        **OPEN_QA,
        tags=("knowledge", "targeted:knowledge"),
        breakdowns=("relation",),
    )
    split_files = (("train.jsonl", TRAIN_SPLIT), ("dev.jsonl", VALID_SPLIT), ("test.jsonl", TEST_SPLIT))
    hint = f"HELM's WikiFact files: {_BUNDLE}/<train|dev|test>.jsonl"

    relation: str = arg(ALL, enum=(ALL, *RELATIONS, *PROPERTY_NAMES))

    def __post_init__(self) -> None:
        object.__setattr__(self, "relation", relation_name(self.relation))

    def download(self, name: str) -> Download:
        return Download(f"{_BUNDLE}/{name}")

    def read(self, path: Path, split: str) -> list[Instance]:
        return read_wikifact(path, split, self.relation)
