"""The client's requests against a real keyjard, and one client shared by many threads."""

from __future__ import annotations

import threading
import time
import unittest
import uuid
from typing import Dict, List

from . import live


def domain() -> str:
    return f"c{uuid.uuid4().hex[:10]}.example"


class LiveClientTests(unittest.TestCase):
    def setUp(self) -> None:
        self.keyjard = live.require()
        self.client = self.keyjard.client()
        self.addCleanup(self.client.close)

    def test_status_and_policy(self) -> None:
        status = self.client.status()
        self.assertEqual(status["protocolVersion"], 4)
        self.assertIsInstance(status["pid"], int)
        self.assertTrue(self.client.server_version)
        policy = self.client.policy()
        self.assertIn(policy["acceptPolicy"], ("always", "never", "onlyFromMainDocumentDomain", "exceptThirdParty"))

    def test_cookie_requests(self) -> None:
        name = domain()
        self.addCleanup(self.client.clear_cookies, name)
        url = f"https://www.{name}/app/page"
        outcomes = self.client.set_cookies(
            url,
            ["a=1; Path=/app", f"b=2; Domain={name}; Path=/; Secure; SameSite=Lax", "c=3; HttpOnly; Path=/app"],
        )
        self.assertEqual(outcomes, [None, None, None])
        self.assertEqual(self.client.cookie_header(url), "a=1; c=3; b=2")  # longer paths first
        self.assertEqual(self.client.cookie_header(url, non_http=True), "a=1; b=2")
        self.assertEqual(self.client.cookie_header(f"http://www.{name}/app/"), "a=1; c=3")  # b is Secure
        # A cross-site subresource: the Lax cookie stays home.
        cross = self.client.cookie_header(url, main_document_url="https://elsewhere.example/", top_level=False)
        self.assertNotIn("b=2", cross or "")
        self.assertEqual({c["name"] for c in self.client.cookies(url)}, {"a", "b", "c"})
        listed = self.client.list_cookies(name)
        self.assertEqual([(c["name"], c["domain"], c["hostOnly"]) for c in listed], [("b", name, False), ("a", f"www.{name}", True), ("c", f"www.{name}", True)])
        self.client.delete_cookies([c for c in listed if c["name"] == "a"])
        self.assertEqual(self.client.cookie_header(url), "c=3; b=2")
        now = time.time()
        inserted = dict(listed[0], name="d", value="4", creation=now, lastAccess=now)
        self.assertEqual(self.client.insert_cookies([inserted]), [None])
        self.assertIn("d=4", self.client.cookie_header(url))
        self.client.clear_cookies(name)
        self.assertEqual(self.client.list_cookies(name), [])
        self.assertIsNone(self.client.cookie_header(url))

    def test_one_client_many_threads(self) -> None:
        names = [domain() for _ in range(8)]
        for index, name in enumerate(names):
            self.addCleanup(self.client.clear_cookies, name)
            self.assertEqual(self.client.set_cookies(f"https://{name}/", [f"t{index}={index}"]), [None])
        seen: Dict[int, List[str]] = {index: [] for index in range(len(names))}
        failures: List[BaseException] = []

        def ask(index: int) -> None:
            try:
                for _ in range(25):
                    seen[index].append(self.client.cookie_header(f"https://{names[index]}/"))
            except BaseException as error:
                failures.append(error)

        threads = [threading.Thread(target=ask, args=(index,)) for index in range(len(names))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual(failures, [])
        for index, headers in seen.items():
            self.assertEqual(headers, [f"t{index}={index}"] * 25)  # each its own answer


if __name__ == "__main__":
    unittest.main()
