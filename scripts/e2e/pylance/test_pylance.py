"""pylance 14 (the `lance` package) against `lancecat serve`, through the REST namespace
(lance.namespace.RestNamespace; lance.dataset / lance.write_dataset with namespace_client= and
table_id=): pylance places and opens tables through the catalog and reads and writes their data
itself, while lancecat's own doors (QueryTable, CountTableRows, InsertIntoTable, CreateTable,
DeleteFromTable, CreateTableIndex: the Go reader and writer) work on the same tables. Value-checked
against a model (conftest.row); each test is one case the Go test reports.
"""

import lance
import pytest
from lance_namespace import (
    CountTableRowsRequest,
    CreateTableIndexRequest,
    CreateTableRequest,
    DeleteFromTableRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DropTableRequest,
    ExplainTableQueryPlanRequest,
    InsertIntoTableRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
    TableExistsRequest,
)
from lance_namespace.errors import LanceNamespaceError, UnsupportedOperationError

from conftest import AUTHZ, ROOT, connect, ipc, l2, query, row, rows_of, table_of, vec


def count(ns, tid, where=None):
    return ns.count_table_rows(CountTableRowsRequest(id=tid, predicate=where)).count


def open_ds(ns, tid):
    return lance.dataset(namespace_client=ns, table_id=tid)


def model(ids, where=lambda r: True):
    return [r for r in (row(i) for i in ids) if where(r)]


def same_rows(got, want):
    """got's rows (an Arrow table) equal the model rows want, in id order, vectors to the bit."""
    got = rows_of(got)
    assert [r["id"] for r in got] == [r["id"] for r in want]
    for g, w in zip(got, want):
        for k, v in w.items():
            if k in g:
                assert g[k] == v, (g["id"], k, g[k], v)


def nearest(ids, q, k):
    """The model's k nearest ids to q (l2), exact."""
    return [i for _, i in sorted((l2(vec(i), q), i) for i in ids)[:k]]


def explain(ns, tid, **kw):
    kw.setdefault("vector", {})
    kw.setdefault("k", 10)
    return ns.explain_table_query_plan(ExplainTableQueryPlanRequest(id=tid, query=dict(id=tid, **kw)))


def file_versions(ds):
    return sorted({f"{df.file_major_version}.{df.file_minor_version}" for fr in ds.get_fragments() for df in fr.metadata.files})


def test_version():
    # What the Go test reports: the pylance under test is the pinned one.
    print("pylance", lance.__version__, "root", ROOT)
    assert lance.__version__ == "14.0.2"


def test_authorization(ns, space):
    """With authorization on, pylance without the API key is refused every table (listing,
    opening, writing); with it off, anyone is the anonymous estate admin."""
    tid = space + ["guarded"]
    lance.write_dataset(table_of(range(10)), namespace_client=ns, table_id=tid)
    anon = connect(key="")
    if not AUTHZ:
        assert anon.list_tables(ListTablesRequest(id=space)).tables == ["guarded"]
        assert open_ds(anon, tid).count_rows() == 10
        return
    with pytest.raises(LanceNamespaceError):
        anon.list_tables(ListTablesRequest(id=space))
    with pytest.raises(LanceNamespaceError):
        open_ds(anon, tid)
    with pytest.raises(LanceNamespaceError):
        lance.write_dataset(table_of(range(10, 20)), namespace_client=anon, table_id=tid, mode="append")
    assert open_ds(ns, tid).count_rows() == 10


def test_namespace_tables(ns, space):
    tid = space + ["items"]
    ds = lance.write_dataset(table_of(range(300)), namespace_client=ns, table_id=tid)
    assert ds.version == 1
    # The catalog placed it: under its root, listed, described, there.
    assert ns.list_tables(ListTablesRequest(id=space)).tables == ["items"]
    desc = ns.describe_table(DescribeTableRequest(id=tid))
    assert desc.location.rstrip("/").startswith(ROOT.rstrip("/"))
    assert desc.version == 1
    ns.table_exists(TableExistsRequest(id=tid))  # raises when it is not
    # Opened through the catalog by its id: the same dataset, every value.
    again = open_ds(ns, tid)
    assert again.uri.rstrip("/").endswith(desc.location.rstrip("/").split("://")[-1].lstrip("/"))
    assert again.count_rows() == 300
    same_rows(again.to_table(), model(range(300)))
    assert [f.name for f in again.schema] == ["id", "grp", "name", "text", "vec"]
    # pylance appends through the namespace; the catalog sees the version.
    lance.write_dataset(table_of(range(300, 350)), namespace_client=ns, table_id=tid, mode="append")
    assert ns.describe_table(DescribeTableRequest(id=tid)).version == 2
    assert [v.version for v in ns.list_table_versions(ListTableVersionsRequest(id=tid)).versions] == [1, 2]
    assert count(ns, tid) == 350
    same_rows(open_ds(ns, tid).to_table(), model(range(350)))
    # An older version by number, through the catalog.
    assert lance.dataset(namespace_client=ns, table_id=tid, version=1).count_rows() == 300
    # Dropped through the catalog: gone for pylance too.
    ns.drop_table(DropTableRequest(id=tid))
    with pytest.raises(LanceNamespaceError, match="not found"):
        open_ds(ns, tid)
    with pytest.raises(LanceNamespaceError, match="not found"):
        ns.table_exists(TableExistsRequest(id=tid))


@pytest.mark.parametrize("version", ["default", "2.0", "2.1", "2.2", "2.3"])
def test_storage_version(ns, space, version):
    """pylance writes a table in each data_storage_version it offers; lancecat counts, filters,
    searches and appends (or, for a version it does not read or write, refuses with 406 naming
    it); pylance reads what lancecat appended and appends on top, which lancecat reads."""
    tid = space + ["t"]
    kw = {} if version == "default" else {"data_storage_version": version}
    ds = lance.write_dataset(table_of(range(500)), namespace_client=ns, table_id=tid, max_rows_per_file=200, **kw)
    want = "2.2" if version == "default" else version
    assert ds.data_storage_version == want
    # Counting needs the manifest only: every version.
    assert count(ns, tid) == 500
    if version == "2.3":
        for call in (lambda: count(ns, tid, "grp = 3"), lambda: query(ns, tid, filter="grp = 3")):
            with pytest.raises(UnsupportedOperationError, match="is a Lance 2.3 data file; lancecat reads Lance 2.0, 2.1 and 2.2"):
                call()
        with pytest.raises(UnsupportedOperationError, match="stores Lance 2.3 data files; lancecat writes 2.1 and 2.2"):
            ns.insert_into_table(InsertIntoTableRequest(id=tid), ipc(table_of(range(500, 600))))
        assert count(ns, tid) == 500
        return
    assert count(ns, tid, "grp = 3") == len(model(range(500), lambda r: r["grp"] == 3))
    got = query(ns, tid, filter="grp = 3 AND name IS NOT NULL", columns={"column_names": ["id", "name", "vec"]})
    same_rows(got, model(range(500), lambda r: r["grp"] == 3 and r["name"] is not None))
    q = vec(1234)
    got = query(ns, tid, vector={"single_vector": q}, k=7, columns={"column_names": ["id"]})
    assert got.column("id").to_pylist() == nearest(range(500), q, 7)
    # lancecat appends with the Go writer, in the table's own version (2.0 it does not write).
    if version == "2.0":
        with pytest.raises(UnsupportedOperationError, match="stores Lance 2.0 data files; lancecat writes 2.1 and 2.2"):
            ns.insert_into_table(InsertIntoTableRequest(id=tid), ipc(table_of(range(500, 600))))
        same_rows(open_ds(ns, tid).to_table(), model(range(500)))
        return
    ns.insert_into_table(InsertIntoTableRequest(id=tid), ipc(table_of(range(500, 600))))
    ds = open_ds(ns, tid)
    assert ds.count_rows() == 600
    assert file_versions(ds) == [want]
    same_rows(ds.to_table(), model(range(600)))
    assert ds.to_table(filter="id >= 590", columns=["id"]).column("id").to_pylist() == list(range(590, 600))
    # pylance appends on top of lancecat's commit.
    lance.write_dataset(table_of(range(600, 650)), namespace_client=ns, table_id=tid, mode="append")
    assert count(ns, tid) == 650
    same_rows(query(ns, tid, filter="id >= 550"), model(range(550, 650)))


def test_lancecat_writes_pylance_reads_and_appends(ns, space):
    """A table lancecat creates (CreateTable with data: the Go writer), opened by pylance through
    the namespace, values read, deleted from and appended to by both sides."""
    tid = space + ["go"]
    ns.create_table(CreateTableRequest(id=tid), ipc(table_of(range(400))))
    ds = open_ds(ns, tid)
    assert ds.data_storage_version == "2.1"
    assert ds.count_rows() == 400
    same_rows(ds.to_table(), model(range(400)))
    assert ds.to_table(filter="grp = 2", columns=["id"]).column("id").to_pylist() == [r["id"] for r in model(range(400), lambda r: r["grp"] == 2)]
    # lancecat deletes (a deletion file pylance must honour).
    ns.delete_from_table(DeleteFromTableRequest(id=tid, predicate="id % 10 = 0"))
    ds = open_ds(ns, tid)
    assert ds.count_rows() == 360
    same_rows(ds.to_table(), model(range(400), lambda r: r["id"] % 10 != 0))
    # pylance deletes and appends; lancecat reads both.
    ds.delete("id < 50")
    lance.write_dataset(table_of(range(400, 500)), namespace_client=ns, table_id=tid, mode="append")
    live = lambda r: r["id"] >= 400 or (r["id"] % 10 != 0 and r["id"] >= 50)  # noqa: E731
    assert count(ns, tid) == len(model(range(500), live))
    same_rows(query(ns, tid), model(range(500), live))
    # And lancecat appends after pylance's commits; pylance reads every row.
    ns.insert_into_table(InsertIntoTableRequest(id=tid), ipc(table_of(range(500, 520))))
    same_rows(open_ds(ns, tid).to_table(), model(range(520), live))


def index_types(ns, tid):
    return {i.index_name: (i.index_type, i.columns) for i in ns.list_table_indices(ListTableIndicesRequest(id=tid)).indexes}


def test_pylance_indices_used_by_lancecat(ns, space):
    """Indices pylance builds (IVF_FLAT and IVF_PQ vectors, BTREE, BITMAP, INVERTED) are listed by
    lancecat and used by its query (the plan names them), with the model's answers."""
    tid = space + ["idx"]
    n = 2000
    ds = lance.write_dataset(table_of(range(n)), namespace_client=ns, table_id=tid)
    ds.create_index("vec", "IVF_FLAT", num_partitions=4, name="vec_idx")
    ds.create_scalar_index("id", "BTREE", name="id_idx")
    ds.create_scalar_index("grp", "BITMAP", name="grp_idx")
    ds.create_scalar_index("text", "INVERTED", name="text_idx")
    assert index_types(ns, tid) == {
        "vec_idx": ("IVF_FLAT", ["vec"]),
        "id_idx": ("BTREE", ["id"]),
        "grp_idx": ("BITMAP", ["grp"]),
        "text_idx": ("FTS", ["text"]),
    }
    stats = ns.describe_table_index_stats(DescribeTableIndexStatsRequest(id=tid, index_name="vec_idx"))
    assert (stats.num_indexed_rows, stats.num_unindexed_rows) == (n, 0)

    # Vector search on pylance's IVF_FLAT, every partition probed: exact.
    q = vec(4321)
    got = query(ns, tid, vector={"single_vector": q}, k=10, nprobes=4, columns={"column_names": ["id"]})
    assert got.column("id").to_pylist() == nearest(range(n), q, 10)
    for d, i in zip(got.column("_distance").to_pylist(), got.column("id").to_pylist()):
        assert abs(d - l2(vec(i), q)) <= 1e-4 * max(1, d)
    assert "index=vec_idx(IVF_FLAT)" in explain(ns, tid, vector={"single_vector": q})
    # With a prefilter the BITMAP index answers.
    got = query(ns, tid, vector={"single_vector": q}, k=5, nprobes=4, filter="grp = 3", prefilter=True, columns={"column_names": ["id", "grp"]})
    assert got.column("id").to_pylist() == nearest([r["id"] for r in model(range(n), lambda r: r["grp"] == 3)], q, 5)
    # BTREE and BITMAP answer filters.
    same_rows(query(ns, tid, filter="id = 7"), model([7]))
    assert "id_idx(BTree)" in explain(ns, tid, filter="id = 7")
    assert sorted(query(ns, tid, filter="grp = 5", columns={"column_names": ["id"]}).column("id").to_pylist()) == [r["id"] for r in model(range(n), lambda r: r["grp"] == 5)]
    assert "grp_idx(Bitmap)" in explain(ns, tid, filter="grp = 5")
    # FTS on pylance's INVERTED index: every row holding the word, and only those.
    fts = {"string_query": {"query": "manifest", "columns": ["text"]}}
    got = query(ns, tid, full_text_query=fts, k=n, columns={"column_names": ["id", "text"]})
    assert sorted(got.column("id").to_pylist()) == [i for i in range(n) if "manifest" in row(i)["text"].split()]
    assert "index=text_idx" in explain(ns, tid, full_text_query=fts)
    # The same words through pylance's own search agree.
    mine = ds.to_table(full_text_query="manifest", columns=["id"]).column("id").to_pylist()
    assert sorted(mine) == sorted(got.column("id").to_pylist())

    # Rows lancecat appends are not indexed yet: searched flat beside the index, still exact.
    ns.insert_into_table(InsertIntoTableRequest(id=tid), ipc(table_of(range(n, n + 100))))
    stats = ns.describe_table_index_stats(DescribeTableIndexStatsRequest(id=tid, index_name="vec_idx"))
    assert (stats.num_indexed_rows, stats.num_unindexed_rows) == (n, 100)
    got = query(ns, tid, vector={"single_vector": vec(n + 42)}, k=10, nprobes=4, columns={"column_names": ["id"]})
    assert got.column("id").to_pylist() == nearest(range(n + 100), vec(n + 42), 10)
    same_rows(query(ns, tid, filter="id = 2050"), model([2050]))

    # IVF_PQ (replacing IVF_FLAT): approximate, but lancecat's answers find most true neighbours.
    open_ds(ns, tid).create_index("vec", "IVF_PQ", num_partitions=4, num_sub_vectors=4, name="vec_idx", replace=True)
    assert index_types(ns, tid)["vec_idx"] == ("IVF_PQ", ["vec"])
    hits = 0
    for k in range(10):
        q = vec(7777 + k)
        got = query(ns, tid, vector={"single_vector": q}, k=10, nprobes=4, refine_factor=5, columns={"column_names": ["id"]})
        hits += len(set(got.column("id").to_pylist()) & set(nearest(range(n + 100), q, 10)))
    assert hits >= 80, hits
    assert "index=vec_idx(IVF_PQ)" in explain(ns, tid, vector={"single_vector": vec(1)})


def test_lancecat_indices_used_by_pylance(ns, space):
    """Indices lancecat builds (CreateTableIndex: IVF_FLAT, BTREE, BITMAP, FTS) are opened by
    pylance, used by its search (its plan shows them) with the model's answers, and extended by
    its optimize_indices after an append, which lancecat then uses."""
    tid = space + ["goidx"]
    n = 2000
    ns.create_table(CreateTableRequest(id=tid), ipc(table_of(range(n))))
    ns.create_table_index(CreateTableIndexRequest(id=tid, column="vec", index_type="IVF_FLAT", num_partitions=4, distance_type="l2", name="vec_idx"))
    ns.create_table_scalar_index(CreateTableIndexRequest(id=tid, column="id", index_type="BTREE", name="id_idx"))
    ns.create_table_scalar_index(CreateTableIndexRequest(id=tid, column="grp", index_type="BITMAP", name="grp_idx"))
    ns.create_table_index(CreateTableIndexRequest(id=tid, column="text", index_type="FTS", name="text_idx"))
    ds = open_ds(ns, tid)
    got = {i["name"]: (i["type"], i["fields"]) for i in ds.list_indices()}
    assert got == {
        "vec_idx": ("IVF_FLAT", ["vec"]),
        "id_idx": ("BTree", ["id"]),
        "grp_idx": ("Bitmap", ["grp"]),
        "text_idx": ("Inverted", ["text"]),
    }
    assert ds.stats.index_stats("vec_idx")["num_indexed_rows"] == n

    q = vec(4321)
    res = ds.to_table(nearest={"column": "vec", "q": q, "k": 10, "nprobes": 4}, columns=["id"])
    assert res.column("id").to_pylist() == nearest(range(n), q, 10)
    plan = ds.scanner(nearest={"column": "vec", "q": q, "k": 10, "nprobes": 4}, columns=["id"]).explain_plan()
    assert "ANNSubIndex" in plan and "vec_idx" in plan, plan
    assert ds.to_table(filter="id = 7").to_pylist()[0]["name"] == "n7"
    assert "ScalarIndexQuery" in ds.scanner(filter="id = 7").explain_plan()
    assert sorted(ds.to_table(filter="grp = 5", columns=["id"]).column("id").to_pylist()) == [r["id"] for r in model(range(n), lambda r: r["grp"] == 5)]
    assert "ScalarIndexQuery" in ds.scanner(filter="grp = 5").explain_plan()
    fts = ds.to_table(full_text_query="manifest", columns=["id"]).column("id").to_pylist()
    assert sorted(fts) == [i for i in range(n) if "manifest" in row(i)["text"].split()]
    plan = ds.scanner(full_text_query="manifest", columns=["id"]).explain_plan()
    assert "MatchQuery" in plan and "FlatMatchQuery" not in plan, plan

    # pylance appends and folds the new rows into lancecat's indices; lancecat uses the result.
    lance.write_dataset(table_of(range(n, n + 200)), namespace_client=ns, table_id=tid, mode="append")
    ds = open_ds(ns, tid)
    ds.optimize.optimize_indices()
    ds = open_ds(ns, tid)
    assert ds.stats.index_stats("vec_idx")["num_unindexed_rows"] == 0
    stats = ns.describe_table_index_stats(DescribeTableIndexStatsRequest(id=tid, index_name="vec_idx"))
    assert (stats.num_indexed_rows, stats.num_unindexed_rows) == (n + 200, 0)
    q = vec(n + 77)
    got = query(ns, tid, vector={"single_vector": q}, k=10, nprobes=4, columns={"column_names": ["id"]})
    assert got.column("id").to_pylist() == nearest(range(n + 200), q, 10)
    fts = {"string_query": {"query": "arrow", "columns": ["text"]}}
    got = query(ns, tid, full_text_query=fts, k=n + 200, columns={"column_names": ["id"]})
    assert sorted(got.column("id").to_pylist()) == [i for i in range(n + 200) if "arrow" in row(i)["text"].split()]
    same_rows(query(ns, tid, filter="id = 2150"), model([2150]))



@pytest.mark.parametrize("compact", [False, True])
def test_stable_row_ids(ns, space, compact):
    """A table pylance writes with stable row ids, indexed (BTREE, BITMAP, INVERTED, IVF_FLAT),
    deleted from, and (compact) compacted by pylance: lancecat's query answers through every
    index as the model says (Lance 14's BTREE records row addresses, its other indices stable row
    ids), and lancecat's append and delete keep it readable by pylance."""
    tid = space + ["stable"]
    n = 2000
    ds = lance.write_dataset(table_of(range(n)), namespace_client=ns, table_id=tid, max_rows_per_file=300, enable_stable_row_ids=True)
    ds.create_scalar_index("id", "BTREE", name="id_idx")
    ds.create_scalar_index("grp", "BITMAP", name="grp_idx")
    ds.create_scalar_index("text", "INVERTED", name="text_idx")
    ds.create_index("vec", "IVF_FLAT", num_partitions=4, name="vec_idx")
    ds.delete("id % 5 = 0")
    if compact:
        open_ds(ns, tid).optimize.compact_files(target_rows_per_fragment=1000)
        assert len(open_ds(ns, tid).get_fragments()) < 7
    live = [i for i in range(n) if i % 5]
    for i in (1, 299, 301, 1234, 1999):
        same_rows(query(ns, tid, filter=f"id = {i}"), model([i]))
    assert "id_idx(BTree)" in explain(ns, tid, filter="id = 301")
    assert sorted(query(ns, tid, filter="grp = 3", columns={"column_names": ["id"]}).column("id").to_pylist()) == [i for i in live if row(i)["grp"] == 3]
    fts = {"string_query": {"query": "manifest", "columns": ["text"]}}
    got = query(ns, tid, full_text_query=fts, k=n, columns={"column_names": ["id"]})
    assert sorted(got.column("id").to_pylist()) == [i for i in live if "manifest" in row(i)["text"].split()]
    q = vec(777)
    got = query(ns, tid, vector={"single_vector": q}, k=10, nprobes=4, columns={"column_names": ["id"]})
    assert got.column("id").to_pylist() == nearest(live, q, 10)
    # lancecat appends and deletes (stable row ids for the new rows); pylance reads it all.
    ns.insert_into_table(InsertIntoTableRequest(id=tid), ipc(table_of(range(n, n + 100))))
    ns.delete_from_table(DeleteFromTableRequest(id=tid, predicate="id = 1234"))
    live = [i for i in live if i != 1234] + list(range(n, n + 100))
    ds = open_ds(ns, tid)
    same_rows(ds.to_table(), model(live))
    assert ds.to_table(filter="id = 2050", columns=["id"]).column("id").to_pylist() == [2050]
    assert ds.to_table(filter="id = 1234", columns=["id"]).num_rows == 0
    same_rows(query(ns, tid, filter="id >= 1990"), model([i for i in live if i >= 1990]))
