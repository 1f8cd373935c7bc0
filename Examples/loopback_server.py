"""The examples' loopback HTTP server (scripts/examples): prints "ready PORT", then serves
/ (a page that sets a cookie) and /report.txt (a download with a name and a validator)."""
import http.server
import sys

REPORT = b"quarterly report\n" * 64


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/report.txt":
            self.reply(REPORT, [("Content-Type", "text/plain"), ("ETag", '"r1"'),
                                ("Content-Disposition", 'attachment; filename="report.txt"')])
        else:
            self.reply(b"<p>hello</p>\n", [("Content-Type", "text/html"), ("Set-Cookie", "visit=1; Path=/"),
                                           ("Cache-Control", "max-age=60")])

    def reply(self, body, headers):
        self.send_response(200)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("ready", server.server_address[1], flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
