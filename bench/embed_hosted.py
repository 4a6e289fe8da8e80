"""The hosted embedder against a bare asyncio + httpx loop, on a local /v1/embeddings stub (issue 29).

    python bench/embed_hosted.py                 # about a minute; nothing leaves 127.0.0.1
    python bench/embed_hosted.py --texts 2000 --rounds 3

The stub (``tests/embeddings/server.py``) runs in its own process, answers each request after
50 ms and allows 3,000 requests a minute (a token bucket of 5; beyond it, HTTP 429), with
512-dimensional vectors as base64. Both sides send the same requests: the texts in order,
64 a request, 8 in flight, starts spaced to 3,000 a minute, and both end with the same
normalised ``float32`` matrix (checked):

- **bare loop**: ``httpx.AsyncClient`` on one event loop, an ``asyncio.Semaphore`` of 8, the
  batches cut beforehand, a 429 retried after 50 ms; vectors decoded with ``np.frombuffer``.
  Nothing a client could leave out, and no cache.
- **HostedEmbedder**: ``embed()`` with ``max_concurrency=8``, ``requests_per_minute=3000``,
  ``max_batch_size=64``, packing by tokens as well, through the official ``openai`` client
  and tenacity; one embedder (one client) for all rounds, as a worker keeps it for a job;
  once with its vector cache on (every round's texts are new, so every vector is looked up,
  missed and written, as on a first run), once with the cache off.

Every round sends new texts (the round number in front of each), the same to every client.
Then the cached re-run: the last round's texts again, by a new client over the cache the
rounds filled, counting the requests the stub received (target: 0). Rounds are interleaved (bench/interleave.py); the
ratio is the bare loop's best time over the embedder's, with the per-round range.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.interleave import Impl, ratio, run_interleaved  # noqa: E402
from beam_chunking.embeddings import HostedEmbedder  # noqa: E402

LATENCY, RPM, DIMENSION, BATCH, CONCURRENCY = 0.05, 3000, 512, 64, 8
WORDS = ("the of and to in is that for it as with was on be by this are from at or an have not which but all "
         "chunk embedding vector model server request retry cache token batch latency pipeline worker beam "
         "document section heading paragraph sentence recall index store query answer").split()


def corpus(n: int, seed: int = 29):
    """``n`` distinct chunk-like texts of 40-160 words."""
    rng = random.Random(seed)
    return [f"{k}. " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 160))) for k in range(n)]


class Stub:
    """The stub server in a child process; :meth:`requests` asks it how many it received."""

    def __init__(self):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.embeddings.server", "--latency", str(LATENCY), "--rpm", str(RPM),
             "--dimension", str(DIMENSION)], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.base_url = self.proc.stdout.readline().strip()

    def stats(self) -> dict:
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.kill()
        self.proc.wait()


def bare_loop(base_url: str, texts, model: str = "bench") -> np.ndarray:
    """The same requests as the embedder, from a plain asyncio + httpx loop."""
    import httpx

    batches = [texts[k:k + BATCH] for k in range(0, len(texts), BATCH)]
    out = [None] * len(batches)
    interval = 60.0 / RPM

    async def main():
        slots = asyncio.Semaphore(CONCURRENCY)
        clock = {"next": 0.0}
        limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
        async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:
            async def one(k, batch):
                async with slots:
                    while True:
                        now = time.monotonic()
                        start = max(now, clock["next"])
                        clock["next"] = start + interval
                        await asyncio.sleep(start - now)
                        r = await client.post("/embeddings", json={"model": model, "input": batch,
                                                                   "encoding_format": "base64"})
                        if r.status_code == 429:
                            await asyncio.sleep(LATENCY)
                            continue
                        r.raise_for_status()
                        data = sorted(r.json()["data"], key=lambda d: d["index"])
                        rows = np.stack([np.frombuffer(base64.b64decode(d["embedding"]), "<f4") for d in data])
                        out[k] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
                        return
            await asyncio.gather(*(one(k, b) for k, b in enumerate(batches)))

    asyncio.run(main())
    return np.concatenate(out).astype(np.float32)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    base = corpus(args.texts)
    stub = Stub()
    cache = tempfile.mkdtemp(prefix="embed-hosted-bench-")
    sent = {}

    def each_call(embed):
        """``embed`` given new texts on every call: the n-th call of every implementation gets
        the same n-th set, so each call is cold for the cache while all do the same work."""
        calls = iter(range(10 ** 6))

        def call():
            texts = [f"r{next(calls)} {t}" for t in base]
            sent["texts"] = texts
            return embed(texts)
        return call

    def hosted(folder):
        # One embedder (one client) for every round, as a worker process keeps it for a job.
        return HostedEmbedder(model="bench", base_url=stub.base_url, dimensions=DIMENSION, max_batch_size=BATCH,
                              max_concurrency=CONCURRENCY, requests_per_minute=RPM, cache=folder)

    impls = [Impl("bare asyncio + httpx loop", each_call(lambda texts: bare_loop(stub.base_url, texts))),
             Impl("HostedEmbedder, cache on (cold)", each_call(hosted(cache).embed)),
             Impl("HostedEmbedder, cache off", each_call(hosted(None).embed))]
    try:
        before = stub.stats()
        run_interleaved(impls, args.rounds, calibrate=False)
        ref = impls[0]
        for impl in impls[1:]:
            assert np.allclose(impl.output, ref.output, atol=1e-6), f"{impl.name}: other vectors"
        requests = -(-len(base) // BATCH)
        after = stub.stats()
        # The cached re-run: the last round's texts, by a new client (as a new process would
        # build; other calling options give it one), from the cache the rounds filled.
        again = dataclasses.replace(hosted(cache), max_retries=5)
        started = time.perf_counter()
        again_out = again.embed(sent["texts"])
        rerun_s = time.perf_counter() - started
        rerun_requests = stub.stats()["requests"] - after["requests"]
        assert np.allclose(again_out, ref.output, atol=1e-6)  # the last round's vectors
    finally:
        stub.close()
    print(f"{len(base)} texts, {requests} requests of {BATCH}, {CONCURRENCY} in flight, stub {LATENCY * 1000:.0f} ms "
          f"and {RPM} requests/minute ({after['limited'] - before['limited']} answered 429 in all); "
          f"best of {args.rounds} interleaved rounds\n")
    print("| client | best s | requests/s | CPU s | ratio to the bare loop [per-round range, median] |")
    print("|---|---:|---:|---:|---:|")
    for impl in impls:
        best = min(impl.times)
        cpu = impl.cpu[impl.times.index(best)]
        r = "reference" if impl is ref else str(ratio(impl, ref))
        print(f"| {impl.name} | {best:.3f} | {requests / best:.1f} | {cpu:.3f} | {r} |")
    print(f"| HostedEmbedder, cached re-run | {rerun_s:.3f} | {rerun_requests} requests sent | | |")
    floor = (requests - 1) * 60.0 / RPM + LATENCY
    print(f"\nThe rate limit's floor: {floor:.3f} s ({requests} starts {60000 / RPM:.0f} ms apart, plus one answer).")


if __name__ == "__main__":
    main()
