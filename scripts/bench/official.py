"""The official server beside us (issue 35 item 5): Lance's own REST adapter (the RestAdapter of the
published pylance, lance.namespace.RestAdapter over its DirectoryNamespace "dir") and `lancecat
serve`, each on a fresh local root, the same namespace-mode workload through the same client
(pylance's RestNamespace), one run, interleaved op by op.

usage: <pylance venv>/bin/python official.py <lancecat-url> <lancecat-root> <serve-pid> <out.json>
       (the adapter serves <lancecat-root>-official)
env:   LANCECAT_BENCH_SECONDS (per operation, per server and client count; default 1)
       LANCECAT_BENCH_CLIENTS (the concurrent clients; default 16)

Operations: create_namespace, describe_namespace, list_namespaces, declare_table, describe_table,
list_tables, table_exists, create_table (100 rows as an Arrow IPC stream), count_table_rows,
insert_into_table (100 rows: one version commit each), list_table_versions. Each is timed at 1
client (median latency) and at CLIENTS concurrent clients (threads, each its own RestNamespace;
requests per second and p99); the ratio is lancecat / RestAdapter, goal <= 0.5 on latency.
"""

import io
import json
import os
import sys
import threading
import time

import numpy as np
import pyarrow as pa
from lance.namespace import RestAdapter, RestNamespace
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    DeclareTableRequest,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    InsertIntoTableRequest,
    ListNamespacesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
    TableExistsRequest,
)

from closedloop import closed_loop

lancecat_url, lancecat_root, _pid, out_path = sys.argv[1:5]
adapter_root = lancecat_root + "-official"
os.makedirs(adapter_root, exist_ok=True)
BUDGET = float(os.environ.get("LANCECAT_BENCH_SECONDS") or 1)
CLIENTS = int(os.environ.get("LANCECAT_BENCH_CLIENTS") or 16)


def ipc(n, start=0):
    t = pa.table({"id": pa.array(range(start, start + n), pa.int64()), "name": pa.array([f"n{i}" for i in range(start, start + n)])})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return sink.getvalue()


ROWS = ipc(100)
seq = iter(range(10**9))
lock = threading.Lock()


def uniq():
    with lock:
        return next(seq)


# Each op: (name, setup(ns) -> state shared by its runs, run(ns, state)).
def fixture(ns):
    """A namespace with one table of 100 rows, made once per server for the read ops."""
    k = uniq()
    ns.create_namespace(CreateNamespaceRequest(id=[f"fx{k}"]))
    ns.create_table(CreateTableRequest(id=[f"fx{k}", "t"]), ROWS)
    return [f"fx{k}"]


OPS = [
    ("create_namespace", lambda ns, fx: ns.create_namespace(CreateNamespaceRequest(id=[f"n{uniq()}"]))),
    ("describe_namespace", lambda ns, fx: ns.describe_namespace(DescribeNamespaceRequest(id=fx))),
    ("list_namespaces", lambda ns, fx: ns.list_namespaces(ListNamespacesRequest(id=[]))),
    ("declare_table", lambda ns, fx: ns.declare_table(DeclareTableRequest(id=fx + [f"d{uniq()}"]))),
    ("describe_table", lambda ns, fx: ns.describe_table(DescribeTableRequest(id=fx + ["t"]))),
    ("list_tables", lambda ns, fx: ns.list_tables(ListTablesRequest(id=fx))),
    ("table_exists", lambda ns, fx: ns.table_exists(TableExistsRequest(id=fx + ["t"]))),
    ("create_table", lambda ns, fx: ns.create_table(CreateTableRequest(id=fx + [f"c{uniq()}"]), ROWS)),
    ("count_table_rows", lambda ns, fx: ns.count_table_rows(CountTableRowsRequest(id=fx + ["t"]))),
    ("insert_into_table", lambda ns, fx: ns.insert_into_table(InsertIntoTableRequest(id=fx + ["t"]), ROWS)),
    ("list_table_versions", lambda ns, fx: ns.list_table_versions(ListTableVersionsRequest(id=fx + ["t"]))),
]


def single(ns, fx, f):
    t0 = time.perf_counter()
    i = 0
    while i < 3 or time.perf_counter() - t0 < 0.1:
        f(ns, fx); i += 1
    ds, spent = [], 0.0
    while len(ds) < 500 and (len(ds) < 5 or spent < BUDGET):
        t = time.perf_counter(); f(ns, fx); d = time.perf_counter() - t
        ds.append(d); spent += d
    return float(np.median(ds)), len(ds)


def many(nss, fx, f):
    lat, errs = closed_loop(nss, lambda ns: lambda: f(ns, fx), BUDGET)
    return {"qps": len(lat) / BUDGET, "p99": float(np.percentile(lat, 99)) if lat else None, "errors": errs[:3]}


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


with RestAdapter("dir", {"root": adapter_root}, host="127.0.0.1", port=0) as adapter:
    urls = {"lancecat": lancecat_url, "official": f"http://127.0.0.1:{adapter.port}"}
    clients = {k: RestNamespace(uri=u) for k, u in urls.items()}
    pools = {k: [RestNamespace(uri=u) for _ in range(CLIENTS)] for k, u in urls.items()}
    fxs = {k: fixture(clients[k]) for k in urls}
    res = {"adapter": "lance.namespace.RestAdapter('dir') of pylance " + __import__("lance").__version__, "clients": CLIENTS, "ops": {}}
    for name, f in OPS:
        row = {"load": load()}
        for k in ("lancecat", "official"):  # interleaved: both servers within the same second
            try:
                row[k] = {"p50": single(clients[k], fxs[k], f)[0]}
            except Exception as e:
                row[k] = {"error": repr(e)[:300]}
        for k in ("lancecat", "official"):
            if "error" not in row[k]:
                row[k].update(many(pools[k], fxs[k], f))
        res["ops"][name] = row
json.dump(res, open(out_path, "w"), indent=2)

fmt = lambda x: "—" if x is None else (f"{x * 1e3:.2f} ms" if x < 1 else f"{x:.2f} s")
print(f"\nthe official server beside us: lancecat serve vs {res['adapter']}, client pylance RestNamespace, both on local roots;"
      f" 1 client: median latency; {CLIENTS} clients: requests/s and p99; ratio lancecat/official (goal <= 0.5 on latency)")
hdr = ["operation", "lancecat", "official", "ratio", "", f"{CLIENTS}c lancecat qps/p99", f"{CLIENTS}c official qps/p99", "qps ratio", "load avg"]
rows = [hdr]
for name, r in res["ops"].items():
    a, b = r["lancecat"], r["official"]
    if "error" in a or "error" in b:
        rows.append([name, a.get("error", fmt(a.get("p50")))[:40], b.get("error", fmt(b.get("p50")))[:60], "", "", "", "", "", r["load"]])
        continue
    ratio = a["p50"] / b["p50"]
    rows.append([name, fmt(a["p50"]), fmt(b["p50"]), f"{ratio:.2f}", "met" if ratio <= 0.5 else "MISSED",
                 f"{a['qps']:.0f} / {fmt(a['p99'])}" + (" ERR" if a["errors"] else ""), f"{b['qps']:.0f} / {fmt(b['p99'])}" + (" ERR" if b["errors"] else ""),
                 f"{a['qps'] / b['qps']:.2f}" if b["qps"] else "—", r["load"]])
w = [max(len(str(x[k])) for x in rows) for k in range(len(hdr))]
for x in rows:
    print("  ".join(str(v).ljust(w[k]) for k, v in enumerate(x)).rstrip())
for name, r in res["ops"].items():
    for k in ("lancecat", "official"):
        if r[k].get("errors"):
            print(f"  {name} {k} at {CLIENTS} clients: {r[k]['errors'][0][:200]}")
