"""Scale benchmarks: local worker processes, Dask workers, Beam's own cost, memory and balance.

    python bench/corpus.py && python bench/scale.py --also-50mb  # about 20 minutes on 2 cores
    python bench/scale.py --only dask                            # one section: mp, dask, loop, rss
    python bench/scale.py --quick                                # smoke test: 2 MB, 1 repetition

What it measures (the job is ``--strategy sentence`` unless said otherwise):

1. ``--direct_running_mode multi_processing --direct_num_workers 2`` vs ``1`` (FnApiRunner
   with local worker processes) on the 20 MB corpus (``bench/corpus/docs``).
2. Beam's DaskRunner on a ``dask.distributed.LocalCluster`` of 2 worker processes vs 1
   (``threads_per_worker=1``), same job. Every timed run gets a fresh cluster, warmed up by
   one untimed run on a 2 MB corpus (imports, tokenizer), and closed right after, so that no
   idle cluster (its scheduler and nannies run inside this process) shares a timed run.
3. The pipeline on the default in-process FnApiRunner vs the plain loop of
   ``bench/run.py``'s ``pipeline_group`` (called as is: recursive 512/50, read, parse, chunk,
   token counts, Parquet).
4. Peak RSS of each worker process on a 50 MB and a 500 MB corpus (built under /tmp),
   sampled with psutil every 50 ms, for multi_processing with 2 workers and for a fresh
   2-worker Dask cluster per run.
5. Documents, bytes and chunks handled by each worker process, and when each worker chunked
   its first and last document, from untimed runs whose strategy stamps ``os.getpid()`` on
   every chunk (:class:`PidSentenceChunker`, imported by the workers as ``bench.scale``).

Timings are ``RunSummary.seconds`` of :func:`beam_chunking.pipelines.run.run` (what the CLI
prints: building the pipeline, ``run()``, waiting, closing the Dask client). The compared
implementations are interleaved (A, B, A, B, ...); tables give the best run and the min-max
spread. The cores may be shared: before each timed run the script waits (up to 60 s, 8 minutes
in all) until other processes are quiet, and it reports the CPU seconds they used during each
run (system busy time minus this process tree's).
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from beam_chunking.strategies import SentenceChunker  # noqa: E402
from beam_chunking.types import Chunk, ParsedDocument  # noqa: E402


@dataclass(frozen=True)
class PidSentenceChunker(SentenceChunker):
    """Sentence chunking that stamps the worker's pid and the chunking time on every chunk.

    Used only in the untimed distribution runs. Workers unpickle it by reference, so this
    module must be importable there as ``bench.scale`` (``main`` puts the repository root on
    ``PYTHONPATH``).
    """

    name = "pid_sentence"

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        started = time.time()
        chunks = super().chunk_document(doc)
        meta = {"worker_pid": os.getpid(), "chunk_started": started, "chunk_finished": time.time()}
        return [dataclasses.replace(c, metadata={**c.metadata, **meta}) for c in chunks]


# ---------------------------------------------------------------------------------------------
# corpora


def corpus_bytes(docs: str) -> int:
    return sum(e.stat().st_size for e in os.scandir(docs)) if os.path.isdir(docs) else 0


def ensure_corpus(root: str, target_bytes: int) -> str:
    """``root/docs`` built by ``bench/corpus.py`` with ``target_bytes``; reused when it matches."""
    import importlib

    corpus = importlib.import_module("bench.corpus")
    docs = os.path.join(root, "docs")
    have = corpus_bytes(docs)
    if not (target_bytes <= have < target_bytes + corpus.MAX_DOC_BYTES):
        shutil.rmtree(docs, ignore_errors=True)
        saved = corpus.OUT
        corpus.OUT = root
        try:
            corpus.main(target_bytes)
        finally:
            corpus.OUT = saved
    return docs


# ---------------------------------------------------------------------------------------------
# runs


def timed_job(docs: str, out: str, extra: List[str], strategy: str = "sentence"):
    """One run of the CLI's job; returns its RunSummary (``.seconds`` is the wall time)."""
    from beam_chunking.pipelines.run import run

    return run(["--input", f"{docs}/*", "--output", out, "--overwrite", "--max-deletions", "100%", "--strategy", strategy] + extra)


def mp_args(n: int) -> List[str]:
    return ["--direct_running_mode", "multi_processing", "--direct_num_workers", str(n)]


def dask_args(address: str) -> List[str]:
    return ["--runner", "DaskRunner", "--dask_client_address", address]


def start_cluster(n: int):
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    quiet_logs()
    return cluster


def quiet_logs() -> None:
    """Scheduler and nanny run in this process; their INFO lines would drown the tables."""
    for name in list(logging.root.manager.loggerDict):
        if name.split(".")[0] in ("distributed", "apache_beam", "tornado", "asyncio"):
            logging.getLogger(name).setLevel(logging.ERROR)


def dask_worker_pids(cluster) -> List[int]:
    return sorted(nanny.process.pid for nanny in cluster.workers.values())


class Timed:
    """A run's summary plus the CPU seconds other processes used on the machine meanwhile."""

    def __init__(self, summary, foreign: float):
        self.summary, self.foreign = summary, foreign

    def __getattr__(self, name):
        return getattr(self.summary, name)


#: Seconds left for waiting until the machine is quiet before timed runs (whole benchmark).
QUIET_BUDGET = [480.0]


def wait_quiet(threshold: float = 0.1, longest: float = 60.0) -> float:
    """Wait (at most ``longest`` s, and within :data:`QUIET_BUDGET`) until other processes
    use under ``threshold`` of a core over one second; return the seconds waited."""
    waited = 0.0
    while waited < longest and QUIET_BUDGET[0] > 0:
        probe = ForeignCpu()
        time.sleep(1.0)
        if probe.foreign() < threshold:
            break
        waited += 1.0
        QUIET_BUDGET[0] -= 1.0
    return waited


def interleaved(configs: Dict[str, callable], reps: int) -> Dict[str, list]:
    """Run each config once per repetition, in turn; return config -> list of :class:`Timed`."""
    results: Dict[str, list] = {name: [] for name in configs}
    for rep in range(reps):
        for name, fn in configs.items():
            waited = wait_quiet()
            probe = ForeignCpu()
            summary = fn()
            results[name].append(Timed(summary, probe.foreign()))
            note = f", waited {waited:.0f} s for a quiet machine" if waited else ""
            print(f"  rep {rep + 1}/{reps} {name}: {summary.seconds:.2f} s "
                  f"(other processes: {results[name][-1].foreign:.1f} CPU-s{note})", flush=True)
    return results


def check_same(results: Dict[str, list]) -> None:
    seen = {(s.documents, s.ok, s.empty, s.failed, s.chunks, s.bytes) for runs in results.values() for s in runs}
    if len(seen) != 1:
        which = {name: [(s.failed, s.chunks) for s in runs] for name, runs in results.items()}
        raise RuntimeError(f"runs disagree on documents/chunks: {seen}; (failed, chunks) per run: {which}")


def report_failures(output: str, label: str) -> None:
    """Print why a run's documents failed (a timed run should have none: the same corpus)."""
    from beam_chunking.pipelines.inspection import inspect_output

    for group in inspect_output(output).failure_groups:
        print(f"  {label}: {group.count} x {group.stage} {group.error_type}: {group.example_message[:300]} "
              f"(e.g. {group.example_uri})", flush=True)


def spread(values: List[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


class ForeignCpu:
    """CPU seconds the machine spent outside this benchmark's processes since ``start()``
    (other users of the shared cores): system busy time minus this process tree's."""

    def __init__(self):
        import psutil

        self.psutil = psutil
        self.start()

    def _mine(self) -> float:
        t = os.times()
        total = t.user + t.system + t.children_user + t.children_system
        for child in self.psutil.Process().children(recursive=True):
            try:
                c = child.cpu_times()
                total += c.user + c.system
            except self.psutil.Error:
                pass
        return total

    def _busy(self) -> float:
        c = self.psutil.cpu_times()
        return sum(c) - c.idle - getattr(c, "iowait", 0.0)

    def start(self) -> None:
        self.busy0, self.mine0, self.wall0 = self._busy(), self._mine(), time.perf_counter()

    def foreign(self) -> float:
        return max(0.0, (self._busy() - self.busy0) - (self._mine() - self.mine0))

    def report(self, label: str) -> str:
        foreign = self.foreign()
        wall = time.perf_counter() - self.wall0
        line = f"{label}: {wall:.0f} s wall, {foreign:.1f} CPU-s used by other processes on the machine"
        print("  " + line, flush=True)
        self.start()
        return line


# ---------------------------------------------------------------------------------------------
# memory


class RssSampler(threading.Thread):
    """Samples the RSS and CPU time of a process and every descendant every ``interval``
    seconds: this process, or ``root`` (a pid) when given."""

    def __init__(self, interval: float = 0.05, root: Optional[int] = None):
        super().__init__(daemon=True)
        import psutil

        self.psutil = psutil
        self.interval = interval
        self.me = psutil.Process(root)
        self.peak: Dict[int, int] = defaultdict(int)
        self.cpu: Dict[int, float] = {}  # last seen user + system CPU seconds, per process
        #: Per process, ``(seconds since the sampler was made, CPU seconds)`` at each sample.
        self.trace: Dict[int, List[Tuple[float, float]]] = defaultdict(list)
        self.cmdline: Dict[int, str] = {}
        self.samples = 0
        self._t0 = time.perf_counter()
        self.start_rss = self.me.memory_info().rss
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval)
        self.sample()

    def sample(self) -> None:
        procs = [self.me]
        try:
            procs += self.me.children(recursive=True)
        except self.psutil.Error:
            pass
        now = time.perf_counter() - self._t0
        for p in procs:
            try:
                rss = p.memory_info().rss
                times = p.cpu_times()
                self.cpu[p.pid] = times.user + times.system
                self.trace[p.pid].append((now, self.cpu[p.pid]))
                if p.pid not in self.cmdline:
                    self.cmdline[p.pid] = p.name() + " " + " ".join(p.cmdline())
            except self.psutil.Error:
                continue
            self.peak[p.pid] = max(self.peak[p.pid], rss)
        self.samples += 1

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def cpu_seconds(self, start: Dict[int, float]) -> float:
        """CPU seconds used by this process and its descendants since ``start`` (a copy of
        :attr:`cpu` taken then); a process that exits between samples loses at most one
        interval."""
        return sum(cpu - start.get(pid, 0.0) for pid, cpu in self.cpu.items())

    def beam_workers(self) -> Dict[int, int]:
        """Peak RSS of the Python SDK worker processes (not the ``/bin/sh`` that starts them)."""
        return {pid: rss for pid, rss in self.peak.items()
                if "sdk_worker_main" in self.cmdline.get(pid, "") and self.cmdline[pid].startswith("python")}


def rss_run(mode: str, docs: str, out: str) -> dict:
    """One sampled run with 2 workers; mode is ``multi_processing`` or ``dask``."""
    cluster = start_cluster(2) if mode == "dask" else None
    sampler = RssSampler()
    sampler.start()
    try:
        summary = timed_job(docs, out, dask_args(cluster.scheduler_address) if cluster else mp_args(2))
        workers_pids = dask_worker_pids(cluster) if cluster else None
    finally:
        sampler.stop()
        if cluster is not None:
            cluster.close()
    if workers_pids is None:
        workers = sampler.beam_workers()
    else:
        workers = {pid: sampler.peak.get(pid, 0) for pid in workers_pids}
    return {"summary": summary, "workers": sorted(workers.values(), reverse=True),
            "main": sampler.peak[os.getpid()], "main_start": sampler.start_rss, "samples": sampler.samples}


# ---------------------------------------------------------------------------------------------
# distribution


def stamped_run(runner_args: List[str], docs: str, out: str) -> dict:
    """Read | Parse | Chunk(PidSentenceChunker) | Write on a runner; per-worker counts and times."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from beam_chunking.pipelines.run import release, resolve_runner
    from beam_chunking.schema import decode_metadata
    from beam_chunking.transforms import ChunkDocuments, ParseDocuments, ReadDocuments, WriteChunkTable
    from beam_chunking.transforms.manifest import read_table
    # By module name, so that the class pickles by reference, not as part of __main__.
    from bench.scale import PidSentenceChunker as Stamper

    options = PipelineOptions(runner_args)
    resolve_runner(options)
    p = beam.Pipeline(options=options)
    (p | ReadDocuments(f"{docs}/*") | ParseDocuments() | ChunkDocuments(Stamper())
     | WriteChunkTable(out, overwrite=True))
    started = time.time()
    result = p.run()
    try:
        result.wait_until_finish()
    finally:
        release(result)
    finished = time.time()
    sizes = {r["document_id"]: (r["size_bytes"] or 0, r["status"])
             for r in read_table(out, "documents", ["document_id", "size_bytes", "status"]).to_pylist()}
    per_doc: Dict[str, tuple] = {}
    chunks_per_pid: Dict[int, int] = defaultdict(int)
    for row in read_table(out, "chunks", ["document_id", "metadata"]).to_pylist():
        m = decode_metadata(row["metadata"])
        per_doc[row["document_id"]] = (m["worker_pid"], m["chunk_started"], m["chunk_finished"])
        chunks_per_pid[m["worker_pid"]] += 1
    workers = defaultdict(lambda: {"documents": 0, "bytes": 0, "first": None, "last": None, "busy": 0.0})
    for doc_id, (pid, t0, t1) in per_doc.items():
        w = workers[pid]
        w["documents"] += 1
        w["bytes"] += sizes[doc_id][0]
        w["first"] = t0 if w["first"] is None else min(w["first"], t0)
        w["last"] = t1 if w["last"] is None else max(w["last"], t1)
        w["busy"] += t1 - t0
    for pid, w in workers.items():
        w["chunks"] = chunks_per_pid[pid]
        w["first"] -= started
        w["last"] -= started
    no_chunks = [d for d in sizes if d not in per_doc]
    return {"workers": dict(workers), "seconds": finished - started, "documents": len(sizes),
            "unattributed": len(no_chunks), "unattributed_bytes": sum(sizes[d][0] for d in no_chunks)}


# ---------------------------------------------------------------------------------------------
# output


def table(title: str, headers: List[str], rows: List[list]) -> str:
    lines = [f"\n#### {title}\n", "| " + " | ".join(headers) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    text = "\n".join(lines)
    print(text, flush=True)
    return text


def speedup_rows(results: Dict[str, list], ref: str, mb: float) -> List[list]:
    best_ref = min(s.seconds for s in results[ref])
    rows = []
    for name, runs in results.items():
        secs = [s.seconds for s in runs]
        best = min(secs)
        best_run = runs[secs.index(best)]
        ratio_spread = f"{best_ref / max(secs):.2f}-{best_ref / best:.2f}" if name != ref else ""
        loaded = sum(1 for r in runs if r.foreign > 0.5)
        rows.append([name, f"{best:.2f}", spread(secs), f"{mb / best:.2f}", f"{best_ref / best:.2f}x", ratio_spread,
                     f"{best_run.foreign:.1f}", f"{loaded}/{len(runs)}"])
    return rows


SPEED_HEADERS = ["configuration", "best s", "spread s (min-max)", "MB/s (best)", "speed-up vs first row",
                 "speed-up of each run vs best first-row run", "other CPU-s in best run",
                 "runs with other load > 0.5 CPU-s"]


def mb(rss: int) -> str:
    return f"{rss / 2**20:.0f}"


class Measured:
    """A run's summary, the CPU seconds of every process it used, and each worker's peak RSS."""

    def __init__(self, summary, cpu: float, peaks: List[int]):
        self.summary, self.cpu, self.peaks = summary, cpu, peaks

    def __getattr__(self, name):
        return getattr(self.summary, name)


def measured_run(runner: str, n: int, docs: str, out: str, warm_docs: str) -> Measured:
    """One timed run on ``runner`` (``in-process``, ``multi_processing`` or ``dask``) with
    ``n`` workers, sampled for CPU and memory. A Dask cluster is fresh, warmed up first by an
    untimed run on ``warm_docs`` (imports, tokenizer), and closed after."""
    cluster = start_cluster(n) if runner == "dask" else None
    try:
        if cluster is not None:
            timed_job(warm_docs, out, dask_args(cluster.scheduler_address))
        extra = dask_args(cluster.scheduler_address) if cluster is not None else mp_args(n) if (
            runner == "multi_processing") else []
        sampler = RssSampler()
        sampler.sample()
        start = dict(sampler.cpu)
        sampler.start()
        try:
            summary = timed_job(docs, out, extra)
        finally:
            sampler.stop()
        if summary.failed:
            report_failures(out, f"{runner}, {n} worker(s)")
        if runner == "dask":
            peaks = [sampler.peak.get(pid, 0) for pid in dask_worker_pids(cluster)]
        elif runner == "multi_processing":
            peaks = list(sampler.beam_workers().values())
        else:
            peaks = [sampler.peak[sampler.me.pid]]
        return Measured(summary, sampler.cpu_seconds(start), sorted(peaks, reverse=True))
    finally:
        if cluster is not None:
            cluster.close()


#: The scaling table's configurations: label, runner, workers.
SCALING = [("in-process (FnApiRunner)", "in-process", 1), ("local processes, 1 worker", "multi_processing", 1),
           ("local processes, 2 workers", "multi_processing", 2), ("Dask, 1 worker", "dask", 1),
           ("Dask, 2 workers", "dask", 2)]


def scaling_section(corpora: List[tuple], reps: int, out: str, warm_docs: str) -> str:
    """The scaling table: every configuration of :data:`SCALING` on each corpus, interleaved."""
    rows, peaks_by = [], defaultdict(dict)
    for docs, size in corpora:
        print(f"\nscaling, {size:.0f} MB", flush=True)
        results = interleaved({label: (lambda r=runner, n=n, d=docs: measured_run(r, n, d, out, warm_docs))
                               for label, runner, n in SCALING}, reps)
        check_same(results)
        best = {label: min(runs, key=lambda t: t.seconds) for label, runs in results.items()}
        base = best[SCALING[0][0]].seconds
        one = {"multi_processing": best[SCALING[1][0]].seconds, "dask": best[SCALING[3][0]].seconds}
        for label, runner, n in SCALING:
            b = best[label]
            peak = max(b.summary.peaks)
            peaks_by[label][size] = peak
            rows.append([f"{size:.0f} MB", label, f"{b.seconds:.1f}", spread([t.seconds for t in results[label]]),
                         f"{base / b.seconds:.2f}x",
                         f"{one[runner] / b.seconds:.2f}x" if n == 2 else "",
                         f"{b.summary.cpu:.0f}", "/".join(mb(x) for x in b.summary.peaks), mb(peak)])
    if len(corpora) == 2:
        small, large = corpora[0][1], corpora[1][1]
        for label, _, _ in SCALING:
            growth = peaks_by[label][large] / peaks_by[label][small] - 1
            rows.append([f"{large:.0f} vs {small:.0f} MB", label, "", "", "", "", "", "", f"{100 * growth:+.0f}%"])
    return table("Scaling, sentence strategy (targets: Dask 1 worker >= 0.9x in-process; 2 workers vs 1 at the "
                 "large size >= 1.8x local processes, >= 1.7x Dask; peak RSS per worker within 15% across sizes)",
                 ["corpus", "configuration", "best s", "spread s", "vs in-process", "2 workers vs 1",
                  "CPU-s, all processes", "peak RSS per worker, MiB", "largest"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 MB corpus (4 MB for the large memory run), 1 repetition")
    ap.add_argument("--reps", type=int, default=None, help="repetitions of each timed configuration (default 5)")
    ap.add_argument("--rss-reps", type=int, default=None,
                    help="repetitions of the memory runs on the large corpus (default 2; small corpus: +1)")
    ap.add_argument("--also-50mb", action="store_true",
                    help="also time 1 vs 2 workers on the 50 MB corpus (about 3 more minutes)")
    ap.add_argument("--no-wait", action="store_true",
                    help="do not wait for other processes to go quiet before each timed run (default: wait up "
                         "to 60 s per run, 8 minutes in all)")
    ap.add_argument("--only", default="mp,dask,loop,rss",
                    help="comma-separated sections to run: mp (local processes), dask, loop (pipeline vs "
                         "plain loop), rss (memory), scaling (the scaling table: 24 and 200 MB, every runner, "
                         "1 and 2 workers, wall, CPU and peak RSS per worker); default all but scaling")
    args = ap.parse_args()
    only = set(args.only.split(","))
    # Worker processes (Beam's SDK workers, Dask's spawned workers) import bench.scale.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    quiet_logs()
    from bench import run as bench_run

    reps = args.reps or (1 if args.quick else 5)
    if args.quick:
        QUIET_BUDGET[0] = 10.0
    if args.no_wait:
        QUIET_BUDGET[0] = 0.0
    rss_reps = args.rss_reps or (1 if args.quick else 2)
    if args.quick:
        root = os.path.join(tempfile.gettempdir(), "bench-scale-2mb")
        docs = ensure_corpus(os.path.join(root, "corpus"), 2_000_000)
        bench_run.HERE = root  # pipeline_group reads HERE/corpus/docs
        small = ensure_corpus(os.path.join(tempfile.gettempdir(), "bench-scale-2mb-rss"), 2_000_000)
        large = ensure_corpus(os.path.join(tempfile.gettempdir(), "bench-scale-4mb-rss"), 4_000_000)
        sizes = ("2 MB", "4 MB")
        warmup = small
    else:
        docs = ensure_corpus(os.path.join(HERE, "corpus"), 20_000_000)
        small = ensure_corpus(os.path.join(tempfile.gettempdir(), "bench-50mb"), 50_000_000)
        large = ensure_corpus(os.path.join(tempfile.gettempdir(), "bench-500mb"), 500_000_000)
        sizes = ("50 MB", "500 MB")
        warmup = ensure_corpus(os.path.join(tempfile.gettempdir(), "bench-scale-2mb-rss"), 2_000_000)
    corpus_mb = corpus_bytes(docs) / 1e6
    out = tempfile.mkdtemp(prefix="bench-scale-out-")
    began = time.perf_counter()
    print(f"corpus {docs}: {len(os.listdir(docs))} documents, {corpus_mb:.1f} MB; {reps} repetitions; "
          f"command: python bench/scale.py {' '.join(sys.argv[1:])}", flush=True)
    sections = []
    foreign = ForeignCpu()
    load_lines = []

    if "scaling" in only:
        corpora = ([(warmup, corpus_bytes(warmup) / 1e6), (large, corpus_bytes(large) / 1e6)] if args.quick else
                   [(ensure_corpus(os.path.join(tempfile.gettempdir(), f"bench-{n}mb"), n * 1_000_000), n)
                    for n in (24, 200)])
        warm = ensure_corpus(os.path.join(tempfile.gettempdir(), "bench-scale-2mb-rss"), 2_000_000)
        sections.append(scaling_section(corpora, args.reps or (1 if args.quick else 2), out, warm))
        load_lines.append(foreign.report("scaling runs"))

    # 1 and 2: one worker process vs two -----------------------------------------------------
    timed_sets = [(docs, corpus_mb)]
    if args.also_50mb and not args.quick:
        timed_sets.append((small, corpus_bytes(small) / 1e6))
    stamped: Dict[str, tuple] = {}
    if "mp" in only:
        print("\nmulti_processing 1 vs 2 workers", flush=True)
        for corpus, size in timed_sets:
            mp = interleaved({
                "multi_processing, 1 worker": lambda c=corpus: timed_job(c, out, mp_args(1)),
                "multi_processing, 2 workers": lambda c=corpus: timed_job(c, out, mp_args(2)),
            }, reps)
            check_same(mp)
            sections.append(table(f"Local processes, sentence strategy, {size:.0f} MB (target: 2 workers >= 1.6x 1)",
                                  SPEED_HEADERS, speedup_rows(mp, "multi_processing, 1 worker", size)))
        load_lines.append(foreign.report("multi_processing timed runs"))
        # Stamped (untimed) runs now, before any Dask cluster exists.
        stamped = {"multi_processing, 1 worker": (1, stamped_run(mp_args(1), docs, out)),
                   "multi_processing, 2 workers": (2, stamped_run(mp_args(2), docs, out))}

    # A fresh cluster for every run, warmed up by one untimed run on a small corpus, so that
    # no idle cluster shares the machine with a timed run.
    if "dask" in only:
        print("\nDask 1 vs 2 workers (fresh cluster per run, untimed warm-up first)", flush=True)
        warm_docs = warmup
        warmups: Dict[int, List[float]] = {1: [], 2: []}

        def dask_job(n: int, corpus: str, stamp: bool = False):
            cluster = start_cluster(n)
            try:
                warmups[n].append(timed_job(warm_docs, out, dask_args(cluster.scheduler_address)).seconds)
                summary = timed_job(corpus, out, dask_args(cluster.scheduler_address))
                if stamp:
                    stamped[f"Dask, {n} worker process{'es' if n > 1 else ''}"] = (
                        n, stamped_run(dask_args(cluster.scheduler_address), docs, out))
                return summary
            finally:
                cluster.close()

        for k, (corpus, size) in enumerate(timed_sets):
            first = {1: k == 0, 2: k == 0}

            def once(n, c=corpus):
                stamp, first[n] = first[n], False
                return dask_job(n, c, stamp)

            dk = interleaved({"Dask, 1 worker process": lambda: once(1),
                              "Dask, 2 worker processes": lambda: once(2)}, reps)
            check_same(dk)
            sections.append(table(
                f"Dask LocalCluster, threads_per_worker=1, sentence strategy, {size:.0f} MB (target: 2 >= 1.5x 1)",
                SPEED_HEADERS, speedup_rows(dk, "Dask, 1 worker process", size)))
        load_lines.append(foreign.report("Dask runs (with warm-ups and stamped runs)"))
        print(f"  untimed warm-up runs ({corpus_bytes(warm_docs) / 1e6:.0f} MB, first run on a fresh cluster): "
              f"1 worker {spread(warmups[1])} s, 2 workers {spread(warmups[2])} s", flush=True)

    # 5: distribution and timeline (untimed, pid-stamping) ----------------------------------
    rows, timeline = [], []
    for label in ("multi_processing, 1 worker", "multi_processing, 2 workers", "Dask, 1 worker process",
                  "Dask, 2 worker processes"):
        if label not in stamped:
            continue
        n, st = stamped[label]
        if len(st["workers"]) != n:
            print(f"  note: {label}: chunks came from {len(st['workers'])} processes", flush=True)
        total_docs = sum(w["documents"] for w in st["workers"].values())
        total_bytes = sum(w["bytes"] for w in st["workers"].values())
        for i, (pid, w) in enumerate(sorted(st["workers"].items(), key=lambda kv: -kv[1]["documents"])):
            if n > 1:
                rows.append([label, f"worker {i + 1} (pid {pid})", w["documents"],
                             f"{100 * w['documents'] / total_docs:.1f}%", f"{w['bytes'] / 1e6:.2f}",
                             f"{100 * w['bytes'] / total_bytes:.1f}%", w["chunks"]])
            timeline.append([label, f"worker {i + 1}", f"{w['first']:.2f}", f"{w['last']:.2f}",
                             f"{w['last'] - w['first']:.2f}", f"{w['busy']:.2f}", f"{st['seconds']:.2f}"])
        if n > 1:
            rows.append([label, "no chunks (empty documents, no pid)", st["unattributed"], "",
                         f"{st['unattributed_bytes'] / 1e6:.3f}", "", 0])
    if stamped:
        sections.append(table(f"Documents per worker process, {corpus_mb:.0f} MB, 2 workers (pid-stamped runs)",
                              ["mode", "worker", "documents", "share", "MB", "share of bytes", "chunks"], rows))
        sections.append(table(
            f"When each worker chunked, seconds after pipeline.run() ({corpus_mb:.0f} MB, pid-stamped runs)",
            ["mode", "worker", "first document", "last document", "chunking span", "in chunk_document",
             "run ends"], timeline))

    # 3: Beam vs a plain loop -----------------------------------------------------------------
    if "loop" in only:
        print("\npipeline (in-process FnApiRunner) vs plain loop (bench/run.py pipeline_group)", flush=True)
        loop, piped, pg_mb = [], [], None
        pg_foreign = []
        for rep in range(reps):
            wait_quiet()
            probe = ForeignCpu()
            rows = bench_run.pipeline_group(None)
            pg_foreign.append(probe.foreign())
            pg_docs = os.path.join(bench_run.HERE, "corpus", "docs")
            pg_mb = corpus_bytes(pg_docs) / 1e6
            loop.append(pg_mb / rows[0][1])
            piped.append(pg_mb / rows[1][1])
            if rows[0][2] != rows[1][2]:
                raise RuntimeError(f"loop and pipeline disagree on chunks: {rows[0][2]} vs {rows[1][2]}")
            print(f"  rep {rep + 1}/{reps}: loop {loop[-1]:.2f} s, pipeline {piped[-1]:.2f} s "
                  f"(other processes: {pg_foreign[-1]:.1f} CPU-s over both)", flush=True)
        load_lines.append(foreign.report("pipeline vs plain loop"))
        sections.append(table(
            f"Pipeline, 1 process, vs plain loop, recursive 512/50, {pg_mb:.0f} MB (target: >= 0.8x)",
            ["implementation", "best s", "spread s (min-max)", "MB/s (best)", "ratio (best vs best)",
             "ratio per repetition (min-max)", "other CPU-s per repetition (min-max)"],
            [["plain loop (bench/run.py pipeline_group)", f"{min(loop):.2f}", spread(loop), f"{pg_mb / min(loop):.2f}",
              "1.00x", "", ""],
             ["ChunkFiles, FnApiRunner in-process", f"{min(piped):.2f}", spread(piped), f"{pg_mb / min(piped):.2f}",
              f"{min(loop) / min(piped):.2f}x", spread([a / b for a, b in zip(loop, piped)]), spread(pg_foreign)]]))

    # 4: peak RSS per worker -------------------------------------------------------------------
    if "rss" in only:
        print("\npeak RSS per worker process (psutil, 50 ms)", flush=True)
        rss: Dict[tuple, list] = defaultdict(list)
        for rep in range(rss_reps + 1):
            for size, corpus in zip(sizes, (small, large)):
                if size == sizes[1] and rep == rss_reps:
                    continue  # one repetition fewer on the large corpus
                for mode in ("multi_processing", "dask"):
                    r = rss_run(mode, corpus, out)
                    rss[(mode, size)].append(r)
                    print(f"  {mode} {size}: {r['summary'].seconds:.1f} s, workers {[mb(x) for x in r['workers']]} MiB, "
                          f"main {mb(r['main'])} MiB, {r['samples']} samples", flush=True)
        load_lines.append(foreign.report("memory runs"))
        rows = []
        for mode in ("multi_processing", "dask"):
            peaks = {}
            for size in sizes:
                runs = rss[(mode, size)]
                worst = [max(r["workers"]) for r in runs]
                peaks[size] = max(worst)
                per_worker = "; ".join("/".join(mb(x) for x in r["workers"]) for r in runs)
                growth_main = max(r["main"] - r["main_start"] for r in runs)
                rows.append([f"{mode}, 2 workers", size, len(runs[0]["workers"]), per_worker, mb(max(worst)),
                             f"{mb(min(worst))}-{mb(max(worst))}", f"+{mb(growth_main)}",
                             f"{min(r['summary'].seconds for r in runs):.1f}"])
            growth = peaks[sizes[1]] / peaks[sizes[0]] - 1
            rows.append([f"{mode}: {sizes[1]} vs {sizes[0]}", "", "", "", f"{100 * growth:+.1f}%", "", "", ""])
        sections.append(table(
            f"Peak RSS per worker process, MiB, {sizes[0]} vs {sizes[1]} (target: within 15%)",
            ["mode", "corpus", "workers", "peak per worker, each run", "max", "spread of run max",
             "this process (runner/client): peak minus RSS at start",
             "best s"], rows))

    print("\nother load on the machine, per section:\n" + "\n".join(f"- {x}" for x in load_lines))
    shutil.rmtree(out, ignore_errors=True)
    print(f"\ntotal benchmark wall time: {(time.perf_counter() - began) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
