"""Run specs: load YAML (keeping line numbers), validate, expand into RunSpecs, plan.

Public API::

    from holistic.spec import compile_spec, CompiledSuite
    from holistic.spec.plan import make_plan, format_plan
"""

from holistic.core.errors import SpecError
from holistic.spec.compiler import CompiledSuite, compile_spec

__all__ = ["CompiledSuite", "SpecError", "compile_spec"]
