"""Scenario machinery, apart from the datasets: how scenarios find, read and shape their data.

- :mod:`~holistic.scenarios.loading.sources`: :class:`DataNeeds` / :class:`DataFile` /
  :class:`Download`, and ``resolve`` (mirror, cache, download verified by sha256);
- :mod:`~holistic.scenarios.loading.common`: :class:`FileScenario` (a scenario that reads
  declared files) and small helpers (checksum pins, URLs, references, held-out splits);
- :mod:`~holistic.scenarios.loading.readers`, ``hf_copy``, ``part_files``, ``tabular``: the
  authors' file formats, Hugging Face Parquet copies, per-part files, relational tables;
- ``hub_fallback``: the base of the core scenarios that fall back on that Hub copy;
- ``user_file``, ``user_huggingface`` and their helpers (``user_dataset``, ``user_fields``,
  ``field_paths``, ``user_shaping``, ``user_tables``): datasets described in YAML alone;
- ``categories``, ``prompt_format``, ``code_common``, ``capabilities_prompts``: metric
  categories, the house prompt format, and what several scenario families share.

Every other module of :mod:`holistic.scenarios` (besides ``base`` and ``registry``, the
contract) defines one dataset or family of datasets.
"""
