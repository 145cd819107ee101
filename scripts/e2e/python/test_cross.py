"""The Python half of the cross-client test (e2e/python_cross_test.go): Python writes (phase
python-writes), the Node SDK reads and writes (scripts/e2e/python/cross.mjs), Python reads what Node
wrote (phase python-reads). LANCECAT_E2E_PHASE picks the phase."""

import os

import pytest

from conftest import connect, ns_kw

PHASE = os.environ.get("LANCECAT_E2E_PHASE", "")


@pytest.mark.skipif(PHASE != "python-writes", reason="phase python-writes only")
def test_python_writes():
    nsdb = connect("namespace")
    nsdb.create_namespace(["cross"])
    t = nsdb.create_table("from_py", [{"id": i, "name": f"py{i}", "vector": [0.0, 1.0, 2.0, float(i)]} for i in range(10)], **ns_kw(nsdb, ["cross"]))
    t.update(where="id = 3", values={"name": "py-three"})
    t.delete("id = 9")
    assert t.count_rows() == 9
    remote = connect("remote")
    remote.create_table("py_root", [{"x": 1}, {"x": 2}, {"x": 3}])


@pytest.mark.skipif(PHASE != "python-reads", reason="phase python-reads only")
def test_python_reads_node_writes():
    remote = connect("remote")
    t = remote.open_table("from_py", **ns_kw(remote, ["cross"]))
    got = sorted((r["id"], r["name"]) for r in t.search().select(["id", "name"]).limit(100).to_list())
    assert got == [(0, "node-zero")] + [(i, "py-three" if i == 3 else f"py{i}") for i in range(1, 9)] + [(100, "node100")]
    assert sorted(r["x"] for r in remote.open_table("py_root").search().limit(100).to_list()) == [1, 2, 3, 10]
    assert sorted((r["k"], r["v"]) for r in remote.open_table("from_node").search().limit(100).to_list()) == [(1, "a"), (2, "b")]
    nsdb = connect("namespace")
    mine = nsdb.open_table("from_node_ns", **ns_kw(nsdb, ["cross"]))
    assert mine.search().to_list() == [{"k": 7, "v": "seven"}]
    assert sorted(nsdb.table_names(**ns_kw(nsdb, ["cross"]))) == ["from_node_ns", "from_py"]
