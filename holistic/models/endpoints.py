"""Is a deployment's own endpoint there at all? Checked once, before a suite writes anything.

A ``base_url`` that nothing listens on (a server not started, a typo in the port, a host
that does not resolve) would otherwise cost every request its full retry budget before the
run fails: minutes per run, with an error that does not say which URL. :func:`check_endpoints`
opens one TCP connection to each distinct ``base_url`` host and port, with a short timeout,
and raises :class:`~holistic.core.errors.ModelError` naming every URL that refused. Only the
connection is tried (no request is sent, no key travels); deployments without a ``base_url``
(local engines, a vendor's default endpoint) and providers that run in this process are not
checked here.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from holistic.core.errors import ModelError
from holistic.core.secrets import scrub_url
from holistic.core.types import ModelDeployment

CONNECT_TIMEOUT_S = 3.0


def endpoint_problem(url: str, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why nothing answers at ``url`` (refused, unresolvable, timed out), or ``None``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            return None
    except socket.gaierror as exc:
        return f"the host {parts.hostname!r} does not resolve ({exc.strerror or exc})"
    except TimeoutError:
        return f"no answer from {parts.hostname}:{port} within {timeout_s:g} s"
    except OSError as exc:
        return f"{parts.hostname}:{port}: {exc.strerror or exc}"


def check_endpoints(deployments: Iterable[ModelDeployment], timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise naming every deployment whose ``base_url`` cannot be connected to."""
    problems: list[str] = []
    seen: set[str] = set()
    for deployment in deployments:
        url = deployment.args.get("base_url")
        if not isinstance(url, str) or not url or url in seen:
            continue
        seen.add(url)
        problem = endpoint_problem(url, timeout_s)
        if problem is not None:
            problems.append(f"model {deployment.name!r}: base_url {scrub_url(url)} is unreachable: {problem}")
    if problems:
        raise ModelError(
            "; ".join(problems) + ". Start the server (or fix base_url in the models file) and run again; "
            "nothing was written"
        )
