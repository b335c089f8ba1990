"""A HELM window service every prompt fits in (the golden files are about prompt text, not a model's
window), for the peer programs beside this file, which run in HELM's interpreter."""

from typing import Any


class RoomyWindow:
    """HELM's ``WindowService`` methods the adapters call: nothing is ever cut."""

    def fits_within_context_window(self, text: str, expected_completion_token_length: int = 0) -> bool:
        return True

    def truncate_from_right(self, text: str, expected_completion_token_length: int = 0) -> str:
        return text


def install_roomy_window(adapter_module: Any) -> None:
    """Make HELM's adapters (``helm.benchmark.adaptation.adapters.adapter``) use :class:`RoomyWindow`."""
    adapter_module.WindowServiceFactory.get_window_service = staticmethod(lambda *a, **k: RoomyWindow())
