"""The scenario registry: names -> scenario classes (built-ins, entry points, ``--plugins`` code)."""

from __future__ import annotations

from typing import Any

from holistic.core.interfaces import ScenarioInfo
from holistic.core.registry import Registry
from holistic.core.types import ScenarioSpec
from holistic.scenarios.base import BaseScenario

BUILTIN_SCENARIOS: dict[str, str] = {
    "anthropic_red_team": "holistic.scenarios.safety:AnthropicRedTeamScenario",
    "apps": "holistic.scenarios.apps:APPSScenario",
    "arabic_exams": "holistic.scenarios.exams:ArabicEXAMSScenario",
    "arithmetic": "holistic.scenarios.synthetic:ArithmeticScenario",
    "babi_qa": "holistic.scenarios.babi:BabiQAScenario",
    "bbq": "holistic.scenarios.bbq:BBQScenario",
    "blimp": "holistic.scenarios.blimp:BLiMPScenario",
    "bold": "holistic.scenarios.bold:BOLDScenario",
    "boolq": "holistic.scenarios.boolq:BoolQScenario",
    "civil_comments": "holistic.scenarios.civil_comments:CivilCommentsScenario",
    "cnn_dailymail": "holistic.scenarios.cnn_dailymail:CNNDailyMailScenario",
    "copyright": "holistic.scenarios.copyright:CopyrightScenario",
    "disinformation": "holistic.scenarios.disinformation:DisinformationScenario",
    "dyck_language": "holistic.scenarios.dyck:DyckLanguageScenario",
    "entity_data_imputation": "holistic.scenarios.entity_data_imputation:EntityDataImputationScenario",
    "entity_matching": "holistic.scenarios.entity_matching:EntityMatchingScenario",
    "exams_multilingual": "holistic.scenarios.exams:EXAMSMultilingualScenario",
    "file": "holistic.scenarios.loading.user_file:FileDatasetScenario",
    "financial_phrasebank": "holistic.scenarios.haystack.phrasebank:FinancialPhraseBankScenario",
    "gsm8k": "holistic.scenarios.gsm8k:GSM8KScenario",
    "gpqa": "holistic.scenarios.gpqa:GPQAScenario",
    "harm_bench": "holistic.scenarios.safety:HarmBenchScenario",
    "haystack": "holistic.scenarios.haystack.scenario:HaystackScenario",
    "hellaswag": "holistic.scenarios.hellaswag:HellaSwagScenario",
    "humaneval": "holistic.scenarios.humaneval:HumanEvalScenario",
    "huggingface": "holistic.scenarios.loading.user_huggingface:HuggingFaceDatasetScenario",
    "ice": "holistic.scenarios.ice:ICEScenario",
    "ifeval": "holistic.scenarios.ifeval:IFEvalScenario",
    "imdb": "holistic.scenarios.imdb:IMDBScenario",
    "legal_support": "holistic.scenarios.legal_support:LegalSupportScenario",
    "legalbench": "holistic.scenarios.legalbench:LegalBenchScenario",
    "llmebench_qa": "holistic.scenarios.llmebench:ArabicQAScenario",
    "llmebench_sarcasm": "holistic.scenarios.llmebench:SarcasmScenario",
    "llmebench_stance": "holistic.scenarios.llmebench:StanceScenario",
    "lsat_qa": "holistic.scenarios.lsat:LSATScenario",
    "math": "holistic.scenarios.math_competition:MATHScenario",
    "med_qa": "holistic.scenarios.med_qa:MedQAScenario",
    "mmlu": "holistic.scenarios.mmlu:MMLUScenario",
    "mmlu_pro": "holistic.scenarios.mmlu_pro:MMLUProScenario",
    "msmarco": "holistic.scenarios.msmarco:MSMARCOScenario",
    "narrative_qa": "holistic.scenarios.narrative_qa:NarrativeQAScenario",
    "natural_qa": "holistic.scenarios.natural_qa:NaturalQAScenario",
    "omni_math": "holistic.scenarios.judged_capabilities:OmniMATHScenario",
    "openbookqa": "holistic.scenarios.openbookqa:OpenBookQAScenario",
    "quac": "holistic.scenarios.quac:QuACScenario",
    "raft": "holistic.scenarios.raft:RAFTScenario",
    "real_toxicity_prompts": "holistic.scenarios.real_toxicity_prompts:RealToxicityPromptsScenario",
    "simple_safety_tests": "holistic.scenarios.safety:SimpleSafetyTestsScenario",
    "synthetic_reasoning": "holistic.scenarios.synthetic:SyntheticReasoningScenario",
    "synthetic_reasoning_natural": "holistic.scenarios.synthetic_reasoning_natural:SyntheticReasoningNaturalScenario",
    "the_pile": "holistic.scenarios.the_pile:ThePileScenario",
    "truthful_qa": "holistic.scenarios.truthful_qa:TruthfulQAScenario",
    "twitter_aae": "holistic.scenarios.twitter_aae:TwitterAAEScenario",
    "wikifact": "holistic.scenarios.wikifact:WikiFactScenario",
    "wildbench": "holistic.scenarios.judged_capabilities:WildBenchScenario",
    "wikitext": "holistic.scenarios.wikitext:WikiTextScenario",
    "wmt_14": "holistic.scenarios.wmt_14:WMT14Scenario",
    "xstest": "holistic.scenarios.safety:XSTestScenario",
    "xsum": "holistic.scenarios.xsum:XSumScenario",
}
"""The built-in scenarios, declared like plugins' entry points: name -> ``"module:Class"``
(imported on first lookup of the name)."""

SCENARIOS: Registry[type[BaseScenario]] = Registry.of_extensions(
    "scenario", BaseScenario, BUILTIN_SCENARIOS, name_of=lambda cls: getattr(getattr(cls, "info", None), "name", None)
)


def scenario_info(name: str) -> ScenarioInfo:
    return SCENARIOS.get(name).info


def create_scenario(spec: ScenarioSpec) -> BaseScenario:
    cls = SCENARIOS.get(spec.name)
    args: dict[str, Any] = spec.args_dict
    return cls(**args)
