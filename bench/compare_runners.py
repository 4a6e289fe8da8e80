"""The same job on the in-process runner, two local processes and a 2-worker Dask LocalCluster;
prints each run's counts and a digest of its sorted tables, then EQUAL or DIFFERENT.

    python bench/corpus.py && python bench/compare_runners.py
    python bench/compare_runners.py --input '/usr/share/doc/**'   # any inputs instead, default strategy
"""
import argparse
import hashlib
import logging
import os
from dask.distributed import LocalCluster
from beam_chunking.pipelines.run import run
from beam_chunking import read_table
logging.getLogger("distributed").setLevel(logging.ERROR)
if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", action="append", help="patterns to read instead of the bench corpus, realdocs and "
                    "examples (with the default strategy instead of sentence)")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    REALDOCS = os.path.join(here, "..", "..", "shared", "realdocs", "**")
    inputs = ["bench/corpus/docs/*", *([REALDOCS] if os.path.isdir(os.path.dirname(REALDOCS)) else []), "examples/*"]
    job = [a for p in (args.input or inputs) for a in ("--input", p)] + (
        [] if args.input else ["--strategy", "sentence"])
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR)
    modes = {"in_process": [], "multi_processing": ["--direct_running_mode", "multi_processing", "--direct_num_workers", "2"],
             "dask": ["--runner", "DaskRunner", "--dask_client_address", cluster.scheduler_address]}
    digests = {}
    for name, extra in modes.items():
        out = f"/tmp/cmp-{name}"
        s = run(job + ["--output", out, "--overwrite", "--max-deletions", "100%", "--max-failures", "100%"] + extra)
        rows = {}
        for table, key in (("chunks", "chunk_id"), ("documents", "document_id")):
            t = read_table(out, table).drop_columns(["embedding"]) if table == "chunks" else read_table(out, table)
            r = sorted(t.to_pylist(), key=lambda x: x[key])
            rows[table] = (len(r), hashlib.sha256(repr(r).encode()).hexdigest()[:16])
        digests[name] = rows
        print(name, s.documents, s.ok, s.empty, s.failed, s.chunks, rows, f"{s.seconds:.1f}s", flush=True)
    print("EQUAL" if len({repr(v) for v in digests.values()}) == 1 else "DIFFERENT")
    cluster.close()
    os._exit(0)  # Beam's threads can abort the interpreter's teardown
