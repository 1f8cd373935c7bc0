"""A server that wants what it should not get, for the trust-boundary tests.

One port serves http and https (the first byte of a connection tells: 0x16 starts a TLS
handshake), so a redirect from https to http can stay on the same host and port. It prints its
port, then serves until killed. Routes:

  /login?to=URL     401 Basic realm "home" until alice:wonderland, then 302 to URL
  /redirect?to=URL  302 to URL
  /hostile          401 Basic realm "elsewhere", always
  /accept-any       200 "taken" to any Authorization, else 401 Basic realm "elsewhere"
  /seen             the Authorization and Proxy-Authorization fields every request brought, as
                    JSON ("-" where there was none), oldest first
  /bomb-redirect    302 to /plain whose gzip body decodes to 512 MiB of zeros
  /bomb-challenge   401 (Basic realm "bomb") with that body
  /plain            200 "plain"
  /controls-realm   401 whose realm holds a C1 control (CSI) and a right-to-left override
  /controls-status  a status line whose reason phrase holds escape sequences
  /named?name=N     200 "named" with Content-Disposition: attachment; filename*=UTF-8''N

Its certificate's subject holds terminal controls too (an escape sequence, CSI, an override).

As a proxy (an absolute URI, or CONNECT): a plain request is refused with 407 until it brings
Proxy-Authorization bob:proxy-secret, then redirected (302) to its `to` parameter; a CONNECT is
refused (403) after its Proxy-Authorization is recorded.
"""
import base64
import http.server
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import urllib.parse

GOOD = "Basic " + base64.b64encode(b"alice:wonderland").decode()
PROXY_GOOD = "Basic " + base64.b64encode(b"bob:proxy-secret").decode()
seen = []
bombs = []


def bomb():
    """512 MiB of zeros, gzipped (about half a megabyte), made once when first asked for."""
    if not bombs:
        import zlib
        coder = zlib.compressobj(9, zlib.DEFLATED, 31)
        zeros = b"\0" * (1 << 20)
        bombs.append(b"".join([coder.compress(zeros) for _ in range(512)] + [coder.flush()]))
    return bombs[0]

directory = tempfile.mkdtemp()
key, cert = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
subprocess.run(
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
     "-days", "2", "-utf8", "-subj", "/O=evil\x1b[2J\u009b31m\u202edrow/CN=127.0.0.1"],
    check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def record(self):
        seen.append({
            "path": self.path,
            "authorization": self.headers.get("Authorization", "-"),
            "proxyAuthorization": self.headers.get("Proxy-Authorization", "-"),
        })

    def do_CONNECT(self):
        self.record()
        self.reply(403, b"no tunnel")
        self.close_connection = True

    def do_GET(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        to = query.get("to", [""])[0]
        if url.scheme:
            self.record()
            if self.headers.get("Proxy-Authorization") != PROXY_GOOD:
                self.reply(407, b"proxy login", [("Proxy-Authenticate", 'Basic realm="proxy"')])
            else:
                self.reply(302, b"moved", [("Location", to)])
            return
        if url.path == "/seen":
            self.reply(200, json.dumps(seen).encode(), [("Content-Type", "application/json")])
            return
        self.record()
        authorization = self.headers.get("Authorization")
        if url.path == "/login":
            if authorization == GOOD:
                self.reply(302, b"moved", [("Location", to)])
            else:
                self.reply(401, b"who are you?", [("WWW-Authenticate", 'Basic realm="home"')])
        elif url.path == "/bomb-redirect":
            self.reply(302, bomb(), [("Location", "/plain"), ("Content-Encoding", "gzip")])
        elif url.path == "/bomb-challenge":
            self.reply(401, bomb(), [("WWW-Authenticate", 'Basic realm="bomb"'), ("Content-Encoding", "gzip")])
        elif url.path == "/plain":
            self.reply(200, b"plain")
        elif url.path == "/controls-realm":
            self.reply(401, b"who", [("WWW-Authenticate", 'Basic realm="ok\u009b31m\u202ekoob"'.encode().decode("latin-1"))])
        elif url.path == "/controls-status":
            self.wfile.write(b"HTTP/1.1 200 OK\x1b]0;owned\x07\x1b[2J\r\nContent-Length: 2\r\n\r\nok")
            self.close_connection = True
        elif url.path == "/named":
            name = urllib.parse.quote(query.get("name", [""])[0], safe="")
            self.reply(200, b"named", [("Content-Disposition", "attachment; filename*=UTF-8''" + name)])
        elif url.path == "/redirect":
            self.reply(302, b"moved", [("Location", to)])
        elif url.path == "/hostile":
            self.reply(401, b"give it to me", [("WWW-Authenticate", 'Basic realm="elsewhere"')])
        elif url.path == "/accept-any":
            if authorization:
                self.reply(200, b"taken")
            else:
                self.reply(401, b"give it to me", [("WWW-Authenticate", 'Basic realm="elsewhere"')])
        else:
            self.reply(404, b"no such route")

    do_POST = do_GET

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def process_request_thread(self, request, client_address):
        # In the request's own thread: a client that never writes holds up no other.
        try:
            if request.recv(1, socket.MSG_PEEK) == b"\x16":
                request = context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            self.shutdown_request(request)
            return
        super().process_request_thread(request, client_address)


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
