"""An extension states its name once, in its class: the decorators read it there, and a
table's or an entry point's key (an index for importing lazily) must be that name."""

from __future__ import annotations

import pytest

from holistic.core.registry import RegistrationError, Registry
from holistic.perturbations.base import BasePerturbation
from holistic.perturbations.lowercase import Lowercase


def _registry(builtins: dict[str, str]) -> Registry[type[BasePerturbation]]:
    return Registry("perturbation", builtins=builtins, base=BasePerturbation, name_of=lambda cls: cls.name)


def test_a_key_that_is_not_the_declared_name_is_refused_naming_both() -> None:
    registry = _registry({"lower": "holistic.perturbations.lowercase:Lowercase"})
    with pytest.raises(RegistrationError, match=r"perturbation 'lower' .* declares the name 'lowercase'"):
        registry.get("lower")


def test_the_decorator_form_registers_under_the_declared_name() -> None:
    registry = _registry({})
    assert registry.add_declared(Lowercase, "register_perturbation") is Lowercase
    assert registry.get("lowercase") is Lowercase


def test_a_name_given_to_the_decorator_is_the_earlier_form() -> None:
    with pytest.raises(RegistrationError, match="takes the class itself, not 'shout'"):
        _registry({}).add_declared("shout", "register_perturbation")  # type: ignore[arg-type]
