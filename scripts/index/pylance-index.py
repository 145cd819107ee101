# pylance's half of lancecat's inexact scalar index interop tests
# (lance/index/tableindex/inexact_sdk_test.go): ZONEMAP, BLOOMFILTER and
# NGRAM, which the Node SDK cannot build.
#
#   python pylance-index.py create <job.json>
#       Writes table job["dir"] with the data of scripts/index/sdk-index.mjs
#       (id, cat, x; rows 0..rows-1 in job["fragments"] appends), deletes
#       job["delete"] (a filter) if given, then builds job["indices"]
#       [{column, type: ZONEMAP|BLOOMFILTER|NGRAM|..., name}].
#   python pylance-index.py append <job.json>
#       Appends rows job["from"]..job["to"]-1 of the same data to job["dir"].
#   python pylance-index.py check <job.json>
#       Prints {"indices": [{name, type}], "queries": [{filter, ids, plan}]}
#       for job["filters"] (ids ascending).
import json
import sys

import lance
import pyarrow as pa

CATS = ["red", "green", "blue", "cyan", "magenta"]


def rows(lo, hi):
    return pa.table({
        "id": pa.array(range(lo, hi), pa.int64()),
        "cat": pa.array([None if i % 7 == 3 else CATS[i % 5] for i in range(lo, hi)], pa.string()),
        "x": pa.array([None if i % 11 == 4 else i / 4 for i in range(lo, hi)], pa.float64()),
    })


def main():
    mode, arg = sys.argv[1], sys.argv[2]
    with open(arg) as f:
        job = json.load(f)
    if mode == "create":
        n = job.get("rows", 100)
        frags = job.get("fragments", 1)
        per = -(-n // frags)
        ds = None
        for lo in range(0, n, per):
            t = rows(lo, min(n, lo + per))
            # 2.1 data files: every SDK and lancecat's compaction read and write them
            ds = lance.write_dataset(t, job["dir"], mode="overwrite" if ds is None else "append",
                                     data_storage_version="2.1")
        if job.get("delete"):
            ds.delete(job["delete"])
        for ix in job.get("indices", []):
            ds.create_scalar_index(ix["column"], ix["type"], name=ix.get("name"))
        print(json.dumps({"version": ds.version}))
    elif mode == "append":
        ds = lance.write_dataset(rows(job["from"], job["to"]), job["dir"], mode="append")
        print(json.dumps({"version": ds.version}))
    elif mode == "check":
        ds = lance.dataset(job["dir"])
        indices = [{"name": ix["name"], "type": ix["type"]} for ix in ds.list_indices()]
        queries = []
        for flt in job.get("filters", []):
            ids = sorted(ds.to_table(filter=flt, columns=["id"]).column("id").to_pylist())
            plan = ds.scanner(filter=flt, columns=["id"]).explain_plan(True)
            queries.append({"filter": flt, "ids": ids, "plan": plan})
        print(json.dumps({"indices": indices, "queries": queries}, default=str))
    else:
        print("usage: pylance-index.py create|check <job.json>", file=sys.stderr)
        sys.exit(2)


main()
