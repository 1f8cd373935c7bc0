"""The HTTP server the KeyjarLoader tests talk to, on 127.0.0.1 (an ephemeral port, printed
as "ready PORT"). Each path is one behaviour; the tests read what arrived from /echo."""
import base64, gzip, hashlib, http.server, json, os, ssl, struct, subprocess, sys, tempfile, threading, time, urllib.parse, zlib

counters = {}
# /held answers once /release was asked for; /echo?after-held=N answers once N /held arrived.
held = threading.Condition()
held_state = {"arrived": 0, "released": False}

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        path = url.path
        payload = self.body()
        key = query.get("key", path)
        if path != "/count":
            counters[key] = counters.get(key, 0) + 1
        if path == "/hello":
            self.reply(200, b"hello world", [("Content-Type", "text/plain")])
        elif path == "/echo":
            with held:
                held.wait_for(lambda: held_state["arrived"] >= int(query.get("after-held", "0")))
            data = {"method": self.command, "path": self.path, "body": payload.decode("latin-1"),
                    "headers": {k.lower(): v for k, v in self.headers.items()}, "count": counters[key],
                    "peer": self.client_address[1]}
            self.reply(200, json.dumps(data).encode(), [("Content-Type", "application/json")])
        elif path == "/redirect":
            headers = [("Location", query.get("to", "/echo"))]
            if "cookie" in query:
                headers.append(("Set-Cookie", query["cookie"]))
            self.reply(int(query.get("status", "302")), b"redirect body", headers)
        elif path == "/chain":
            n = int(query.get("n", "1"))
            self.reply(302, b"", [("Location", "/chain?n=%d" % (n - 1) if n > 1 else "/hello")])
        elif path == "/loop":
            self.reply(302, b"", [("Location", "/loop")])
        elif path == "/set-cookies":
            self.reply(200, b"ok", [("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "b=2, c=3; Path=/"),
                                    ("Set-Cookie", "d=4; Expires=Wed, 09 Jun 2100 10:18:14 GMT; Path=/")])
        elif path == "/status":
            self.reply(int(query.get("code", "200")), query.get("body", "").encode())
        elif path == "/stream":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(int(query.get("chunks", "3"))):
                chunk = ("chunk %d\n" % i).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                time.sleep(float(query.get("delay", "0.05")))
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/mixed-replace":
            self.send_response(200)
            self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
            self.send_header("Connection", "close")
            self.end_headers()
            for i in range(1, 4):
                part = b"--frame\r\nContent-Type: text/x-part%d\r\n\r\npart %d\r\n" % (i, i)
                # Split every part across writes so the parser sees boundaries cut in two.
                for start in range(0, len(part), 7):
                    self.wfile.write(part[start:start + 7])
                    self.wfile.flush()
                    time.sleep(0.01)
            self.wfile.write(b"--frame--\r\n")
            self.close_connection = True
        elif path == "/big":
            size = int(query.get("size", "1000000"))
            self.reply(200, b"x" * size)
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Length", "10")
            self.end_headers()
            self.wfile.write(b"12345")
            self.wfile.flush()
            time.sleep(float(query.get("delay", "5")))
            self.wfile.write(b"67890")
        elif path == "/garbage":
            self.wfile.write(b"SPDY/9 banana\r\nnonsense\r\n\r\n")
            self.close_connection = True
        elif path == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"only ten b")
            self.close_connection = True
        elif path == "/endless-headers":
            self.send_response(200)
            try:
                for i in range(1000000):
                    self.wfile.write(b"X-Filler-%d: %s\r\n" % (i, b"y" * 100))
            except OSError:
                pass
            self.close_connection = True
        elif path == "/gzip":
            body = gzip.compress(b"decoded by libcurl " * 50)
            self.reply(200, body, [("Content-Encoding", "gzip")])
        elif path in ("/deflate", "/br", "/zstd"):
            # Each encoding made by its reference tool: zlib, and the brotli and zstd commands.
            plain = b"decoded by libcurl " * 50
            encoding = path[1:]
            if encoding == "deflate":
                body = zlib.compress(plain)
            else:
                body = subprocess.run([{"br": "brotli", "zstd": "zstd"}[encoding], "-c"], input=plain, check=True,
                                      stdout=subprocess.PIPE).stdout
            self.reply(200, body, [("Content-Encoding", encoding)])
        elif path == "/negotiate":
            # SPNEGO with no Kerberos realm anywhere: a client can only fail to answer it.
            counters["negotiate"] = counters.get("negotiate", 0) + 1
            self.reply(401, b"no ticket", [("WWW-Authenticate", "Negotiate")])
        elif path == "/cache":
            # Cache headers from the query: cc, etag, lm (Last-Modified), expires, vary, cookie;
            # the body says which fetch this is (the counter of its key). A matching
            # If-None-Match or If-Modified-Since gets a 304 (counted as "304:KEY").
            headers = [("Date", self.date_time_string())]
            for name, field in (("cc", "Cache-Control"), ("etag", "ETag"), ("lm", "Last-Modified"),
                                ("expires", "Expires"), ("vary", "Vary"), ("cookie", "Set-Cookie")):
                if name in query:
                    headers.append((field, query[name]))
            if ("etag" in query and self.headers.get("If-None-Match") == query["etag"]) or \
               ("lm" in query and "etag" not in query and self.headers.get("If-Modified-Since") == query["lm"]):
                counters["304:" + key] = counters.get("304:" + key, 0) + 1
                self.send_response(304)
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                return
            variant = self.headers.get(query["vary"]) if "vary" in query else None
            body = ("%s #%d%s" % (query.get("body", "cached"), counters[key], " for " + variant if variant else "")).encode()
            body = body * int(query.get("repeat", "1"))
            self.reply(200, body, headers)
        elif path == "/vary-variants":
            # Vary: Accept-Language, a representation for en and one for fr (any other language
            # gets fr), its ETag "KEY-LANG", its body "LANG body #N" (N: the key's counter).
            # The If-None-Match list a request carries is counted as "inm:KEY:TAGS" (sorted,
            # comma-joined); one listing the chosen representation's tag gets a 304 naming it
            # (counted as "304:KEY:LANG"); with blind304=1, any If-None-Match gets a 304 that names
            # no representation (no ETag), as a careless server may send.
            language = "en" if self.headers.get("Accept-Language") == "en" else "fr"
            etag = '"%s-%s"' % (key, language)
            headers = [("Date", self.date_time_string()), ("Cache-Control", query.get("cc", "max-age=600")),
                       ("Vary", "Accept-Language"), ("ETag", etag), ("Content-Language", language)]
            listed = [tag.strip() for tag in (self.headers.get("If-None-Match") or "").split(",") if tag.strip()]
            if listed:
                seen = "inm:%s:%s" % (key, ",".join(sorted(listed)))
                counters[seen] = counters.get(seen, 0) + 1
            if listed and "blind304" in query:
                self.send_response(304)
                self.send_header("Date", self.date_time_string())
                self.end_headers()
                return
            if etag in listed:
                selected = "304:%s:%s" % (key, language)
                counters[selected] = counters.get(selected, 0) + 1
                self.send_response(304)
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                return
            self.reply(200, ("%s body #%d" % (language, counters[key])).encode(), headers)
        elif path == "/cacheable":
            self.reply(200, b"cache me", [("Cache-Control", "max-age=600")])
        elif path == "/cache-rules":
            # Cache rules (RFC 9111, RFC 5861): every `h=Name:value` is a header of every
            # response, every `first=Name:value` of the first response of the key only, every
            # `later=Name:value` of the later ones only; a Date of the moment it answers is
            # added unless one is given (and no other). `delay=S` pauses S seconds after
            # reading the request; `then=STATUS` answers every later request with that status,
            # `then=drop` closes the connection without an answer. A request whose
            # If-None-Match is the ETag given gets a 304 (counted as "304:KEY"). The body is
            # "rules #N".
            # send_response_only: send_response would add a Date line of its own.
            def answer(status, body=None):
                self.send_response_only(status)
                for name, value in headers:
                    self.send_header(name, value)
                if body is not None:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body:
                    self.wfile.write(body)
            items = urllib.parse.parse_qsl(url.query)
            def fields(name):
                return [tuple(value.split(":", 1)) for item, value in items if item == name]
            headers = fields("h") + (fields("first") if counters[key] == 1 else fields("later"))
            headers = [(name.strip(), value.strip()) for name, value in headers]
            if "delay" in query:
                time.sleep(float(query["delay"]))
            if not any(name.lower() == "date" for name, _ in headers):
                headers.insert(0, ("Date", self.date_time_string()))
            then = query.get("then")
            if then == "drop" and counters[key] > 1:
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if then and counters[key] > 1:
                answer(int(then), b"failed")
                return
            etag = [value for name, value in headers if name.lower() == "etag"]
            if etag and self.headers.get("If-None-Match") == etag[0]:
                counters["304:" + key] = counters.get("304:" + key, 0) + 1
                answer(304)
                return
            answer(200, ("rules #%d" % counters[key]).encode())
        elif path == "/no-store":
            self.reply(200, b"do not cache me", [("Cache-Control", "no-store")])
        elif path == "/coded":
            # "coded body " * repeat put through the codings named by ce (Content-Encoding) and
            # te (Transfer-Encoding, then framed as chunked), in order: gzip and deflate applied,
            # any other name left as it is (a coding the test says is not known); corrupt=1 sends
            # a body that is not what it claims; cc is its Cache-Control. X-Sent-Base64 is the
            # content as sent before the chunked framing (for short bodies).
            content = b"coded body " * int(query.get("repeat", "50"))
            def code(data, names):
                for name in [n.strip() for n in names.split(",") if n.strip()]:
                    if name == "gzip":
                        data = gzip.compress(data)
                    elif name == "deflate":
                        data = zlib.compress(data)
                return data
            content = code(code(content, query.get("ce", "")), query.get("te", ""))
            if "corrupt" in query:
                content = b"\x1f\x8b\x08\x00 not gzip at all"
            headers = [("Content-Encoding", query["ce"])] if "ce" in query else []
            if "cc" in query:
                headers.append(("Cache-Control", query["cc"]))
            if len(content) < 4096:
                headers.append(("X-Sent-Base64", base64.b64encode(content).decode()))
            if "te" not in query:
                return self.reply(200, content, headers)
            self.send_response(200)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Transfer-Encoding", query["te"] + ", chunked")
            self.end_headers()
            for start in range(0, len(content), 1000):
                piece = content[start:start + 1000]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/head":
            # For HEAD against a stored GET: a GET gets Cache-Control cc and ETag etag, a HEAD
            # headcc and headetag when given (else the GET's), both the same Content-Length.
            # The body says which request of its key this is (#N).
            is_head = self.command == "HEAD"
            headers = [("Date", self.date_time_string())]
            for name, field in (("cc", "Cache-Control"), ("etag", "ETag")):
                value = query.get("head" + name, query.get(name)) if is_head else query.get(name)
                if value:
                    headers.append((field, value))
            self.reply(200, b"head body #%d" % (counters[key] % 10), headers)
        elif path == "/pieces":
            # Partial content (RFC 9111 §3.3, §3.4): the representation is the text `content`
            # (default the alphabet four times, 104 bytes) with ETag `etag` (default "v1") and
            # Cache-Control `cc` (default max-age=600). A GET with one `Range: bytes=a-b` gets a
            # 206 of those bytes (Content-Range bytes a-b/N), any other GET the whole as a 200.
            # X-Count says which request of its key this is; from request `switch` of its key on,
            # the representation is another: ETag "v2", the content in upper case.
            content = query.get("content", "abcdefghijklmnopqrstuvwxyz" * 4).encode()
            etag = query.get("etag", '"v1"')
            if "switch" in query and counters[key] >= int(query["switch"]):
                content, etag = content.upper(), '"v2"'
            headers = [("ETag", etag), ("Cache-Control", query.get("cc", "max-age=600")),
                       ("X-Count", str(counters[key]))]
            asked = self.headers.get("Range", "")
            if asked.startswith("bytes=") and "," not in asked:
                first, last = asked[len("bytes="):].split("-")
                first, last = int(first), min(int(last) if last else len(content), len(content) - 1)
                headers.append(("Content-Range", "bytes %d-%d/%d" % (first, last, len(content))))
                self.reply(206, content[first:last + 1], headers)
            else:
                self.reply(200, content, headers)
        elif path.startswith("/basic/"):
            realm = query.get("realm", "keyjar-test")
            expected = "Basic " + base64.b64encode(("%s:%s" % (query.get("user", "alice"), query.get("password", "wonderland"))).encode()).decode()
            if self.headers.get("Authorization") == expected:
                self.reply(200, b"welcome " + query.get("user", "alice").encode() + (b" " + payload if "echo" in query else b""))
            else:
                counters["401:" + key] = counters.get("401:" + key, 0) + 1
                challenges = [("WWW-Authenticate", 'Basic realm="%s"' % realm)]
                if "also-digest" in query:
                    challenges.insert(0, ("WWW-Authenticate", 'Digest realm="other", nonce="abc", qop="auth", algorithm=MD5'))
                self.reply(401, b"who are you", challenges)
        elif path == "/fingerprint":
            # The SHA-256 of the certificate the TLS server presents now, by Python's hashlib.
            with open(current_certificate[0]) as pem:
                self.reply(200, hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem.read())).hexdigest().encode())
        elif path == "/switch-certificate":
            # From now on the TLS server presents another certificate (another key) for the
            # same host and port; this connection closes so that none is reused.
            # A new context: no session of the old one can be resumed either.
            current_context[0] = tls_context("2")
            current_certificate[0] = certificates + "/cert2.pem"
            self.reply(200, b"switched", [("Connection", "close")])
            self.close_connection = True
        elif path == "/held":
            with held:
                held_state["arrived"] += 1
                held.notify_all()
                held.wait_for(lambda: held_state["released"])
            self.reply(200, b"released")
        elif path == "/release":
            with held:
                held_state["released"] = True
                held.notify_all()
            self.reply(200, b"released")
        elif path == "/count":
            self.reply(200, str(counters.get(query["key"], 0)).encode())
        elif path == "/ntlm":
            self.ntlm_handshake()
        elif path.startswith("/digest-stale/"):
            self.digest_with_stale_nonce(path)
        else:
            self.reply(404, b"no such path")

    def ntlm_handshake(self):
        """NTLM's three messages on one connection: libcurl's negotiate (type 1), our
        challenge (type 2), its authenticate (type 3), whose NT response is checked against
        alice's password ("wonderland"): a wrong password is refused."""
        header = self.headers.get("Authorization", "")
        message = base64.b64decode(header[5:]) if header.startswith("NTLM ") else b""
        if message[:12] == b"NTLMSSP\0\x01\0\0\0":
            flags = 0x00000001 | 0x00000200 | 0x00800000  # Unicode, NTLM, target info
            target_info = struct.pack("<HH", 1, 8) + "KEYJAR".encode("utf-16-le")[:8] + struct.pack("<HH", 0, 0)
            challenge = (b"NTLMSSP\0" + struct.pack("<I", 2) + struct.pack("<HHI", 0, 0, 48) + struct.pack("<I", flags)
                         + NTLM_SERVER_CHALLENGE + bytes(8) + struct.pack("<HHI", len(target_info), len(target_info), 48)
                         + target_info)
            return self.reply(401, b"", [("WWW-Authenticate", "NTLM " + base64.b64encode(challenge).decode())])
        if message[:12] == b"NTLMSSP\0\x03\0\0\0":
            def field(at):
                length, _, offset = struct.unpack("<HHI", message[at:at + 8])
                return message[offset:offset + length]
            lm_response, nt_response = field(12), field(20)
            domain, user = field(28).decode("utf-16-le"), field(36).decode("utf-16-le")
            counters["ntlm-user"] = user
            if ntlm_response_matches(user, domain, "wonderland", lm_response, nt_response):
                return self.reply(200, ("ntlm welcome " + user).encode())
            counters["ntlm-wrong"] = counters.get("ntlm-wrong", 0) + 1
            return self.reply(401, b"wrong password", [("WWW-Authenticate", "NTLM")])
        counters["401:ntlm"] = counters.get("401:ntlm", 0) + 1
        self.reply(401, b"who are you", [("WWW-Authenticate", 'Basic realm="ntlm-or-basic"'), ("WWW-Authenticate", "NTLM")])

    def digest_with_stale_nonce(self, path):
        """Digest MD5, qop=auth, checked by Python's own hashlib: the first nonce is declared
        stale when used, the second is accepted."""
        realm, user, password = "stale-realm", "alice", "wonderland"
        header = self.headers.get("Authorization", "")
        params = dict((k.strip(), v.strip().strip('"')) for k, v in
                      (part.split("=", 1) for part in header[len("Digest "):].split(",") if "=" in part)) if header.startswith("Digest ") else {}
        def challenge(nonce, stale):
            value = 'Digest realm="%s", nonce="%s", qop="auth", algorithm=MD5' % (realm, nonce)
            return value + (", stale=true" if stale else "")
        if params:
            ha1 = hashlib.md5(("%s:%s:%s" % (user, realm, password)).encode()).hexdigest()
            ha2 = hashlib.md5(("%s:%s" % (self.command, params.get("uri", ""))).encode()).hexdigest()
            expected = hashlib.md5(":".join([ha1, params.get("nonce", ""), params.get("nc", ""), params.get("cnonce", ""),
                                             "auth", ha2]).encode()).hexdigest()
            if params.get("response") == expected and params.get("username") == user:
                if params.get("nonce") == "first-nonce":
                    counters["stale"] = counters.get("stale", 0) + 1
                    return self.reply(401, b"stale", [("WWW-Authenticate", challenge("second-nonce", True))])
                return self.reply(200, b"digest ok")
            counters["digest-wrong"] = counters.get("digest-wrong", 0) + 1
        self.reply(401, b"digest required", [("WWW-Authenticate", challenge("first-nonce", False))])

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = do_PATCH = handle_any


NTLM_SERVER_CHALLENGE = b"\x01\x23\x45\x67\x89\xab\xcd\xef"


def md4(data):
    """MD4 (RFC 1320), which OpenSSL 3 no longer offers by default and hashlib with it."""
    def rotate(x, n): return ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF
    message = bytearray(data) + b"\x80"
    while len(message) % 64 != 56: message += b"\0"
    message += struct.pack("<Q", len(data) * 8)
    a, b, c, d = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476
    for chunk in range(0, len(message), 64):
        x = struct.unpack("<16I", message[chunk:chunk + 64])
        aa, bb, cc, dd = a, b, c, d
        f = lambda x, y, z: (x & y) | (~x & z)
        g = lambda x, y, z: (x & y) | (x & z) | (y & z)
        h = lambda x, y, z: x ^ y ^ z
        for i in range(16):
            k = [3, 7, 11, 19][i % 4]
            a, b, c, d = d, rotate((a + f(b, c, d) + x[i]) & 0xFFFFFFFF, k), b, c
        for i in range(16):
            k = [3, 5, 9, 13][i % 4]
            index = (i % 4) * 4 + i // 4
            a, b, c, d = d, rotate((a + g(b, c, d) + x[index] + 0x5A827999) & 0xFFFFFFFF, k), b, c
        for i in range(16):
            k = [3, 9, 11, 15][i % 4]
            index = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15][i]
            a, b, c, d = d, rotate((a + h(b, c, d) + x[index] + 0x6ED9EBA1) & 0xFFFFFFFF, k), b, c
        a, b, c, d = (a + aa) & 0xFFFFFFFF, (b + bb) & 0xFFFFFFFF, (c + cc) & 0xFFFFFFFF, (d + dd) & 0xFFFFFFFF
    return struct.pack("<4I", a, b, c, d)


def des_encrypt(key7, block):
    """DES with a 56-bit key spread over 8 bytes (MS-NLMP 6, DESL). Python has no DES and
    OpenSSL 3 keeps it in its legacy provider, which the openssl tool can still load."""
    bits = int.from_bytes(key7, "big")
    key8 = bytes(((bits >> (49 - 7 * i)) & 0x7F) << 1 for i in range(8))
    return subprocess.run(["openssl", "enc", "-des-ecb", "-nopad", "-K", key8.hex(),
                           "-provider", "legacy", "-provider", "default"],
                          input=block, capture_output=True, check=True).stdout


def ntlm_response_matches(user, domain, password, lm_response, nt_response):
    """The NT response in whichever form the client chose: NTLMv2 (MS-NLMP 3.3.2, longer than
    24 bytes), NTLM2 session response (24 bytes, its client challenge in the LM field padded
    with zeros) or NTLMv1 (24 bytes, DES of the server challenge under the NT hash). Debian
    12's libcurl answers NTLMv1 even when offered target information; newer ones answer v2."""
    import hmac
    nt_hash = md4(password.encode("utf-16-le"))
    if len(nt_response) > 24:
        ntowfv2 = hmac.new(nt_hash, (user.upper() + domain).encode("utf-16-le"), "md5").digest()
        proof = hmac.new(ntowfv2, NTLM_SERVER_CHALLENGE + nt_response[16:], "md5").digest()
        return hmac.compare_digest(proof, nt_response[:16])
    if len(nt_response) != 24:
        return False
    challenge = NTLM_SERVER_CHALLENGE
    if len(lm_response) == 24 and lm_response[8:] == bytes(16):
        challenge = hashlib.md5(NTLM_SERVER_CHALLENGE + lm_response[:8]).digest()[:8]
    key = nt_hash + bytes(5)
    expected = b"".join(des_encrypt(key[i:i + 7], challenge) for i in (0, 7, 14))
    return hmac.compare_digest(expected, nt_response)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


server = Server(("127.0.0.1", 0), Handler)

# The same handler over TLS with a self-signed certificate nobody trusts.
certificates = tempfile.mkdtemp(prefix="keyjar-tls-")
for suffix in ("", "2"):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-keyout", certificates + "/key%s.pem" % suffix, "-out", certificates + "/cert%s.pem" % suffix],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
current_certificate = [certificates + "/cert.pem"]
def tls_context(suffix):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificates + "/cert%s.pem" % suffix, certificates + "/key%s.pem" % suffix)
    return context
current_context = [tls_context("")]


class TLSServer(Server):
    """Wraps each accepted connection with the current context (the handshake happens in the
    handler's thread), so that /switch-certificate takes effect on the next connection."""
    def get_request(self):
        connection, address = self.socket.accept()
        return current_context[0].wrap_socket(connection, server_side=True, do_handshake_on_connect=False), address


tls_server = TLSServer(("127.0.0.1", 0), Handler)
threading.Thread(target=tls_server.serve_forever, daemon=True).start()

print("ready %d %d" % (server.server_address[1], tls_server.server_address[1]), flush=True)
server.serve_forever()
