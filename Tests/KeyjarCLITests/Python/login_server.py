"""A site with a login cookie, on a free loopback port (its first line of output).

/login?name=N sets `session=N-<random>` (HttpOnly) and answers with the value; /prefer sets
`pref=dark`; /whoami answers with the Cookie field it was sent ("-" for none).
"""
import http.server
import secrets
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        cookies = []
        if url.path == "/login":
            body = query.get("name", ["someone"])[0] + "-" + secrets.token_hex(4)
            cookies.append(f"session={body}; Path=/; HttpOnly")
        elif url.path == "/prefer":
            body = "ok"
            cookies.append("pref=dark; Path=/; Max-Age=3600")
        elif url.path == "/whoami":
            body = self.headers.get("Cookie", "-")
        else:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        for cookie in cookies:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
