"""The language of a scenario's text, and which perturbations only make sense for English.

HELM's robustness and fairness perturbations rewrite English: lower-casing (Arabic has no
case), English contractions and expansions, a list of common English misspellings, typos of
neighbouring keys on an English (QWERTY) keyboard, English synonyms from WordNet, Standard
American English to African American English, English gender terms and pronouns, and
Anglo-American first names. On Arabic text they change nothing or break the script, so a run
that measured them would report the unperturbed score as robustness. A scenario whose text is
not English (:attr:`ScenarioInfo.language` not ``en``) is therefore unperturbed by default,
with the reason shown by ``--plan`` and the site's coverage page, and naming one of these
perturbations on such a run is a spec error that says why. Extra spaces between words
(``whitespace``) are language-neutral and stay available.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from holistic.core.interfaces import ScenarioInfo

ENGLISH = "en"
ARABIC = "ar"
MULTILINGUAL = "mul"
"""Several languages, none of them English (EXAMS multilingual)."""

ENGLISH_ONLY_PERTURBATIONS = MappingProxyType(
    {
        "lowercase": "lower-casing changes nothing in a script without case (Arabic)",
        "contractions": "it contracts English phrases (do not -> don't)",
        "expansions": "it expands English contractions (don't -> do not)",
        "misspellings": "it draws from a list of common English misspellings",
        "typos": "it swaps letters for their neighbours on an English (QWERTY) keyboard",
        "synonyms": "it replaces words by their English WordNet synonyms",
        "mild_mix": "it composes lower-casing, English contractions and English misspellings",
        "dialect": "it maps Standard American English to African American English",
        "gender": "it swaps English gender terms and pronouns",
        "person_names": "it swaps Anglo-American first names",
    }
)
"""Perturbation name -> why it only applies to English text."""

_REASON = (
    "the text is not English ({language}): HELM's {category} perturbations rewrite English words "
    "(lower-casing, contractions, misspellings, typos; dialect, gender terms, first names), so on this text "
    "they would change nothing or break the script; name a language-neutral perturbation (whitespace) to measure it"
)


def english_only_reason(name: str, language: str) -> str | None:
    """Why the perturbation ``name`` does not apply to text in ``language``, or ``None``."""
    if language == ENGLISH or name not in ENGLISH_ONLY_PERTURBATIONS:
        return None
    return (
        f"perturbation {name!r} only makes sense for English text and this scenario's text is {language!r}: "
        f"{ENGLISH_ONLY_PERTURBATIONS[name]}; name 'whitespace' (language-neutral) or none"
    )


def non_english_info(info: ScenarioInfo, language: str) -> ScenarioInfo:
    """``info`` for text in ``language``: robustness and fairness unperturbed by default, with the reason."""
    reasons = {c: _REASON.format(language=language, category=c) for c in ("robustness", "fairness")}
    return replace(info, language=language, unperturbed_by_default={**info.unperturbed_by_default, **reasons})
