#!/usr/bin/env python3
"""`keyjar-bench sync`: what an idle `keyjar sync` (nothing changed on either side) costs with
N credentials, against the same sync made the way it was before sync.json recorded when each
of Keyjar's items had last changed: then every sync decrypted each entry's synced version
(one gpg per credential) to tell whether Keyjar's side had changed. The two alternate, sync
by sync, in one run; the ratio is the first over the second (lower is better).

Run by keyjar-bench (SyncBenchmark.swift), which starts keyjard and sets KEYJAR_SOCKET,
KEYJAR_NO_AUTOSTART, HOME, XDG_STATE_HOME, GNUPGHOME, PASSWORD_STORE_DIR and KEYJAR_BENCH_BIN
(the directory holding keyjar-full). KEYJAR_BENCH_SYNC_CREDENTIALS (50) and
KEYJAR_BENCH_SYNC_ROUNDS (9) change the size and the number of syncs of each kind.
"""
import json
import os
import statistics
import subprocess
import time

binary = os.path.join(os.environ["KEYJAR_BENCH_BIN"], "keyjar-full")
count = int(os.environ.get("KEYJAR_BENCH_SYNC_CREDENTIALS", "50"))
rounds = int(os.environ.get("KEYJAR_BENCH_SYNC_ROUNDS", "9"))
state = os.path.join(os.environ["XDG_STATE_HOME"], "keyjar", "sync.json")
store = os.environ["PASSWORD_STORE_DIR"]


def run(*arguments, text=None):
    subprocess.run(arguments, input=text, text=True, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


os.makedirs(os.environ["GNUPGHOME"], mode=0o700, exist_ok=True)
run("gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Bench <bench@keyjar.test>", "future-default",
    "default", "never")
run(binary, "sync", "init", store, "--key", "bench@keyjar.test")
for index in range(count):
    run(binary, "credential", "add", "--url", f"https://host{index}.example", "--user", "alice",
        "--password-stdin", text=f"password-{index}\n")
run(binary, "sync")


def timed_sync(decrypting):
    if decrypting:
        # The state as it was before it recorded Keyjar's times of change.
        with open(state) as file:
            recorded = json.load(file)
        for entry in recorded["entries"].values():
            entry.pop("modified", None)
        with open(state, "w") as file:
            json.dump(recorded, file)
    start = time.perf_counter_ns()
    run(binary, "sync")
    return time.perf_counter_ns() - start


kept, decrypting = [], []
for _ in range(rounds):
    kept.append(timed_sync(False))
    decrypting.append(timed_sync(True))
kept_median = statistics.median(kept)
decrypting_median = statistics.median(decrypting)
print(f"sync_idle_{count}_credentials_median: {kept_median / 1e6:.1f} ms")
print(f"sync_idle_{count}_credentials_decrypting_each_median: {decrypting_median / 1e6:.1f} ms")
print(f"sync_idle_ratio_over_decrypting_each: {kept_median / decrypting_median:.2f}")
