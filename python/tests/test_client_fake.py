"""The client against a scripted keyjard: the wire it writes (compared with the golden
messages), the retry rule, failures mapped to typed errors, messages it must skip or refuse."""

from __future__ import annotations

import json
import os
import threading
import unittest

from keyjar import Client
from keyjar.errors import (
    ConnectionLost,
    CookieRejected,
    InvalidArgument,
    KeyjarError,
    Locked,
    LoginRequired,
    NotFound,
    Overloaded,
    ProtocolError,
    SecretsUnavailable,
    ShuttingDown,
    Unreachable,
)

from .support import ANSWER_TIMEOUT, CLOSE, FakeKeyjard, frame, message, private_directory, reply

GOLDEN = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "Tests", "KeyjarProtocolTests", "Golden"
)
SPACE = {"port": 8443, "host": "example.com", "realm": 'admin "area"', "protocol": "https", "authenticationMethod": "httpDigest", "proxyType": "none"}


def golden(name: str) -> dict:
    with open(os.path.join(GOLDEN, name + ".json"), encoding="utf-8") as file:
        return json.load(file)


def answers(responses: dict):
    """A handler answering each request name with the response (or bytes, or CLOSE) given."""

    def handle(number, request_id, name, fields):
        answer = responses[name]
        if answer is CLOSE or isinstance(answer, bytes):
            return answer
        return reply(request_id, answer)

    return handle


class FakeTestCase(unittest.TestCase):
    def serve(self, handler, **options) -> FakeKeyjard:
        server = FakeKeyjard(private_directory(self), handler, **options)
        self.addCleanup(server.close)
        return server

    def client(self, server: FakeKeyjard, timeout: float = ANSWER_TIMEOUT) -> Client:
        client = Client(server.path, timeout=timeout, client_name="keyjar-test 1.0", autostart=False)
        self.addCleanup(client.close)
        return client


class WireTests(FakeTestCase):
    def test_requests_are_the_golden_messages(self) -> None:
        server = self.serve(
            answers(
                {
                    "cookieHeader": {"cookieHeader": {"header": "sid=42; theme=dark"}},
                    "cookies": {"cookies": {"cookies": []}},
                    "setCookies": {"cookieOutcomes": {"outcomes": [None, "the Domain attribute is a public suffix"]}},
                    "deleteCookies": {"committed": {}},
                    "clearCookies": {"committed": {}},
                    "listCookies": {"cookies": {"cookies": []}},
                    "policy": golden("response-policy")["reply"]["response"],
                    "credentialChoice": golden("response-credentialChoice")["reply"]["response"],
                    "password": golden("response-password")["reply"]["response"],
                    "setCredential": {"committed": {}},
                    "removeCredential": {"committed": {}},
                    "allCredentials": {"credentials": {"records": []}},
                    "status": golden("response-status")["reply"]["response"],
                }
            )
        )
        client = self.client(server)
        self.assertEqual(client.cookie_header("https://www.example.com/a?b=c"), "sid=42; theme=dark")
        client.cookies("http://[::1]:8080/p", main_document_url="https://top.example/", top_level=False, method="POST", non_http=True)
        headers = ['a="q\\b/c"\t\u0001é🍪', "b=2; Domain=example.com; Path=/"]
        self.assertEqual(
            client.set_cookies("http://[::1]:8080/p", headers, main_document_url="https://top.example/", method="POST", top_level=False, non_http=True),
            [None, "the Domain attribute is a public suffix"],
        )
        client.delete_cookies(
            [
                {"name": "session", "domain": "www.example.co.uk", "path": "/a/b", "hostOnly": True, "value": "dropped", "secure": True},
                {"name": "", "domain": "example.com", "path": "/", "hostOnly": False},
            ]
        )
        client.clear_cookies()
        client.clear_cookies("example.org")
        client.list_cookies()
        client.list_cookies("example.com")
        self.assertEqual(client.policy(), {"acceptPolicy": "always", "domainRules": {}})
        proxy = {"port": 8080, "host": "proxy.example", "authenticationMethod": "httpBasic", "protocol": "http", "proxyType": "http"}
        candidates, preferred = client.credential_choice(proxy)
        self.assertEqual([c["user"] for c in candidates], ["alice", "bob"])
        self.assertEqual(preferred["user"], "alice")
        self.assertEqual(client.password(SPACE, "alice"), "s3cr\\t")
        client.set_credential(SPACE, "ålice", 'p"w', make_default=True)
        client.remove_credential(SPACE, "alice")
        client.all_credentials()
        self.assertEqual(client.status()["cookieCount"], 2)

        sent = [{"id": request_id, "request": {name: fields}} for _, request_id, name, fields in server.received]
        self.assertEqual(sent[0], dict(golden("request-hello-4"), id=sent[0]["id"]))
        expected = [
            "request-cookieHeader", "request-cookies", "request-setCookies", "request-deleteCookies",
            "request-clearCookies", "request-clearCookies-domain", "request-listCookies", "request-listCookies-domain",
            "request-policy", "request-credentialChoice", "request-password", "request-setCredential",
            "request-removeCredential", "request-allCredentials", "request-status",
        ]
        self.assertEqual(len(sent), len(expected) + 1)
        for name, actual in zip(expected, sent[1:]):
            with self.subTest(golden=name):
                self.assertEqual(actual, dict(golden(name), id=actual["id"]))
        ids = [entry["id"] for entry in sent]
        self.assertEqual(ids, sorted(set(ids)))  # increasing, never reused

    def test_events_and_snapshots_are_skipped(self) -> None:
        event = json.dumps(golden("server-event-cookies")).encode()
        resync = json.dumps(golden("server-resynchronise")).encode()

        def handle(number, request_id, name, fields):
            return frame(event) + frame(resync) + reply(request_id, {"policy": {"policy": {"acceptPolicy": "never", "domainRules": {}}}})

        client = self.client(self.serve(handle))
        self.assertEqual(client.policy()["acceptPolicy"], "never")

    def test_a_reply_to_another_id_is_a_protocol_error(self) -> None:
        client = self.client(self.serve(lambda n, i, name, f: reply(i + 7, {"ok": {}})))
        with self.assertRaises(ProtocolError):
            client.status()

    def test_a_reply_with_a_duplicate_key_is_a_protocol_error(self) -> None:
        def handle(number, request_id, name, fields):
            return frame(b'{"reply":{"id":%d,"response":{"policy":{"policy":{}}},"id":%d}}' % (request_id, request_id))

        with self.assertRaises(ProtocolError):
            self.client(self.serve(handle)).policy()

    def test_an_unexpected_response_is_a_protocol_error(self) -> None:
        with self.assertRaises(ProtocolError):
            self.client(self.serve(answers({"cookieHeader": {"committed": {}}}))).cookie_header("https://a.example/")

    def test_an_integral_float_id_is_an_integer(self) -> None:
        def handle(number, request_id, name, fields):
            return frame(b'{"reply":{"id":%d.0,"response":{"cookieHeader":{}}}}' % request_id)

        self.assertIsNone(self.client(self.serve(handle)).cookie_header("https://a.example/"))


class FailureTests(FakeTestCase):
    def test_codes_map_to_typed_errors_and_the_connection_stays(self) -> None:
        table = {10: InvalidArgument, 11: NotFound, 12: CookieRejected, 13: LoginRequired, 21: SecretsUnavailable, 24: Locked, 99: KeyjarError}
        for code, kind in table.items():
            with self.subTest(code=code):
                def handle(number, request_id, name, fields, code=code):
                    if name == "password":
                        return message({"failure": {"id": request_id, "error": {"code": code, "message": "refused"}}})
                    return reply(request_id, {"policy": {"policy": {"acceptPolicy": "always", "domainRules": {}}}})

                server = self.serve(handle)
                client = self.client(server)
                with self.assertRaises(kind) as caught:
                    client.password(SPACE, "alice")
                self.assertIs(type(caught.exception), kind)
                self.assertEqual(caught.exception.code, code)
                client.policy()  # the same connection goes on
                self.assertEqual(server.connections, 1)

    def test_locked_says_keyjar_unlock_and_exits_4(self) -> None:
        def handle(number, request_id, name, fields):
            return message({"failure": {"id": request_id, "error": {"code": 24, "message": "the secrets file is locked"}}})

        with self.assertRaises(Locked) as caught:
            self.client(self.serve(handle)).password(SPACE, "alice")
        self.assertIn("keyjar unlock", str(caught.exception))
        self.assertEqual(caught.exception.exit_status, 4)

    def test_a_failure_without_id_ends_the_connection(self) -> None:
        def handle(number, request_id, name, fields):
            if number == 1:
                return message({"failure": {"error": {"code": 23, "message": "keyjard is shutting down"}}})
            return reply(request_id, {"policy": {"policy": {"acceptPolicy": "always", "domainRules": {}}}})

        server = self.serve(handle)
        client = self.client(server)
        with self.assertRaises(ShuttingDown):
            client.policy()
        self.assertEqual(client.policy()["acceptPolicy"], "always")
        self.assertEqual(server.connections, 2)

    def test_overloaded_at_hello(self) -> None:
        def handle(number, request_id, name, fields):
            return message({"failure": {"error": {"code": 22, "message": "too many clients"}}})

        with self.assertRaises(Overloaded):
            self.client(self.serve(handle, answer_hello=False)).status()

    def test_a_refused_version_says_to_restart_keyjard(self) -> None:
        def handle(number, request_id, name, fields):
            return message({"failure": {"id": request_id, "error": {"code": 2, "message": "unsupported protocol version 4"}}})

        with self.assertRaises(ProtocolError) as caught:
            self.client(self.serve(handle, answer_hello=False)).status()
        self.assertEqual(caught.exception.code, 2)
        self.assertIn("restart keyjard", str(caught.exception))


class RetryTests(FakeTestCase):
    POLICY = {"policy": {"policy": {"acceptPolicy": "always", "domainRules": {}}}}

    def test_a_read_is_retried_once_only(self) -> None:
        server = self.serve(lambda n, i, name, f: reply(i, self.POLICY) if n == 1 else CLOSE)
        client = self.client(server)
        client.policy()
        server.handler = lambda n, i, name, f: CLOSE  # every connection now ends unanswered
        with self.assertRaises(ConnectionLost):
            client.policy()
        self.assertEqual(server.names(), ["hello", "policy", "policy", "hello", "policy"])

    def test_a_read_is_retried_when_the_connection_ends_before_its_reply(self) -> None:
        def handle(number, request_id, name, fields):
            return CLOSE if number == 1 else reply(request_id, {"password": {"password": "pw"}})

        server = self.serve(handle)
        client = self.client(server)
        self.assertEqual(client.password(SPACE, "alice"), "pw")
        self.assertEqual(server.names(), ["hello", "password", "hello", "password"])

    def test_a_write_is_not_repeated_when_the_connection_ends_after_sending(self) -> None:
        def handle(number, request_id, name, fields):
            return CLOSE if name == "setCredential" else reply(request_id, self.POLICY)

        server = self.serve(handle)
        client = self.client(server)
        with self.assertRaises(Unreachable) as caught:
            client.set_credential(SPACE, "alice", "secret-value")
        self.assertIn("may or may not have been applied", str(caught.exception))
        self.assertNotIn("secret-value", str(caught.exception))
        self.assertEqual(server.names().count("setCredential"), 1)
        self.assertEqual(client.policy()["acceptPolicy"], "always")  # and the next call reconnects

    def test_idle_connection_closed_by_keyjard_then_a_write_goes_once(self) -> None:
        def handle(number, request_id, name, fields):
            if name == "policy" and number == 1:
                return reply(request_id, self.POLICY) + b""  # answered; keyjard then stops
            return reply(request_id, {"committed": {}})

        server = self.serve(handle)
        client = self.client(server)
        client.policy()
        server.close()  # the listener and connection 1 go away ...
        replacement = FakeKeyjard(os.path.dirname(server.path), handle)  # ... a new keyjard comes
        self.addCleanup(replacement.close)
        client.set_credential(SPACE, "alice", "pw")
        self.assertEqual(replacement.names(), ["hello", "setCredential"])

    def test_a_timed_out_connection_is_not_reused(self) -> None:
        def handle(number, request_id, name, fields):
            if number == 1:
                return b""  # says nothing: the call times out
            return reply(request_id, self.POLICY)

        server = self.serve(handle)
        client = self.client(server, timeout=0.3)
        with self.assertRaises(Unreachable):
            client.policy()
        self.assertEqual(client.policy()["acceptPolicy"], "always")
        self.assertEqual(server.connections, 2)

    def test_a_forked_child_connects_anew(self) -> None:
        server = self.serve(lambda n, i, name, f: reply(i, self.POLICY))
        client = self.client(server)
        client.policy()
        pid = os.fork()
        if pid == 0:  # the child: its own connection, never its parent's stream
            try:
                status = 0 if client.policy()["acceptPolicy"] == "always" else 1
            except BaseException:
                status = 2
            os._exit(status)
        _, wait_status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(wait_status), 0)
        client.policy()
        policies = [(number, name) for number, _, name, _ in server.received if name == "policy"]
        self.assertEqual(sorted(policies), [(1, "policy"), (1, "policy"), (2, "policy")])


    def test_a_fork_while_another_thread_holds_the_client_leaves_the_child_free(self) -> None:
        server = self.serve(lambda n, i, name, f: reply(i, self.POLICY))
        client = self.client(server)
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with client._lock:
                held.set()
                release.wait()

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait()
        try:
            pid = os.fork()
            if pid == 0:  # the holder does not exist here: its lock must not either
                try:
                    # Free at once, or never (held by a thread the child does not have): the
                    # wait only keeps a failure from hanging the run.
                    if not client._lock.acquire(timeout=30):
                        os._exit(3)
                    client._lock.release()
                    status = 0 if client.policy()["acceptPolicy"] == "always" else 1
                except BaseException:
                    status = 2
                os._exit(status)
            _, wait_status = os.waitpid(pid, 0)
            self.assertEqual(os.waitstatus_to_exitcode(wait_status), 0)
        finally:
            release.set()
            holder.join()


if __name__ == "__main__":
    unittest.main()
