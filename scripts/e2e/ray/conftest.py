"""Shared setup of the Ray suite (run by e2e/ray_test.go through pytest, in the venv of set
ray-2.60.0 of scripts/python/versions.txt): the driver connects to the two-node cluster the Go test
started (cluster.py) and lance-ray reaches lancecat serve through the REST namespace
(namespace_impl="rest", namespace_properties={"uri": ..., "header.x-api-key": ...}), which every
Ray worker rebuilds from those properties.

Environment (set by the Go test):
  LANCECAT_URL              the catalog, http://127.0.0.1:<port>
  LANCECAT_OPS_URL          its operations listener (Prometheus /metrics: which operations it served)
  LANCECAT_RAY_ADDRESS      the cluster's GCS address
  LANCECAT_E2E_ROOT         the catalog root (a local path or s3://bucket/prefix)
  LANCECAT_E2E_VENDED=1     an S3 root whose credentials only the catalog hands out (vended, scoped
                            to the table; the driver and the cluster have none of their own)
  LANCECAT_E2E_AUTHZ=1      authorization is on; then
  LANCECAT_E2E_API_KEY      an estate admin's API key
  LANCECAT_E2E_READER_KEY   the key of a user with no grant but the reader ones the suite gives
  LANCECAT_E2E_MANAGED=1    the root has table_version_management=true: every commit is the
                            catalog's CreateTableVersion, so the catalog can refuse one
"""

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request

import pyarrow as pa
import pytest
import ray

URL = os.environ.get("LANCECAT_URL", "http://127.0.0.1:2333")
OPS_URL = os.environ.get("LANCECAT_OPS_URL", "")
ROOT = os.environ.get("LANCECAT_E2E_ROOT", "")
VENDED = os.environ.get("LANCECAT_E2E_VENDED") == "1"
AUTHZ = os.environ.get("LANCECAT_E2E_AUTHZ") == "1"
API_KEY = os.environ.get("LANCECAT_E2E_API_KEY", "")
READER_KEY = os.environ.get("LANCECAT_E2E_READER_KEY", "")
MANAGED = os.environ.get("LANCECAT_E2E_MANAGED") == "1"
if VENDED:
    # The catalog's credentials must be the only ones the driver has (the cluster's processes
    # were started without any).
    for k in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[k]

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("grp", pa.int32()),
        pa.field("name", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("node", pa.string()),
    ]
)


def row(i):
    """The model: every value is a function of the id (the node column, which node wrote the row,
    is no part of it)."""
    return {"id": i, "grp": i % 7, "name": f"n{i}", "score": i * 0.5}


def rows(ids, where=lambda r: True):
    return [r for r in (row(i) for i in ids) if where(r)]


def with_node(batch):
    """A map_batches step: the model's columns for the ids of batch, and the id of the node that
    ran the task (the write is fused into the same task, so it is the writing node)."""
    ids = batch["id"].to_pylist()
    node = ray.get_runtime_context().get_node_id()
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "grp": pa.array([i % 7 for i in ids], pa.int32()),
            "name": pa.array([f"n{i}" for i in ids], pa.string()),
            "score": pa.array([i * 0.5 for i in ids], pa.float64()),
            "node": pa.array([node] * len(ids), pa.string()),
        }
    )


def source(ids_from, ids_to, blocks):
    """A Ray dataset of the model's rows for ids_from..ids_to-1 in blocks blocks."""
    return ray.data.range(ids_to - ids_from, override_num_blocks=blocks).map_batches(
        lambda b: {"id": b["id"] + ids_from}, batch_format="numpy"
    )


def props(key=None):
    """lance-ray's namespace_properties for lancecat: its URL and, with authorization on, the
    API key as a header (the REST namespace sends every header.<name> property)."""
    key = API_KEY if key is None else key
    p = {"uri": URL}
    if key:
        p["header.x-api-key"] = key
    return p


def ns_args(table_id, key=None):
    return dict(table_id=table_id, namespace_impl="rest", namespace_properties=props(key))


@pytest.fixture(scope="session", autouse=True)
def cluster():
    ray.init(address=os.environ["LANCECAT_RAY_ADDRESS"], logging_level="ERROR", log_to_driver=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def nodes(cluster):
    return sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])


def api(path, body=None, key=None, method="POST"):
    """A request to the catalog itself (the cross-check of what the engine did): (status, JSON)."""
    key = API_KEY if key is None else key
    headers = {"content-type": "application/json"}
    if key:
        headers["x-api-key"] = key
    data = None if method == "GET" else json.dumps(body or {}).encode()
    req = urllib.request.Request(URL + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def table_path(*parts):
    return "/v1/table/" + urllib.parse.quote("$".join(parts), safe="") + "/"


def served(operation, code="200"):
    """How many requests of operation the catalog answered with code (its request metrics)."""
    with urllib.request.urlopen(OPS_URL + "/metrics") as r:
        text = r.read().decode()
    m = re.search(
        r'^lancecat_http_request_duration_seconds_count\{code="%s",operation="%s"\} (\d+)$' % (code, operation),
        text,
        re.M,
    )
    return int(m.group(1)) if m else 0
