"""A local HTTP server for the cookie tests, on an address of its own in 127.0.0.0/8, so that
each test's cookies (which ignore ports) are its own host's.

Paths: ``/set?c=<Set-Cookie>`` (repeatable) answers with those Set-Cookie headers;
``/redirect?to=<path>&c=...`` answers 302 to ``to`` with them; anything else answers 200. Every
request's path and Cookie header is recorded."""

from __future__ import annotations

import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List, Optional, Tuple
from urllib.parse import parse_qs, quote, urlsplit


class _Handler(BaseHTTPRequestHandler):
    server: "CookieServer"

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        with self.server.lock:
            self.server.seen.append((parts.path, self.headers.get("Cookie")))
        redirect = parts.path == "/redirect"
        self.send_response(302 if redirect else 200)
        for value in query.get("c", []):
            self.send_header("Set-Cookie", value)
        if redirect:
            self.send_header("Location", query["to"][0])
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    do_POST = do_GET

    def log_message(self, *arguments: object) -> None:
        pass


class CookieServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        generator = random.SystemRandom()
        last_error: Optional[OSError] = None
        for _ in range(20):
            host = f"127.{generator.randint(1, 254)}.{generator.randint(0, 255)}.{generator.randint(1, 254)}"
            try:
                super().__init__((host, 0), _Handler)
                break
            except OSError as error:  # taken, or not routable here: another address
                last_error = error
        else:
            raise RuntimeError(f"no loopback address to listen on: {last_error}")
        self.host = host
        self.lock = threading.Lock()
        self.seen: List[Tuple[str, Optional[str]]] = []
        # A short poll: shutdown() waits for the loop to look at its flag.
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def url(self, path: str = "/", *cookies: str, **query: str) -> str:
        parameters = [f"c={quote(cookie)}" for cookie in cookies] + [f"{k}={quote(v)}" for k, v in query.items()]
        return f"http://{self.host}:{self.server_port}{path}" + ("?" + "&".join(parameters) if parameters else "")

    def cookie_sent_to(self, path: str) -> Optional[str]:
        """The Cookie header of the last request for ``path``."""
        with self.lock:
            matching = [cookie for seen_path, cookie in self.seen if seen_path == path]
        if not matching:
            raise AssertionError(f"no request for {path} reached the server")
        return matching[-1]

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
