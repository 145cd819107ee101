"""pylance's half of lancecat's vector index interop tests (lance/index/tableindex/*_sdk_test.go)
for the index types the Node SDK cannot build (IVF_SQ, IVF_HNSW_FLAT):

    python pylance-vector.py index <job.json>
        Builds job.indices [{type, metric, num_partitions, name}] on the table job.dir (made by
        sdk-vector.mjs create) and prints {"build_ms": [...], "cpu_ms": [...]}.
    python pylance-vector.py check <job.json>
        Prints {"queries": [{ids, distances}], "plan"} for the vectors job.queries: k = job.k,
        nprobes = job.nprobes, metric = job.metric, ef = job.ef, refine_factor = job.refine_factor;
        with job.flat the search bypasses the index.
"""

import json
import sys
import time

import lance
import numpy as np


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        job = json.load(f)
    ds = lance.dataset(job["dir"])
    if mode == "index":
        build_ms, cpu_ms = [], []
        for ix in job.get("indices", []):
            kw = {"index_type": ix["type"], "metric": ix.get("metric", "l2"), "replace": True,
                  "name": ix.get("name", "vec_idx")}
            if ix.get("num_partitions"):
                kw["num_partitions"] = ix["num_partitions"]
            if ix.get("num_sub_vectors"):
                kw["num_sub_vectors"] = ix["num_sub_vectors"]
            t0, c0 = time.perf_counter(), time.process_time()
            ds.create_index(ix.get("column", "vec"), **kw)
            build_ms.append((time.perf_counter() - t0) * 1000)
            cpu_ms.append((time.process_time() - c0) * 1000)
            ds = lance.dataset(job["dir"])
        print(json.dumps({"build_ms": build_ms, "cpu_ms": cpu_ms}))
        return
    if mode == "check":
        out, plan = [], ""
        for i, q in enumerate(job.get("queries", [])):
            nearest = {"column": job.get("column", "vec"), "q": np.array(q, dtype=np.float32),
                       "k": job.get("k", 10), "metric": job.get("metric", "l2"),
                       "use_index": not job.get("flat", False)}
            for key in ("nprobes", "ef", "refine_factor"):
                if job.get(key):
                    nearest[key] = job[key]
            t = ds.to_table(columns=["id"], nearest=nearest)
            out.append({"ids": [int(x) for x in t.column("id").to_pylist()],
                        "distances": [float(x) for x in t.column("_distance").to_pylist()]})
            if i == 0:
                plan = ds.scanner(columns=["id"], nearest=nearest).explain_plan(True)
        print(json.dumps({"queries": out, "plan": plan}))
        return
    sys.exit("usage: pylance-vector.py index|check <job.json>")


if __name__ == "__main__":
    main()
