"""What every loopback test server shares: an HTTP server on 127.0.0.1 in a thread of its own, which
stops by itself after a deadline, used as a context manager."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """Serves ``handler`` on 127.0.0.1 (a free port) from ``__enter__`` until ``stop`` or ``deadline_s``."""

    def _serve(self, handler: type[BaseHTTPRequestHandler], name: str, deadline_s: float) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=name, daemon=True)
        self._timer = threading.Timer(deadline_s, self.stop)
        self._timer.daemon = True

    @property
    def url(self) -> str:
        """The OpenAI-style base URL (``.../v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._timer.cancel()
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()
