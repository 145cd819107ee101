"""The LanceDB Python SDK (the newest pinned lancedb, namespace mode) reads what the Ray suite wrote
and compacted (e2e/ray_test.go runs it after test_ray.py, in the lancedb venv): the table whole
and filtered, values checked against the Ray suite's model. Prints one JSON line.

usage: python lancedb_read.py <catalog URL> [API key]
"""

import json
import sys

import lancedb

url = sys.argv[1]
key = sys.argv[2] if len(sys.argv) > 2 else ""
props = {"uri": url}
if key:
    props["header.x-api-key"] = key
db = lancedb.connect_namespace("rest", props)
tbl = db.open_table("events", namespace_path=["rayns"])
got = sorted(tbl.to_arrow().drop_columns(["node"]).to_pylist(), key=lambda r: r["id"])
want = [{"id": i, "grp": i % 7, "name": f"n{i}", "score": i * 0.5} for i in range(2900)]
assert got == want, "the table's rows differ from the model"
hits = tbl.search().where("grp = 3 AND id < 100").select(["id", "name"]).to_arrow().to_pylist()
assert sorted(hits, key=lambda r: r["id"]) == [{"id": i, "name": f"n{i}"} for i in range(3, 100, 7)], hits
print(json.dumps({"lancedb": lancedb.__version__, "rows": len(got), "version": tbl.version, "filtered": len(hits)}))
