"""Run specs: load YAML (keeping line numbers), validate, expand into RunSpecs.

Public API::

    from holistic.spec import compile_spec, CompiledSuite

The plan of a compiled suite (``--plan``: sizes, times, conformance and coverage) is
:func:`holistic.execution.plan.make_plan`: it builds prompts as a run builds them and
reads the measured speeds, so it sits with execution, above this package.
"""

from holistic.core.errors import SpecError
from holistic.spec.compiler import CompiledSuite, compile_spec

__all__ = ["CompiledSuite", "SpecError", "compile_spec"]
