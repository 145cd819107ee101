"""Shared setup of the Python client suites (run by e2e/python_*_test.go through pytest).

Environment (set by the Go test):
  LANCECAT_URL            the catalog, http://127.0.0.1:<port>
  LANCECAT_E2E_MODE       namespace (lancedb.connect_namespace("rest", ...)) or remote
                          (lancedb.connect("db://...", host_override=...))
  LANCECAT_E2E_API_KEY    an estate admin's API key when authorization is on (sent as x-api-key)
  LANCECAT_E2E_AUTHZ=1    the catalog runs with authorization on
  LANCECAT_E2E_ROOT       the catalog root (a local path or s3://bucket/prefix)
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
                          the client's own S3 credentials (an S3 root, namespace mode: lancecat
                          answers table locations with endpoint hints only)
"""

import inspect
import math
import os

import lancedb
import numpy as np
import pyarrow as pa
import pytest

URL = os.environ.get("LANCECAT_URL", "http://127.0.0.1:2333")
MODE = os.environ.get("LANCECAT_E2E_MODE", "namespace")
API_KEY = os.environ.get("LANCECAT_E2E_API_KEY", "")
AUTHZ = os.environ.get("LANCECAT_E2E_AUTHZ") == "1"
ROOT = os.environ.get("LANCECAT_E2E_ROOT", "")
SDK = tuple(int(x) for x in lancedb.__version__.split(".")[:3])

DIM = 16
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("grp", pa.int32()),
        pa.field("name", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), DIM)),
    ]
)


def vec(i):
    return [float(np.float32(math.sin((i + 1) * (j + 1) * 0.37))) for j in range(DIM)]


def row(i, **over):
    r = {"id": i, "grp": i % 7, "name": f"n{i}", "vector": vec(i)}
    r.update(over)
    return r


def table_of(rows):
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def ns_properties(url=URL, key=API_KEY):
    props = {"uri": url}
    if key:
        # Both the native rest client (0.40) and pylance's RestNamespace (0.30) turn
        # "header.<name>" properties into request headers.
        props["header.x-api-key"] = key
    return props


def connect(mode=MODE, key=None):
    """A fresh connection in mode, with the API key when authorization is on."""
    key = API_KEY if key is None else key
    if mode == "namespace":
        return lancedb.connect_namespace("rest", ns_properties(key=key))
    return lancedb.connect(
        "db://lancecat",
        api_key=key or "python-e2e",
        host_override=URL,
        client_config={"retry_config": {"retries": 3}},
    )


def ns_kw(db, path):
    """The namespace keyword argument of db's methods: namespace_path= since 0.3x, namespace=
    in the older line."""
    params = inspect.signature(type(db).create_table).parameters
    return {"namespace_path" if "namespace_path" in params else "namespace": path}


@pytest.fixture
def db():
    return connect()


@pytest.fixture
def model():
    return [row(i) for i in range(512)]


@pytest.fixture
def items(db, model, request):
    """A 512-row table of its own for the test (named after it)."""
    name = request.node.name.removeprefix("test_")[:48]
    return db.create_table(name, table_of(model))


def l2(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(((a - b) ** 2).sum())


def cosd(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(1 - a.dot(b) / math.sqrt(a.dot(a) * b.dot(b)))


def close(a, b, eps=1e-3):
    return abs(a - b) <= eps * max(1.0, abs(b))
