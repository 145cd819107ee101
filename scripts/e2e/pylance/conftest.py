"""Shared setup of the pylance suite (e2e/pylance_test.go runs it through pytest, in the venv of
the pylance-14.0.2 set of scripts/python/versions.txt: pylance alone, no lancedb).

Environment (set by the Go test):
  LANCECAT_URL            the catalog, http://127.0.0.1:<port>
  LANCECAT_E2E_API_KEY    an estate admin's API key when authorization is on (sent as x-api-key)
  LANCECAT_E2E_AUTHZ=1    the catalog runs with authorization on
  LANCECAT_E2E_ROOT       the catalog root (a local path or s3://bucket/prefix)
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
                          pylance's own S3 credentials (an S3 root: lancecat answers table
                          locations with endpoint hints only)
"""

import io
import math
import os

import numpy as np
import pyarrow as pa
import pytest
from lance.namespace import RestNamespace
from lance_namespace import CreateNamespaceRequest

URL = os.environ.get("LANCECAT_URL", "http://127.0.0.1:2333")
API_KEY = os.environ.get("LANCECAT_E2E_API_KEY", "")
AUTHZ = os.environ.get("LANCECAT_E2E_AUTHZ") == "1"
ROOT = os.environ.get("LANCECAT_E2E_ROOT", "")

DIM = 16
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("grp", pa.int32()),
        pa.field("name", pa.string()),
        pa.field("text", pa.string()),
        pa.field("vec", pa.list_(pa.float32(), DIM)),
    ]
)
WORDS = ["lance", "catalog", "vector", "column", "arrow", "fragment", "manifest", "index", "query", "table"]


def vec(i):
    return [float(np.float32(math.sin((i + 1) * (j + 1) * 0.37 + i * 0.011))) for j in range(DIM)]


def text(i):
    # every row holds WORDS[i % 10] once as a token of its own (the others are no word a
    # stemmer folds into one of WORDS)
    return f"{WORDS[i % 10]} x{WORDS[(i // 10) % 10]} t{i // 100}"


def row(i):
    return {"id": i, "grp": None if i % 11 == 0 else i % 7, "name": None if i % 13 == 0 else f"n{i}", "text": text(i), "vec": vec(i)}


def table_of(ids):
    return pa.Table.from_pylist([row(i) for i in ids], schema=SCHEMA)


def ipc(tbl):
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, tbl.schema) as w:
        w.write_table(tbl)
    return sink.getvalue()


def rows_of(tbl):
    """tbl's rows as dicts, vectors as float lists, sorted by id."""
    return sorted(tbl.to_pylist(), key=lambda r: r["id"])


def connect(key=None):
    """pylance's RestNamespace on lancecat, with the API key when authorization is on."""
    key = API_KEY if key is None else key
    props = {"uri": URL}
    if key:
        props["header.x-api-key"] = key
    return RestNamespace(**props)


@pytest.fixture
def ns():
    return connect()


@pytest.fixture
def space(ns, request):
    """A namespace of the test's own (named after it), the id prefix of its tables."""
    name = "pyl_" + "".join(c if c.isalnum() else "_" for c in request.node.name.removeprefix("test_"))[:40]
    ns.create_namespace(CreateNamespaceRequest(id=[name]))
    return [name]


def query(ns, tid, **kw):
    """lancecat's query (QueryTable: Go executes it) as an Arrow table."""
    kw.setdefault("vector", {})  # pylance's client wants the field, even empty
    kw.setdefault("k", 10000)
    r = ns.query_table(dict(id=tid, **kw))
    return pa.ipc.open_file(r.data).read_all()


def l2(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(((a - b) ** 2).sum())
