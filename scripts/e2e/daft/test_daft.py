"""Daft 0.7.26 with daft-lance 0.6.0 against lancecat serve through the REST namespace (run by
e2e/daft_test.go through pytest, in the venv of set daft-0.7.26): write_lance declares a table in
the catalog and writes it, read_lance reads it back with a filter and a projection, an append, and
compact_files, each value checked against the model and cross-checked in the catalog (describe,
version list, lancecat's own count). Each test is one case the Go test reports; they run in file
order on one table.

Environment (set by the Go test): LANCECAT_URL, LANCECAT_E2E_ROOT, LANCECAT_E2E_API_KEY (with
authorization on), LANCECAT_E2E_VENDED=1 (an S3 root whose only credentials are the ones the
catalog vends).
"""

import json
import os
import urllib.error
import urllib.parse
import urllib.request

import daft
import daft_lance
import lance
import pytest
from lance_namespace import connect

URL = os.environ.get("LANCECAT_URL", "http://127.0.0.1:2333")
ROOT = os.environ.get("LANCECAT_E2E_ROOT", "")
API_KEY = os.environ.get("LANCECAT_E2E_API_KEY", "")
if os.environ.get("LANCECAT_E2E_VENDED") == "1":
    for k in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[k]
NS, TABLE = "daftns", "items"
PROPS = {"uri": URL, **({"header.x-api-key": API_KEY} if API_KEY else {})}
NSARGS = dict(table_id=[NS, TABLE], namespace_impl="rest", namespace_properties=PROPS)


def row(i):
    return {"id": i, "grp": i % 5, "name": f"d{i}"}


def frame(ids):
    ids = list(ids)
    return daft.from_pydict({"id": ids, "grp": [i % 5 for i in ids], "name": [f"d{i}" for i in ids]})


def api(path, body=None, method="POST"):
    headers = {"content-type": "application/json"}
    if API_KEY:
        headers["x-api-key"] = API_KEY
    data = None if method == "GET" else json.dumps(body or {}).encode()
    req = urllib.request.Request(URL + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


TP = "/v1/table/" + urllib.parse.quote(f"{NS}${TABLE}", safe="") + "/"


def versions():
    st, body = api(TP + "version/list")
    assert st == 200, body
    return sorted(v["version"] for v in body["versions"])


def count():
    st, n = api(TP + "count_rows", {})
    assert st == 200, n
    return n


def by_id(rows):
    return sorted(rows, key=lambda r: r["id"])


@pytest.fixture(scope="module", autouse=True)
def namespace():
    st, body = api(f"/v1/namespace/{NS}/create", {})
    assert st == 200, body


def test_versions():
    print("daft", daft.__version__, "lance", lance.__version__, "root", ROOT)
    assert (daft.__version__, lance.__version__) == ("0.7.26", "14.0.2")


def test_write_declares_through_catalog():
    daft_lance.write_lance(frame(range(500)), mode="create", **NSARGS)
    st, listed = api(f"/v1/namespace/{NS}/table/list", method="GET")
    assert st == 200 and listed["tables"] == [TABLE], listed
    st, d = api(TP + "describe")
    assert st == 200, d
    assert [f["name"] for f in d["schema"]["fields"]] == ["id", "grp", "name"]
    if ROOT:
        assert d["location"].startswith(ROOT.rstrip("/") + "/"), d["location"]
    assert d["version"] == versions()[-1]
    assert count() == 500


def test_read_with_filter():
    df = daft_lance.read_lance(**NSARGS).where((daft.col("grp") == 2) & (daft.col("id") < 100)).select("id", "name")
    got = by_id(df.to_pylist())
    assert got == [{"id": i, "name": f"d{i}"} for i in range(100) if i % 5 == 2]
    assert by_id(daft_lance.read_lance(**NSARGS).to_pylist()) == [row(i) for i in range(500)]


def test_append_and_compact():
    before = versions()
    for k in range(3):
        daft_lance.write_lance(frame(range(500 + 10 * k, 510 + 10 * k)), mode="append", **NSARGS)
    assert versions() == before + [before[-1] + 1, before[-1] + 2, before[-1] + 3]
    assert count() == 530
    ds = lance.dataset(namespace_client=connect("rest", PROPS), table_id=[NS, TABLE])
    frags = len(ds.get_fragments())
    assert frags >= 4, frags
    mid = versions()
    daft_lance.compact_files(compaction_options={"target_rows_per_fragment": 100_000}, **NSARGS)
    ds = lance.dataset(namespace_client=connect("rest", PROPS), table_id=[NS, TABLE])
    assert len(ds.get_fragments()) < frags
    after = versions()
    assert after[: len(mid)] == mid and len(after) > len(mid), (mid, after)
    st, d = api(TP + "describe")
    assert d["version"] == after[-1] == ds.version
    assert by_id(daft_lance.read_lance(**NSARGS).to_pylist()) == [row(i) for i in range(530)]
    assert count() == 530
