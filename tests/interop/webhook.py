"""A webhook receiver for the push tests: an HTTP server on loopback that records every POST
(path, headers, JSON body) and answers as each path is told to.

- a path in `fail` answers 500 to its first `fail[path]` requests, then 200;
- a path in `redirect` answers 302 with `Location: <redirect[path]>`;
- every other path answers 200.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Hit:
    """One request the webhook received and what it answered."""

    path: str
    headers: dict[str, str]
    body: Any
    status: int


class Webhook:
    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.fail: dict[str, int] = {}
        self.redirect: dict[str, str] = {}
        self._lock = threading.Lock()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                length = int(self.headers.get('Content-Length') or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors='replace')
                status, location = hook._answer(self.path)
                with hook._lock:
                    hook.hits.append(
                        Hit(self.path, {k.lower(): v for k, v in self.headers.items()}, body, status)
                    )
                self.send_response(status)
                if location:
                    self.send_header('Location', location)
                self.send_header('Content-Length', '2')
                self.end_headers()
                self.wfile.write(b'{}')

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}'
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _answer(self, path: str) -> tuple[int, str | None]:
        with self._lock:
            if path in self.redirect:
                return 302, self.redirect[path]
            left = self.fail.get(path, 0)
            if left > 0:
                self.fail[path] = left - 1
                return 500, None
        return 200, None

    def at(self, path: str) -> list[Hit]:
        """Every request to `path`, in arrival order."""
        with self._lock:
            return [h for h in self.hits if h.path == path]

    def wait(self, path: str, done: Callable[[list[Hit]], bool], timeout: float = 20.0) -> list[Hit]:
        """The requests to `path` once `done` holds for them (or the timeout passes), then a
        short quiet period so that nothing still in flight is missed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not done(self.at(path)):
            time.sleep(0.05)
        time.sleep(0.5)
        return self.at(path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
