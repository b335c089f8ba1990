"""The API providers' HTTP client and TLS: a plain ``http://`` base URL (a server on this machine)
makes no TLS context, yet a redirect from it to an ``https://`` URL is verified exactly as an
``https://`` base URL is (the system's certificates, or ``SSL_CERT_FILE``); an ``https://`` base
URL gets its verifying context at once, as before."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpcore2
import httpx2 as httpx
import pytest

from holistic.models.http_bounds import ResponseTooLarge, bounded_client

TLS = Path(__file__).resolve().parents[1] / "fixtures" / "tls"


class _Handler(BaseHTTPRequestHandler):
    answers: ClassVar[Mapping[str, bytes]] = {}
    """Path -> body; any other path is redirected to ``elsewhere``."""
    elsewhere = ""

    def do_GET(self) -> None:
        body = self.answers.get(self.path)
        self.send_response(302 if body is None else 200)
        if body is None:
            self.send_header("Location", self.elsewhere)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args: object) -> None:
        pass


class _Plain(_Handler):
    answers: ClassVar[Mapping[str, bytes]] = {"/v1/plain": b"plain", "/v1/big": b"x" * 5000}


class _Secure(_Handler):
    answers: ClassVar[Mapping[str, bytes]] = {"/v1/secure": b"secure"}


@pytest.fixture
def servers() -> Iterator[tuple[str, str]]:
    """A plain server (its base URL) redirecting to a TLS server (its URL) whose certificate only
    ``ca.pem`` vouches for."""
    secure = ThreadingHTTPServer(("127.0.0.1", 0), _Secure)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS / "server.pem", TLS / "server-key.pem")
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    plain = ThreadingHTTPServer(("127.0.0.1", 0), _Plain)
    _Plain.elsewhere = f"https://127.0.0.1:{secure.server_port}/v1/secure"
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (plain, secure)]
    for thread in threads:
        thread.start()
    try:
        yield f"http://127.0.0.1:{plain.server_port}/v1", _Plain.elsewhere
    finally:
        for server in (plain, secure):
            server.shutdown()
            server.server_close()
        for thread in threads:
            thread.join(timeout=10)


@pytest.fixture
def contexts(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every verifying TLS context httpx makes (loading the trusted certificates), as it is made."""
    made: list[bool] = []
    real = httpcore2.default_ssl_context

    def counted(*args: object, **kwargs: bool) -> ssl.SSLContext:
        context = real(**kwargs)
        made.append(context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname)
        return context

    monkeypatch.setattr(httpcore2, "default_ssl_context", counted)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    return made


def test_a_plain_http_base_url_makes_no_tls_context_and_keeps_its_bounds(
    servers: tuple[str, str], contexts: list[bool]
) -> None:
    base, _ = servers
    with bounded_client(deadline_s=10, max_bytes=1000, base_url=base) as client:
        assert client.get(f"{base}/plain").text == "plain"
        with pytest.raises(ResponseTooLarge):
            client.get(f"{base}/big")
    assert contexts == []


def test_a_redirect_to_https_is_verified_as_an_https_base_url_is(
    servers: tuple[str, str], contexts: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, secure = servers
    with bounded_client(deadline_s=10, max_bytes=1000, base_url=base) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            client.get(f"{base}/elsewhere")  # nothing this machine trusts vouches for the server
        assert contexts == [True]  # made on that first https request, verifying
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            client.get(secure)
        assert contexts == [True]  # and made once
    monkeypatch.setenv("SSL_CERT_FILE", str(TLS / "ca.pem"))  # now trusted, as for an https base URL
    with bounded_client(deadline_s=10, max_bytes=1000, base_url=base) as client:
        answer = client.get(f"{base}/elsewhere")
        assert (answer.status_code, answer.text, str(answer.url)) == (200, "secure", secure)
    with bounded_client(deadline_s=10, max_bytes=1000, base_url=secure) as client:
        assert client.get(secure).text == "secure"


@pytest.mark.parametrize("base_url", [None, "https://api.example.invalid/v1", " HTTPS://x.invalid", 42])
def test_any_other_base_url_gets_its_verifying_context_at_once(base_url: object, contexts: list[bool]) -> None:
    bounded_client(deadline_s=10, max_bytes=1000, base_url=base_url).close()
    assert contexts == [True]
