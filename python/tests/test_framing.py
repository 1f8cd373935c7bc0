"""The frame decoder trusts no size and fails in one way only (ProtocolError)."""

from __future__ import annotations

import json
import os
import random
import struct
import unittest

from keyjar.errors import ProtocolError
from keyjar.framing import MAX_FRAME_BYTES, FrameDecoder, decode_json, encode_frame

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


class FrameDecoderTests(unittest.TestCase):
    def test_golden_reply_split_at_every_byte(self) -> None:
        data = frame(b'{"reply":{"id":42,"response":{"cookieHeader":{"header":"sid=42"}}}}')
        for cut in range(len(data) + 1):
            decoder = FrameDecoder()
            messages = decoder.feed(data[:cut]) + decoder.feed(data[cut:])
            self.assertEqual(
                messages, [{"reply": {"id": 42, "response": {"cookieHeader": {"header": "sid=42"}}}}]
            )
            decoder.finish()

    def test_several_frames_in_one_read(self) -> None:
        decoder = FrameDecoder()
        last = frame(b'{"c":3}')
        self.assertEqual(decoder.feed(frame(b'{"a":1}') + frame(b'{"b":2}') + last[:-3]), [{"a": 1}, {"b": 2}])
        self.assertEqual(decoder.feed(last[-3:]), [{"c": 3}])

    def test_length_zero_is_refused(self) -> None:
        with self.assertRaises(ProtocolError):
            FrameDecoder().feed(b"\x00\x00\x00\x00{}")

    def test_length_over_the_limit_is_refused_before_its_payload(self) -> None:
        decoder = FrameDecoder()
        with self.assertRaises(ProtocolError):
            decoder.feed(struct.pack(">I", MAX_FRAME_BYTES + 1))
        self.assertEqual(decoder.buffered, 0)
        with self.assertRaises(ProtocolError):
            FrameDecoder().feed(b"\xff\xff\xff\xff")

    def test_a_huge_claimed_length_allocates_nothing(self) -> None:
        decoder = FrameDecoder()
        self.assertEqual(decoder.feed(struct.pack(">I", MAX_FRAME_BYTES) + b"{"), [])
        self.assertEqual(decoder.buffered, 1)

    def test_truncated_frame_at_end_of_stream(self) -> None:
        for data in (b"\x00", b"\x00\x00\x00\x05{", frame(b'{"a":1}')[:-1]):
            decoder = FrameDecoder()
            self.assertEqual(decoder.feed(data), [])
            with self.assertRaises(ProtocolError):
                decoder.finish()
        FrameDecoder().finish()  # nothing at all is a clean end

    def test_invalid_utf8(self) -> None:
        for payload in (b'{"a":"\xff"}', b'{"a":"\xc3"}', b'{"a":"\xed\xa0\x80"}'):
            with self.assertRaises(ProtocolError):
                FrameDecoder().feed(frame(payload))

    def test_duplicate_keys_are_refused_at_any_depth(self) -> None:
        for payload in (
            b'{"reply":{"id":1},"reply":{"id":2}}',
            b'{"reply":{"id":1,"response":{"ok":{}},"id":2}}',
            b'{"a":[{"x":1,"x":1}]}',
        ):
            with self.assertRaises(ProtocolError):
                decode_json(payload)

    def test_not_an_object_or_not_json(self) -> None:
        for payload in (b"[]", b"1", b'"s"', b"null", b"{", b"NaN", b'{"a":NaN}', b'{"a":Infinity}', b"\xef\xbb\xbf{}"):
            with self.assertRaises(ProtocolError, msg=payload):
                decode_json(payload)

    def test_deep_nesting_is_a_protocol_error(self) -> None:
        with self.assertRaises(ProtocolError):
            decode_json(b'{"a":' * 100000 + b"1" + b"}" * 100000)

    def test_a_broken_stream_stays_broken(self) -> None:
        decoder = FrameDecoder()
        with self.assertRaises(ProtocolError):
            decoder.feed(b"\x00\x00\x00\x00")
        with self.assertRaises(ProtocolError):
            decoder.feed(frame(b"{}"))

    def test_encode_round_trip_and_limit(self) -> None:
        message = {"id": 1, "request": {"setCookies": {"headers": ["a=é🍪"], "context": {"url": "https://x/"}}}}
        self.assertEqual(FrameDecoder().feed(encode_frame(message)), [message])
        with self.assertRaises(ProtocolError):
            encode_frame({"a": "x" * 100}, max_bytes=50)

    def test_fuzz_random_streams_raise_only_protocol_errors(self) -> None:
        generator = random.Random(20261130)
        valid = [frame(json.dumps({"reply": {"id": n, "response": {"ok": {}}}}).encode()) for n in range(4)]
        outcomes = {"messages": 0, "refused": 0, "clean": 0}
        for _ in range(3000):
            pieces = []
            for _ in range(generator.randint(1, 5)):
                kind = generator.randint(0, 6)
                if kind == 0:
                    pieces.append(generator.choice(valid))
                elif kind == 1:
                    pieces.append(bytes(generator.getrandbits(8) for _ in range(generator.randint(0, 40))))
                elif kind == 2:  # a plausible length with random bytes
                    body = bytes(generator.getrandbits(8) for _ in range(generator.randint(1, 30)))
                    pieces.append(frame(body))
                elif kind == 3:  # a mutated valid frame
                    data = bytearray(generator.choice(valid))
                    data[generator.randrange(len(data))] = generator.getrandbits(8)
                    pieces.append(bytes(data))
                elif kind == 4:  # a lying length
                    pieces.append(struct.pack(">I", generator.choice([0, 1, 2**31, 2**32 - 1, MAX_FRAME_BYTES + 1])))
                elif kind == 5:  # truncated
                    data = generator.choice(valid)
                    pieces.append(data[: generator.randrange(len(data))])
                else:
                    pieces.append(frame(b'{"x":1,"x":2}'))
            stream = b"".join(pieces)
            decoder = FrameDecoder()
            position = 0
            try:
                while position < len(stream):
                    step = generator.randint(1, 64)
                    for decoded in decoder.feed(stream[position : position + step]):
                        self.assertIsInstance(decoded, dict)
                        outcomes["messages"] += 1
                    position += step
                decoder.finish()
                outcomes["clean"] += 1
            except ProtocolError:
                outcomes["refused"] += 1
            # Anything else (IndexError, UnicodeDecodeError, RecursionError, ...) fails the test.
        # The fuzzing reached both sides: whole messages decoded, and streams refused.
        self.assertGreater(outcomes["messages"], 100)
        self.assertGreater(outcomes["refused"], 100)
        self.assertGreater(outcomes["clean"], 10)

    def test_every_golden_server_message_decodes(self) -> None:
        golden = os.path.join(REPOSITORY, "Tests", "KeyjarProtocolTests", "Golden")
        names = sorted(n for n in os.listdir(golden) if n.startswith(("response-", "server-")))
        self.assertGreater(len(names), 30)
        for name in names:
            with open(os.path.join(golden, name), "rb") as file:
                payload = file.read().strip()
            self.assertEqual(FrameDecoder().feed(frame(payload)), [json.loads(payload)], name)


if __name__ == "__main__":
    unittest.main()
