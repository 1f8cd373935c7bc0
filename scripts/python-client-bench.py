#!/usr/bin/env python3
"""keyjar-bench python: Keyjar's Python client beside the peers a Python program would use
otherwise, measured in the same run, alternated call by call:

- `keyring.get_password` through Keyjar's backend (a kept connection to keyjard, which looks
  the password up in the Secret Service) against `secretstorage`'s lookup of the very same
  Secret Service item (keyring's own SecretService backend: a search, then the secret), both
  with a connection kept, secretstorage once with a new session per lookup as keyring's backend
  opens it and once with one session kept (its fastest);
- the Cookie header of a request from `KeyjarCookieJar` (keyjard applies RFC 6265bis) against
  `http.cookiejar.CookieJar`'s own, each holding the same 1,000 cookies (100 sites of 10).

Run by keyjar-bench (KEYJAR_SOCKET: a keyjard on a private Secret Service, whose bus is
DBUS_SESSION_BUS_ADDRESS; PYTHONPATH: python/). Prints `name: value unit` lines.
"""
import http.cookiejar
import os
import statistics
import sys
import time
import urllib.request

import secretstorage
from secretstorage.util import open_session

from keyjar import Client, KeyjarCookieJar, spaces
from keyjar.keyring_backend import KeyjarKeyring

ROUNDS = int(os.environ.get("KEYJAR_BENCH_PYTHON_ROUNDS", "2000"))
SERVICE, USER, PASSWORD = "https://pypi.bench.example/simple/", "alice", "wonderland"


def fail(message):
    print(f"python-client-bench: {message}", file=sys.stderr)
    sys.exit(1)


def alternate(functions, rounds):
    """Median nanoseconds of each function, called in turn `rounds` times."""
    times = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            start = time.perf_counter_ns()
            function()
            times[name].append(time.perf_counter_ns() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def report(name, nanoseconds):
    print(f"{name}: {nanoseconds / 1000:.1f} us")


client = Client(client_name="keyjar-bench")
client.set_credential(spaces.space_for(SERVICE), USER, PASSWORD)

# The item keyjard stored (Schemas/secret-schema.md), as secretstorage finds it.
attributes = {
    "xdg:schema": "org.keyjar.Credential", "keyjar-server": "pypi.bench.example", "keyjar-port": "443",
    "keyjar-protocol": "https", "keyjar-realm": "", "keyjar-authtype": "default", "keyjar-proxytype": "none",
    "keyjar-user": USER,
}
connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection)
session = open_session(connection)


def secretstorage_new_session():
    item = next(collection.search_items(attributes))
    return item.get_secret().decode()


def secretstorage_kept_session():
    path = next(collection.search_items(attributes)).item_path
    return secretstorage.Item(connection, path, session=session).get_secret().decode()


backend = KeyjarKeyring()


def keyjar_keyring():
    return backend.get_password(SERVICE, USER)


lookups = {"keyjar_keyring_get_password": keyjar_keyring,
           "secretstorage_lookup_new_session": secretstorage_new_session,
           "secretstorage_lookup_kept_session": secretstorage_kept_session}
for name, function in lookups.items():
    if function() != PASSWORD:
        fail(f"{name} did not find the password")
medians = alternate(lookups, ROUNDS)
for name, value in medians.items():
    report(name, value)
fastest_peer = min(medians["secretstorage_lookup_new_session"], medians["secretstorage_lookup_kept_session"])
print(f"keyring_get_password_ratio_to_secretstorage: {medians['keyjar_keyring_get_password'] / fastest_peer:.2f}"
      " (target <= 2)")

# 1,000 cookies: 100 sites of 10, in keyjard and in a plain http.cookiejar.CookieJar.
plain = http.cookiejar.CookieJar()
for site in range(100):
    host = f"site{site}.bench.example"
    headers = [f"c{index}=v{site}-{index}; Path=/; Max-Age=86400" for index in range(10)]
    outcomes = client.set_cookies(f"https://{host}/", headers)
    if any(outcome is not None for outcome in outcomes):
        fail(f"keyjard refused a cookie: {outcomes}")
    for index in range(10):
        plain.set_cookie(http.cookiejar.Cookie(
            0, f"c{index}", f"v{site}-{index}", None, False, host, False, False, "/", True, False,
            int(time.time()) + 86400, False, None, None, {}))
if len(plain) != 1000:
    fail(f"the plain jar holds {len(plain)} cookies")
shared = KeyjarCookieJar(client)
url = "https://site42.bench.example/page"


def header_of(jar):
    request = urllib.request.Request(url)
    jar.add_cookie_header(request)
    return request.get_header("Cookie")


expected = sorted(f"c{index}=v42-{index}" for index in range(10))
for jar in (plain, shared):
    if sorted((header_of(jar) or "").split("; ")) != expected:
        fail(f"{type(jar).__name__} sent {header_of(jar)!r}")
headers = alternate({"keyjar_cookiejar_header": lambda: header_of(shared),
                     "http_cookiejar_header": lambda: header_of(plain)}, ROUNDS)
for name, value in headers.items():
    report(name + "_1000_cookies", value)
print(f"cookie_header_ratio_to_http_cookiejar: {headers['keyjar_cookiejar_header'] / headers['http_cookiejar_header']:.2f}"
      " (target <= 2)")
