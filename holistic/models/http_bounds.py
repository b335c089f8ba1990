"""The HTTP client of the API providers, bounded in time and size whatever the server does.

An HTTP timeout bounds each read, not the request: a server that sends its headers and then
one byte every half second never trips it. And nothing bounds the body: an endless chunked
answer, or a ``Content-Length`` of 2 GiB, is read into memory until the machine gives out.
:func:`bounded_client` makes the ``httpx2`` client the SDKs are given (the HTTP library the openai and anthropic SDKs use), whose transport

- refuses a response whose ``Content-Length`` is past ``max_bytes`` before reading it, and
  stops reading a body (chunked or not) the moment it passes ``max_bytes``
  (:class:`ResponseTooLarge`, a final failure: the same server would send it again);
- stops reading a body once the request has taken ``deadline_s`` in all, trickle included
  (``httpx.ReadTimeout``, retried like any timeout).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx

DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""Bytes one HTTP answer may have (the registry arg ``max_response_bytes`` raises it)."""


class ResponseTooLarge(Exception):
    """An answer past the size limit; never retried."""


class _BoundedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, url: str, max_bytes: int, deadline: float) -> None:
        self._inner = inner
        self._url = url
        self._max_bytes = max_bytes
        self._deadline = deadline

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        for chunk in self._inner:
            received += len(chunk)
            if received > self._max_bytes:
                raise ResponseTooLarge(
                    f"the answer from {self._url} is larger than {self._max_bytes:,} bytes "
                    "(raise the model's max_response_bytes arg to accept it)"
                )
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout(f"the answer from {self._url} took longer than its deadline in all")
            yield chunk

    def close(self) -> None:
        self._inner.close()


class BoundedTransport(httpx.BaseTransport):
    """An ``httpx`` transport with a total deadline and a size limit per request (see the module)."""

    def __init__(self, inner: httpx.BaseTransport, *, deadline_s: float, max_bytes: int) -> None:
        self._inner = inner
        self.deadline_s = deadline_s
        self.max_bytes = max_bytes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.deadline_s
        response = self._inner.handle_request(request)
        where = f"{request.url.scheme}://{request.url.host}:{request.url.port or ''}{request.url.path}"
        claimed = response.headers.get("content-length", "")
        if claimed.strip().isdigit() and int(claimed) > self.max_bytes:
            response.close()
            raise ResponseTooLarge(
                f"the answer from {where} claims {int(claimed):,} bytes (Content-Length), more than "
                f"{self.max_bytes:,} (raise the model's max_response_bytes arg to accept it)"
            )
        assert isinstance(response.stream, httpx.SyncByteStream)
        response.stream = _BoundedStream(response.stream, where, self.max_bytes, deadline)
        return response

    def close(self) -> None:
        self._inner.close()


def bounded_client(*, deadline_s: float, max_bytes: int, **kwargs: Any) -> httpx.Client:
    """An ``httpx.Client`` whose every request ends within ``deadline_s`` of body reading and ``max_bytes``."""
    transport = BoundedTransport(httpx.HTTPTransport(), deadline_s=deadline_s, max_bytes=max_bytes)
    return httpx.Client(transport=transport, timeout=httpx.Timeout(deadline_s), follow_redirects=True, **kwargs)


def too_large(exc: BaseException) -> ResponseTooLarge | None:
    """The :class:`ResponseTooLarge` behind ``exc`` (SDKs wrap transport errors), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ResponseTooLarge):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
