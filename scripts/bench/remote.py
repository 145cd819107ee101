"""The Python twin of remote.mjs (issue 35): lancedb (0.40.0, scripts/python/versions.txt) in remote
mode against `lancecat serve`, interleaved pair by pair with the same SDK embedded on the same table.

usage: <venv>/bin/python remote.py <url> <root> <serve-pid> <out.json>
env:   as remote.mjs (LANCECAT_BENCH_ROWS, _SECONDS, _INDEX, _CLIENTS, _FLOOR_URL)

The data are remote.mjs's batches (the same hash of the id picks the word); the vectors come from
numpy's PCG64 seeded by the batch start (the filters do not read them). Scans and queries
materialize the answer as a pyarrow Table (to_arrow).
"""

import json
import os
import shutil
import sys
import time

import lancedb
import numpy as np
import pyarrow as pa

from closedloop import closed_loop

url, root, serve_pid, out_path = sys.argv[1:5]
ROWS = int(os.environ.get("LANCECAT_BENCH_ROWS") or 200000)
BUDGET = float(os.environ.get("LANCECAT_BENCH_SECONDS") or 2)
INDEX = os.environ["LANCECAT_BENCH_INDEX"] == "1" if os.environ.get("LANCECAT_BENCH_INDEX") else ROWS >= 1000000
CLIENTS = int(os.environ.get("LANCECAT_BENCH_CLIENTS") or 16)
DIM, BATCH, TABLE = 128, 50000, "bench"
WORDS = ["lance", "catalog", "arrow", "vector", "table", "file", "page", "chunk", "row", "column", "index", "query"]


def status(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def batch(start, n):
    ids = np.arange(start, start + n, dtype=np.int64)
    x = ids.astype(np.uint32)
    h = ((x ^ (x >> np.uint32(7))) * np.uint32(0x9E3779B1)).astype(np.uint32)
    names = [f"{WORDS[v % 12]}-{v % 1000003}" for v in h.tolist()]
    vec = np.random.default_rng(start).random((n, DIM), dtype=np.float32) * 2 - 1
    return pa.table(
        {
            "id": ids,
            "name": pa.array(names, pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1)), DIM),
        }
    )


lo = min(100000, max(0, ROWS - 24000))
OPS = [
    {"name": "count", "kind": "count"},
    {"name": "count_filter", "kind": "count", "filter": "id % 3 = 0 AND name LIKE 'vector-%'"},
    {"name": "filtered_query", "kind": "query", "filter": f"id >= {lo} AND id < {lo + 24000} AND name LIKE 'index-%'", "columns": ["id", "name"]},
    {"name": "scan_id_name", "kind": "query", "columns": ["id", "name"]},
    {"name": "scan_id_vector", "kind": "query", "columns": ["id", "vector"]},
    {"name": "knn", "kind": "knn", "columns": ["id", "name"], "k": 10},
]
QV = np.array([np.sin(k * 0.37) * 0.5 for k in range(DIM)], dtype=np.float32)


def runner(tbl, op, res):
    kind = op["kind"]
    if kind == "count":
        f = op.get("filter")
        return lambda: res.__setitem__("rows", tbl.count_rows(f) if f else tbl.count_rows())
    if kind == "query":
        def q():
            b = tbl.search().select(op["columns"])
            if op.get("filter"):
                b = b.where(op["filter"])
            res["rows"] = b.limit(None).to_arrow().num_rows
        return q

    def knn():
        b = tbl.search(QV, vector_column_name="vector").distance_type("l2").select(op["columns"]).limit(op["k"])
        b = b.nprobes(20).refine_factor(10) if kind == "ann" else b.bypass_vector_index()
        t = b.to_arrow()
        res["rows"] = t.num_rows
        res["ids"] = t.column("id").to_pylist()
    return knn


def pairs(fr, fe):
    t0 = time.perf_counter()
    i = 0
    while i < 3 or time.perf_counter() - t0 < 0.3:
        fr(); fe(); i += 1
    r, e, spent = [], [], 0.0
    while len(r) < 500 and (len(r) < 5 or spent < BUDGET):
        t = time.perf_counter(); fr(); dr = time.perf_counter() - t
        t = time.perf_counter(); fe(); de = time.perf_counter() - t
        r.append(dr); e.append(de); spent += dr + de
    return {"remote": float(np.median(r)), "embedded": float(np.median(e)), "remote_best": min(r), "embedded_best": min(e), "runs": len(r)}


def remote(host=url):
    return lancedb.connect("db://lancecat", api_key="bench", host_override=host)


def write(db, tbl, b):
    """Creates TABLE in db from b (tbl None: the first batch) or adds b to tbl; returns the table and
    the seconds it took."""
    t = time.perf_counter()
    if tbl is None:
        tbl = db.create_table(TABLE, b)
    else:
        tbl.add(b)
    return tbl, time.perf_counter() - t


rdb = remote()
sdk_root = root + "-sdk"
shutil.rmtree(sdk_root, ignore_errors=True)
edb_w = lancedb.connect(sdk_root)
results = {"client": "lancedb (Python)", "sdk": lancedb.__version__, "rows": ROWS, "load": {}, "ops": {}}

tr = te = 0.0
rt = et_w = None
for start in range(0, ROWS, BATCH):
    b = batch(start, min(BATCH, ROWS - start))
    rt, d = write(rdb, rt, b)
    tr += d
    et_w, d = write(edb_w, et_w, b)
    te += d
results["ops"]["write"] = {"remote": tr, "embedded": te, "runs": 1}
results["load"]["write"] = loadavg()
results["write_hwm"] = status(serve_pid, "VmHWM")

rt = rdb.open_table(TABLE)
et = lancedb.connect(root).open_table(TABLE)
for op in OPS:
    rr, er = {}, {}
    t = pairs(runner(rt, op, rr), runner(et, op, er))
    if rr["rows"] != er["rows"]:
        sys.exit(f"{op['name']}: remote {rr['rows']} rows, embedded {er['rows']}")
    if op["kind"] == "knn" and rr["ids"] != er["ids"]:
        sys.exit(f"{op['name']}: ids differ {rr['ids']} vs {er['ids']}")
    results["ops"][op["name"]] = {**t, "rows": rr["rows"], "ids": er.get("ids")}
    results["load"][op["name"]] = loadavg()

floor = os.environ.get("LANCECAT_BENCH_FLOOR_URL")
if floor:
    ft = remote(floor).open_table(TABLE)
    ds = []
    for i in range(300):
        t = time.perf_counter(); ft.count_rows(); ds.append(time.perf_counter() - t)
    results["healthz"] = float(np.median(ds[30:]))
    results["floor"] = "count_rows through this SDK's remote client to lancebench httpfloor"

if INDEX:
    t = time.perf_counter()
    rt.create_index(metric="l2", num_partitions=256, num_sub_vectors=16, vector_column_name="vector", index_type="IVF_PQ", wait_timeout=__import__("datetime").timedelta(hours=1))
    ir = time.perf_counter() - t
    t = time.perf_counter()
    et_w.create_index(metric="l2", num_partitions=256, num_sub_vectors=16, vector_column_name="vector", index_type="IVF_PQ")
    ie = time.perf_counter() - t
    results["ops"]["ivf_pq_build"] = {"remote": ir, "embedded": ie, "runs": 1}
    results["load"]["ivf_pq_build"] = loadavg()
    truth = set(results["ops"]["knn"]["ids"])
    op = {"name": "ann", "kind": "ann", "columns": ["id", "name"], "k": 10}
    rr, er = {}, {}
    r = pairs(runner(rt, op, rr), runner(et_w, op, er))
    rec = lambda ids: len(truth & set(ids)) / len(truth)
    results["ops"]["ann"] = {**r, "recall_remote": rec(rr["ids"]), "recall_embedded": rec(er["ids"])}
    results["load"]["ann"] = loadavg()

# Concurrency: CLIENTS threads, each its own remote connection, vs CLIENTS threads on one embedded
# table (the SDK releases the GIL while Rust runs the query), the filtered query, twice interleaved.
op = OPS[2]
handles = [remote().open_table(TABLE) for _ in range(CLIENTS)]


def load(tbls):
    lat, errs = closed_loop(tbls, lambda tb: runner(tb, op, {}), BUDGET)
    for e in errs:  # a client that failed stopped; the others' figures stand
        print("remote.py: a client failed:", e, file=sys.stderr)
    return lat


for h in handles:
    runner(h, op, {})()
R, E = [], []
for _ in range(2):
    R += load(handles)
    E += load([et] * CLIENTS)
summ = lambda lat: {"qps": len(lat) / (2 * BUDGET), "p50": float(np.percentile(lat, 50)), "p99": float(np.percentile(lat, 99))}
results["concurrency"] = {"clients": CLIENTS, "remote": summ(R), "embedded": summ(E), "load": loadavg()}
results["serve_hwm"] = status(serve_pid, "VmHWM")
results["serve_rss"] = status(serve_pid, "VmRSS")
results["node_hwm"] = status("self", "VmHWM")
json.dump(results, open(out_path, "w"), indent=2)
