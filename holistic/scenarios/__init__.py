"""Scenarios: where instances come from.

- :mod:`holistic.scenarios.registry`: ``SCENARIOS``, ``create_scenario``, ``scenario_info``
  (built-ins are imported lazily; third parties register through the
  ``holistic.scenarios`` entry-point group).
- :mod:`holistic.scenarios.base`: ``BaseScenario``, the contract every scenario subclasses.
- :mod:`holistic.scenarios.loading`: the machinery, apart from the datasets: finding, fetching
  and verifying data files (``loading.sources``: mirror, cache, download with sha256), readers
  of the authors' formats, and ``user_file`` / ``user_huggingface`` for datasets described in
  YAML alone.
- :mod:`holistic.scenarios.fetching`: ``fetch_for_runs`` for ``helm-run --fetch-only``.
- Every other module is one scenario family (``mmlu``, ``boolq``, ``raft``, ``synthetic``...;
  ``haystack/`` is one family in several modules).

A scenario is a frozen dataclass whose fields are its arguments (their JSON Schema is
derived). Optional hooks, asked of the scenario constructed from a run's arguments without
loading data: ``plan_facts(data_root, max_eval_instances) -> PlanFacts`` (what ``--plan``
may know) and ``adapter_defaults() -> AdapterDefaults`` (adapter defaults that depend on the
args, e.g. the MMLU subject or the RAFT task in the instructions).
"""
