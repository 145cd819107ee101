"""A client of the deployment topology test (e2e/topology_test.go): the official Python SDK in
remote mode through the TLS proxy in front of three replicas, writing while the replicas are
restarted and killed. The same workload as topology-load.mjs: create a table, then until the stop
file appears insert a batch of 20 rows with ids of its own (recording which were acknowledged),
count the rows and read a filtered slice back, with the SDK's own retries only. Prints one JSON
line.

usage: python topology_load.py <https url> <ca.pem> <api key> <table> <stop file>
"""
import json
import os
import sys
import time

import lancedb
import pyarrow as pa
from lancedb.remote import ClientConfig, RetryConfig, TlsConfig

url, ca, api_key, name, stop_file = sys.argv[1:6]
BATCH = 20
db = lancedb.connect("db://lancecat", api_key=api_key, host_override=url,
                     client_config=ClientConfig(tls_config=TlsConfig(ssl_ca_cert=ca),
                                                retry_config=RetryConfig(retries=5, connect_retries=5,
                                                                         read_retries=5, backoff_factor=0.2)))
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("client", pa.utf8(), nullable=False)])
tbl = db.create_table(name, schema=schema)
out = {"acked": [], "failed": [], "errors": [], "ops": 0, "failedOps": 0, "latenciesMs": []}


def timed(fn):
    t0 = time.perf_counter()
    try:
        return fn()
    finally:
        out["latenciesMs"].append((time.perf_counter() - t0) * 1000)
        out["ops"] += 1


k = 0
while not os.path.exists(stop_file) or k < 3:
    batch = pa.table({"id": pa.array(range(k * BATCH, (k + 1) * BATCH), pa.int64()),
                      "client": pa.array(["python"] * BATCH)}, schema=schema)
    try:
        timed(lambda: tbl.add(batch))
        out["acked"].append(k)
    except Exception as e:  # noqa: BLE001 - every failure is recorded, not raised
        out["failed"].append(k)
        out["failedOps"] += 1
        out["errors"].append(f"insert {k}: {str(e)[:300]}")
    try:
        timed(lambda: tbl.count_rows())
        got = timed(lambda: tbl.search().where(f"id >= {k * BATCH}").limit(5).to_arrow())
        if k in out["acked"] and got.num_rows == 0:
            out["errors"].append(f"read {k}: an acknowledged batch is not read back")
    except Exception as e:  # noqa: BLE001
        out["failedOps"] += 1
        out["errors"].append(f"read {k}: {str(e)[:300]}")
    k += 1
print(json.dumps(out), flush=True)
os._exit(0)
