"""Scenarios: where instances come from.

- :mod:`holistic.scenarios.registry`: ``SCENARIOS``, ``create_scenario``, ``scenario_info``
  (built-ins are imported lazily; third parties register through the
  ``holistic.scenarios`` entry-point group).
- :mod:`holistic.scenarios.sources`: finding, fetching and verifying data files
  (mirror, cache, download with sha256); ``fetch_for_runs`` for ``helm-run --fetch-only``.
- One module per scenario family (``mmlu``, ``boolq``, ``raft``, ``synthetic``...), and
  ``user_file`` / ``user_huggingface`` for datasets described in YAML alone.

Optional class methods a scenario may offer, used without loading data:
``estimate_num_instances(args) -> int | None`` (for ``--plan``) and
``default_adapter_for(args) -> dict`` (adapter defaults that depend on the args,
e.g. the MMLU subject or the RAFT task in the instructions).
"""
