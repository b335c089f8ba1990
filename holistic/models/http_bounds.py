"""The HTTP client of the API providers, bounded in time and size whatever the server does.

An HTTP timeout bounds each read, not the request: a server that sends its status line, its
headers or its body one byte every half second never trips it. And nothing bounds the body: an
endless chunked answer, or a ``Content-Length`` of 2 GiB, is read into memory until the machine
gives out. :func:`bounded_client` makes the ``httpx2`` client the SDKs are given (the HTTP
library the openai and anthropic SDKs use), whose transport

- refuses a response whose ``Content-Length`` is past ``max_bytes`` before reading it, and
  stops reading a body (chunked or not) the moment it passes ``max_bytes``
  (:class:`ResponseTooLarge`, a final failure: the same server would send it again);
- ends every connect, write and read of the socket once the request has taken ``deadline_s``
  in all, from the first byte sent to the last byte of the body, headers included
  (``httpx.ReadTimeout`` and the like, retried like any timeout). The deadline belongs to the
  thread sending the request (the SDKs are synchronous), and each socket read waits at most
  the time that is left of it.

For a plain ``http://`` base URL (a server on this machine or network) no TLS context is made
until a request goes to an ``https://`` URL (a redirect): loading the system's certificates is
much of what making the client costs. That request then goes through a transport exactly like
the one of an ``https://`` base URL, made on first use, which verifies as it always does.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore2
import httpx2 as httpx

DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""Bytes one HTTP answer may have (the registry arg ``max_response_bytes`` raises it)."""


class ResponseTooLarge(Exception):
    """An answer past the size limit; never retried."""


class _BoundedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, url: str, max_bytes: int) -> None:
        self._inner = inner
        self._url = url
        self._max_bytes = max_bytes

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        for chunk in self._inner:
            received += len(chunk)
            if received > self._max_bytes:
                raise ResponseTooLarge(
                    f"the answer from {self._url} is larger than {self._max_bytes:,} bytes "
                    "(raise the model's max_response_bytes arg to accept it)"
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()


_deadline = threading.local()
"""``at``: the ``time.monotonic()`` by which this thread's request must be over."""


def _time_left(timeout: float | None, what: type[httpcore2.TimeoutException]) -> float | None:
    """``timeout`` shortened to what is left of this thread's deadline; ``what`` once it has passed."""
    at: float | None = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise what("the request took longer than its deadline (timeout_s) in all")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    """A socket stream whose every wait ends at the deadline of the request using it."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _time_left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _time_left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        left = _time_left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """Connections whose streams keep the deadline of the request using them (:class:`_DeadlineStream`)."""

    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        left = _time_left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        left = _time_left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _with_deadlines(transport: httpx.HTTPTransport) -> httpx.HTTPTransport:
    """``transport`` whose connections are made by :class:`_DeadlineBackend`.

    httpx2 has no option for the network backend of its connection pool, so it is set on the
    pool (``httpcore2.ConnectionPool``) before any connection is made."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(backend, httpcore2.NetworkBackend):
        raise RuntimeError("httpx2's connection pool has changed: the request deadline cannot be set")
    pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
    return transport


class BoundedTransport(httpx.BaseTransport):
    """An ``httpx`` transport with a total deadline and a size limit per request (see the module)."""

    def __init__(self, inner: httpx.BaseTransport, *, deadline_s: float, max_bytes: int) -> None:
        self._inner = inner
        self.deadline_s = deadline_s
        self.max_bytes = max_bytes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        _deadline.at = time.monotonic() + self.deadline_s  # until this thread's next request
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
        response.stream = _BoundedStream(response.stream, where, self.max_bytes)
        return response

    def close(self) -> None:
        self._inner.close()


class _TlsOnDemand(httpx.BaseTransport):
    """Plain ``http://`` requests on a transport that can make no TLS connection, every other
    request on a default (verifying) transport made on first use: what :func:`bounded_client`
    uses for a plain ``http://`` base URL."""

    def __init__(self) -> None:
        # The context is never used: this transport only ever sees http:// URLs. Even so it
        # verifies, holding no certificate to trust, so a TLS connection through it would fail.
        no_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self._plain = _with_deadlines(httpx.HTTPTransport(verify=no_tls))
        self._tls: httpx.HTTPTransport | None = None
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "http":
            return self._plain.handle_request(request)
        return self._verifying().handle_request(request)

    def _verifying(self) -> httpx.HTTPTransport:
        with self._lock:
            if self._tls is None:
                self._tls = _with_deadlines(httpx.HTTPTransport())
            return self._tls

    def close(self) -> None:
        self._plain.close()
        with self._lock:
            if self._tls is not None:
                self._tls.close()


def bounded_client(*, deadline_s: float, max_bytes: int, base_url: object = None, **kwargs: Any) -> httpx.Client:
    """An ``httpx.Client`` whose every request ends within ``deadline_s`` in all and ``max_bytes``;
    ``base_url`` is the deployment's (for a plain ``http://`` one, TLS is set up only if needed: see the module)."""
    plain = isinstance(base_url, str) and base_url.strip().lower().startswith("http://")
    inner = _TlsOnDemand() if plain else _with_deadlines(httpx.HTTPTransport())
    transport = BoundedTransport(inner, deadline_s=deadline_s, max_bytes=max_bytes)
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
