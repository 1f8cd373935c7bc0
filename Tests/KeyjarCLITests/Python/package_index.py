"""A package index (PEP 503's simple API) behind Basic authentication, on a free loopback port
(its first line of output): one project, `kjdemo`, with one wheel built here.

    python3 package_index.py USER PASSWORD

Every path asks for USER and PASSWORD; /seen (no authentication) answers with a JSON list of
[path, status] for each request, so that a test can tell a refused try from a served one.
"""
import base64
import hashlib
import http.server
import io
import json
import sys
import threading
import zipfile

user, password = sys.argv[1], sys.argv[2]
expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def build_wheel():
    """The smallest wheel pip accepts: a module, METADATA, WHEEL and RECORD."""
    files = {
        "kjdemo/__init__.py": "VALUE = 'from behind Basic'\n",
        "kjdemo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: kjdemo\nVersion: 1.0\n",
        "kjdemo-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: keyjar-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + "kjdemo-1.0.dist-info/RECORD,,\n"
    files["kjdemo-1.0.dist-info/RECORD"] = record
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


wheel = build_wheel()
wheel_name = "kjdemo-1.0-py3-none-any.whl"
digest = hashlib.sha256(wheel).hexdigest()
seen = []
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/seen":
            with lock:
                self.answer(200, json.dumps(seen).encode(), "application/json")
            return
        authorized = self.headers.get("Authorization") == expected
        with lock:
            seen.append([self.path, 200 if authorized else 401])
        if not authorized:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="kjdemo index"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path in ("/simple/", "/simple"):
            self.answer(200, b'<html><body><a href="kjdemo/">kjdemo</a></body></html>', "text/html")
        elif self.path in ("/simple/kjdemo/", "/simple/kjdemo"):
            page = f'<html><body><a href="/files/{wheel_name}#sha256={digest}">{wheel_name}</a></body></html>'
            self.answer(200, page.encode(), "text/html")
        elif self.path == f"/files/{wheel_name}":
            self.answer(200, wheel, "application/octet-stream")
        else:
            self.answer(404, b"not here", "text/plain")

    def answer(self, status, data, kind):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
