"""The Python LanceDB SDK against `lancecat serve`, value-checked against a model of each table, in
the mode LANCECAT_E2E_MODE names (conftest.py): namespace mode (connect_namespace("rest"): the
catalog places tables, the SDK reads and writes their data itself) or remote mode (connect("db://",
host_override=...): lancecat executes every operation). Each test is one case the Go test reports.
"""

import asyncio
import datetime
import json
import urllib.request

import lancedb
import pandas as pd
import pyarrow as pa
import pytest
from lancedb.pydantic import LanceModel, Vector

from conftest import (
    API_KEY,
    AUTHZ,
    MODE,
    ROOT,
    SDK,
    URL,
    close,
    connect,
    cosd,
    l2,
    ns_kw,
    ns_properties,
    row,
    table_of,
)


def ids(rows):
    return [r["id"] for r in rows]


def test_sdk_version():
    # What the Go test reports: the SDK under test is the pinned one.
    print("lancedb", lancedb.__version__, "mode", MODE)
    assert lancedb.__version__ in ("0.40.0", "0.30.2")


def test_create_open_schema(db, model):
    t = db.create_table("created", table_of(model))
    with pytest.raises(Exception, match="already exists"):
        db.create_table("created", table_of([row(1)]))
    t2 = connect().open_table("created")
    assert [(f.name, str(f.type)) for f in t2.schema] == [
        ("id", "int64"),
        ("grp", "int32"),
        ("name", "string"),
        ("vector", "fixed_size_list<item: float>[16]"),
    ]
    assert t2.version == 1
    assert t2.count_rows() == 512
    assert "created" in db.table_names()


def test_counts_and_add(items, model):
    assert items.count_rows() == 512
    assert items.count_rows("grp = 3") == sum(1 for r in model if r["grp"] == 3)
    assert items.count_rows("grp = 3 AND id > 100") == sum(1 for r in model if r["grp"] == 3 and r["id"] > 100)
    v0 = items.version
    items.add([row(600 + i) for i in range(10)])
    assert items.count_rows() == 522
    assert items.version == v0 + 1
    # A DataFrame is data too.
    items.add(pd.DataFrame([row(700)]))
    assert items.count_rows("id = 700") == 1


def test_query_where_select_limit_offset(items, model):
    got = items.search().where("grp = 2").select(["id", "name"]).limit(5).to_list()
    want = [{"id": r["id"], "name": r["name"]} for r in model if r["grp"] == 2][:5]
    assert got == want
    page = items.search().select(["id"]).limit(5).offset(10).to_list()
    assert ids(page) == [10, 11, 12, 13, 14]
    assert items.search().where("id < 0").to_list() == []
    everything = items.search().limit(10_000).to_arrow()
    assert everything.num_rows == 512
    assert sorted(everything["id"].to_pylist()) == list(range(512))


def test_to_arrow_and_to_pandas(items, model):
    if MODE == "remote":
        # The SDK's remote table has no whole-table to_arrow/to_pandas ("not yet supported on
        # LanceDB cloud"): a query without a filter is how remote users read a table whole.
        with pytest.raises(NotImplementedError):
            items.to_arrow()
        whole = items.search().limit(10_000)
    else:
        whole = items
    tbl = whole.to_arrow()
    assert isinstance(tbl, pa.Table)
    assert tbl.num_rows == 512
    assert tbl.schema.field("vector").type == pa.list_(pa.float32(), 16)
    rows = sorted(tbl.to_pylist(), key=lambda r: r["id"])
    assert [r["vector"] for r in rows[:3]] == [m["vector"] for m in model[:3]]
    df = whole.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 512
    assert list(df.columns)[:4] == ["id", "grp", "name", "vector"]
    assert df.sort_values("id")["name"].tolist()[:3] == ["n0", "n1", "n2"]
    q = items.search().where("grp = 4").select(["id", "grp"]).limit(10_000).to_pandas()
    assert q["grp"].unique().tolist() == [4]
    assert sorted(q["id"].tolist()) == [r["id"] for r in model if r["grp"] == 4]


def test_vector_search_l2_cosine_prefilter(items, model):
    q = [x + 0.01 for x in model[42]["vector"]]
    got = items.search(q).limit(5).to_list()
    want = sorted(model, key=lambda r: (l2(r["vector"], q), r["id"]))[:5]
    assert ids(got) == ids(want)
    for g, w in zip(got, want):
        assert close(g["_distance"], l2(w["vector"], q)), (g["_distance"], l2(w["vector"], q))
    dists = [g["_distance"] for g in got]
    assert dists == sorted(dists)
    cos = items.search(q).distance_type("cosine").where("grp = 1", prefilter=True).limit(5).to_list()
    want_cos = sorted((r for r in model if r["grp"] == 1), key=lambda r: (cosd(r["vector"], q), r["id"]))[:5]
    assert ids(cos) == ids(want_cos)
    for g, w in zip(cos, want_cos):
        assert close(g["_distance"], cosd(w["vector"], q))
    post = items.search(q).where("grp = 1", prefilter=False).limit(5).to_list()
    top5 = ids(want)
    assert all(r["grp"] == 1 and r["id"] in top5 for r in post)
    df = items.search(q).limit(3).to_pandas()
    assert df["id"].tolist() == ids(want)[:3]


def test_full_text_search(db):
    docs = [
        {"id": 1, "text": "the quick brown fox"},
        {"id": 2, "text": "lazy dogs sleep all day"},
        {"id": 3, "text": "a quick brown dog jumps"},
        {"id": 4, "text": "nothing to see here"},
    ]
    t = db.create_table("docs", docs)
    t.create_fts_index("text")
    idx = {i.name: i for i in t.list_indices()}
    assert any("text" in i.columns for i in idx.values()), idx
    got = t.search("quick", query_type="fts").select(["id", "text"]).limit(10).to_list()
    assert sorted(ids(got)) == [1, 3]
    assert all(r["_score"] > 0 for r in got)
    got = t.search("lazy", query_type="fts").limit(10).to_list()
    assert ids(got) == [2]
    got = t.search("quick", query_type="fts").where("id > 1").limit(10).to_list()
    assert ids(got) == [3]


def test_update_and_delete(items, model):
    items.update(where="id = 5", values={"name": "five"})
    assert items.search().where("id = 5").select(["name"]).to_list() == [{"name": "five"}]
    g0 = sum(1 for r in model if r["grp"] == 0)
    items.update(where="grp = 0", values_sql={"grp": "grp + 100"})
    assert items.count_rows("grp = 100") == g0
    assert items.count_rows("grp = 0") == 0
    items.delete("id >= 500 AND id < 512")
    assert items.count_rows() == 500
    assert items.count_rows("id >= 500") == 0


def test_merge_insert_variants(db):
    t = db.create_table("merges", table_of([row(i) for i in range(5)]))
    r = t.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        table_of([row(1, name="one!"), row(9)])
    )
    if r is not None and hasattr(r, "num_inserted_rows"):
        assert (r.num_inserted_rows, r.num_updated_rows) == (1, 1), r
    got = sorted(t.search().select(["id", "name"]).to_list(), key=lambda x: x["id"])
    assert got == [{"id": i, "name": n} for i, n in [(0, "n0"), (1, "one!"), (2, "n2"), (3, "n3"), (4, "n4"), (9, "n9")]]
    # insert-if-not-exists keeps the matches as they are.
    t.merge_insert("id").when_not_matched_insert_all().execute(table_of([row(3, name="x"), row(10)]))
    assert t.search().where("id = 3").select(["name"]).to_list() == [{"name": "n3"}]
    assert t.count_rows() == 7
    # a conditional update touches only the matches the condition holds for.
    t.merge_insert("id").when_matched_update_all(where="source.grp > 1").execute(
        table_of([row(1, name="a"), row(2, name="b")])
    )
    got = {x["id"]: x["name"] for x in t.search().where("id IN (1, 2)").select(["id", "name"]).to_list()}
    assert got == {1: "one!", 2: "b"}
    # by-source delete: only the source's rows remain.
    t.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().when_not_matched_by_source_delete().execute(
        table_of([row(1), row(2)])
    )
    assert sorted(ids(t.search().select(["id"]).to_list())) == [1, 2]


def test_schema_evolution(items):
    items.add_columns({"double_id": "id * 2"})
    got = items.search().where("id < 3").select(["id", "double_id"]).to_list()
    assert got == [{"id": 0, "double_id": 0}, {"id": 1, "double_id": 2}, {"id": 2, "double_id": 4}]
    items.alter_columns({"path": "double_id", "rename": "did"})
    items.alter_columns({"path": "grp", "data_type": pa.int64()})
    names = items.schema.names
    assert "did" in names and "double_id" not in names
    assert items.schema.field("grp").type == pa.int64()
    assert items.search().where("id = 3").select(["grp", "did"]).to_list() == [{"grp": 3, "did": 6}]
    items.drop_columns(["did"])
    assert "did" not in items.schema.names
    assert items.count_rows() == 512


def test_indices(db):
    rows = [{"id": i, "cat": f"c{i % 4}", "vector": [float(v) for v in row(i)["vector"][:8]]} for i in range(300)]
    t = db.create_table("vecs", rows)
    t.create_scalar_index("id")
    t.create_scalar_index("cat", index_type="BITMAP")
    t.create_index(metric="l2", num_partitions=2, num_sub_vectors=2, vector_column_name="vector")
    if hasattr(t, "wait_for_index"):
        names = [i.name for i in t.list_indices()]
        t.wait_for_index(names, timeout=datetime.timedelta(seconds=120))
    by_col = {tuple(i.columns): i for i in t.list_indices()}
    assert set(by_col) == {("id",), ("cat",), ("vector",)}, by_col
    assert str(by_col[("id",)].index_type).upper().startswith("BTREE"), by_col[("id",)]
    assert "BITMAP" in str(by_col[("cat",)].index_type).upper()
    assert "PQ" in str(by_col[("vector",)].index_type).upper()
    hit = t.search(rows[42]["vector"]).limit(1).refine_factor(10).to_list()
    assert hit[0]["id"] == 42
    assert t.count_rows("id = 7") == 1
    assert t.search().where("cat = 'c1'").select(["id"]).limit(1000).to_list() == [{"id": i} for i in range(1, 300, 4)]
    stats = t.index_stats(by_col[("id",)].name)
    assert stats is not None and stats.num_indexed_rows == 300, stats
    t.drop_index(by_col[("cat",)].name)
    assert {tuple(i.columns) for i in t.list_indices()} == {("id",), ("vector",)}


def test_versions_checkout_restore(items):
    items.add([row(600)])  # version 2
    items.delete("id = 0")  # version 3
    versions = items.list_versions()
    nums = [v["version"] if isinstance(v, dict) else v.version for v in versions]
    assert nums == sorted(nums) and nums[-1] == items.version == 3, nums
    items.checkout(1)
    assert items.version == 1
    assert items.count_rows() == 512
    assert items.count_rows("id = 600") == 0
    with pytest.raises(Exception):
        items.add([row(7000)])
    items.checkout_latest()
    assert items.count_rows() == 512  # 512 + 600 - 0
    items.restore(2)
    assert items.version == 4
    assert items.count_rows() == 513
    assert items.count_rows("id = 0") == 1
    items.add([row(7001)])
    assert items.count_rows() == 514


def test_tags(items):
    items.add([row(600)])
    items.tags.create("v1", 1)
    items.tags.create("v2", 2)
    tags = items.tags.list()
    assert tags["v1"]["version"] == 1 if isinstance(tags["v1"], dict) else tags["v1"].version == 1, tags
    assert items.tags.get_version("v2") == 2
    with pytest.raises(Exception):
        items.tags.create("v1", 2)
    items.checkout("v1")
    assert items.count_rows() == 512
    items.checkout_latest()
    items.tags.update("v1", 2)
    assert items.tags.get_version("v1") == 2
    items.tags.delete("v2")
    assert "v2" not in items.tags.list()


def test_branches(items):
    if not hasattr(items, "branches"):
        pytest.skip(f"lancedb {lancedb.__version__} has no Table.branches (added later)")
    items.add([row(600)])  # version 2: the branch forks from version 1
    dev = items.branches.create("dev", from_version=1)
    assert "dev" in items.branches.list()
    assert dev.count_rows() == 512
    dev.add([row(900)])
    assert dev.count_rows() == 513 and dev.count_rows("id = 900") == 1
    assert items.count_rows() == 513 and items.count_rows("id = 900") == 0
    again = connect().open_table(items.name).branches.checkout("dev")
    assert again.count_rows("id = 900") == 1 and again.count_rows("id = 600") == 0
    items.branches.delete("dev")
    assert "dev" not in items.branches.list()


def test_rename_and_drop(db):
    db.create_table("before", table_of([row(1), row(2)]))
    if MODE == "namespace" and SDK < (0, 40):
        # The older line's namespace connection refuses renames itself, before any request.
        with pytest.raises(NotImplementedError, match="rename_table is not supported"):
            db.rename_table("before", "after")
        db.create_table("after", table_of([row(1), row(2)]))
        db.drop_table("before")
    else:
        db.rename_table("before", "after")
    names = list(db.table_names())
    assert "after" in names and "before" not in names
    assert connect().open_table("after").count_rows() == 2
    db.drop_table("after")
    assert "after" not in list(db.table_names())
    with pytest.raises(Exception, match="(?i)not found|does not exist"):
        connect().open_table("after")


def test_namespaces(db):
    db.create_namespace(["prod"], properties={"owner": "alice"})
    db.create_namespace(["prod", "team"])
    with pytest.raises(Exception, match="(?i)already exists"):
        db.create_namespace(["prod"])
    db.create_namespace(["prod"], mode="exist_ok")
    d = db.describe_namespace(["prod"])
    if MODE == "namespace":
        assert (d.properties or {}).get("owner") == "alice", d
    for n in ["a1", "a2", "a3"]:
        db.create_namespace([n])
    listed = db.list_namespaces(**ns_kw(db, []))
    names = listed.namespaces if hasattr(listed, "namespaces") else list(listed)
    assert sorted(names) == ["a1", "a2", "a3", "prod"], names
    child = db.list_namespaces(**ns_kw(db, ["prod"]))
    assert list(child.namespaces if hasattr(child, "namespaces") else child) == ["team"]
    t = db.create_table("inner", table_of([row(1), row(2)]), **ns_kw(db, ["prod", "team"]))
    assert t.count_rows() == 2
    assert list(db.table_names(**ns_kw(db, ["prod", "team"]))) == ["inner"]
    assert db.open_table("inner", **ns_kw(db, ["prod", "team"])).count_rows("id = 2") == 1
    # the catalog answers the table's place: the same table by a second client
    other = connect().open_table("inner", **ns_kw(db, ["prod", "team"]))
    other.add([row(3)])
    assert t.count_rows() == 3 or db.open_table("inner", **ns_kw(db, ["prod", "team"])).count_rows() == 3
    with pytest.raises(Exception):
        db.drop_namespace(["prod", "team"])  # not empty
    db.drop_table("inner", **ns_kw(db, ["prod", "team"]))
    db.drop_namespace(["prod", "team"])
    child = db.list_namespaces(**ns_kw(db, ["prod"]))
    assert list(child.namespaces if hasattr(child, "namespaces") else child) == []


# Remote mode lists the root with GET /v1/table/ (tableNames): the root's own tables by name,
# never a child namespace's as "ns$t" (the SDK refuses such a name: ValueError).
def test_root_listing_with_nested_tables(db):
    db.create_namespace(["nest"])
    db.create_table("deep", table_of([row(1)]), **ns_kw(db, ["nest"]))
    db.create_table("shallow", table_of([row(1)]))
    names = list(db.table_names(limit=1000))
    assert "shallow" in names and "deep" not in names and "nest$deep" not in names, names


def test_create_modes(db):
    db.create_table("modes", table_of([row(1)]))
    if MODE == "namespace" and SDK < (0, 40):
        # The older line's namespace connection declares the table before it looks at exist_ok,
        # so the catalog's TableAlreadyExists (409, as the spec has DeclareTable answer) reaches
        # the caller: an SDK bug fixed in the newer line, checked here so a change is noticed.
        with pytest.raises(Exception, match="already exists"):
            db.create_table("modes", table_of([row(5), row(6)]), exist_ok=True)
        kept = db.open_table("modes")
    else:
        kept = db.create_table("modes", table_of([row(5), row(6)]), exist_ok=True)
    assert kept.count_rows() == 1
    over = db.create_table("modes", table_of([row(5), row(6)]), mode="overwrite")
    assert over.count_rows() == 2
    assert sorted(ids(over.search().select(["id"]).to_list())) == [5, 6]
    empty = db.create_table("empty", schema=table_of([]).schema)
    assert empty.count_rows() == 0
    empty.add(table_of([row(1), row(2)]))
    assert empty.count_rows() == 2
    empty.add(table_of([row(3)]), mode="overwrite")
    assert ids(empty.search().select(["id"]).to_list()) == [3]


def test_table_names_paging(db):
    db.create_namespace(["paged"])
    at = ns_kw(db, ["paged"])
    for n in ["p1", "p2", "p3"]:
        db.create_table(n, table_of([row(1)]), **at)
    assert list(db.table_names(limit=2, **at)) == ["p1", "p2"]
    assert list(db.table_names(page_token="p1", limit=1, **at)) == ["p2"]
    assert list(db.table_names(page_token="p2", **at)) == ["p3"]


class Item(LanceModel):
    id: int
    name: str
    price: float
    vector: Vector(4)


def test_pydantic_schema(db):
    t = db.create_table("pyd", schema=Item)
    assert t.schema.field("vector").type == pa.list_(pa.float32(), 4)
    assert t.schema.field("price").type == pa.float64()
    t.add([Item(id=1, name="kettle", price=20.5, vector=[1, 0, 0, 0]), Item(id=2, name="mug", price=4.0, vector=[0, 1, 0, 0])])
    got = t.search([0.9, 0.1, 0, 0]).limit(1).to_pydantic(Item)
    assert isinstance(got[0], Item) and got[0].name == "kettle" and got[0].price == 20.5
    assert t.search().where("price < 10").to_pydantic(Item)[0].name == "mug"


def test_timestamps_round_trip(db):
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("at", pa.timestamp("us", tz="UTC")), pa.field("x", pa.float64())])
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    db.create_table("typed", pa.Table.from_pylist([{"id": 1, "at": when, "x": 0.5}], schema=schema))
    t = connect().open_table("typed")
    assert t.schema.field("at").type == pa.timestamp("us", tz="UTC")
    got = t.search().to_list()[0]
    assert got["at"] == when and got["x"] == 0.5


def test_async_connection(model):
    async def run():
        if MODE == "namespace":
            db = lancedb.connect_namespace_async("rest", ns_properties())
        else:
            db = await lancedb.connect_async("db://lancecat", api_key=API_KEY or "python-e2e", host_override=URL)
        await db.create_namespace(["async_ns"])
        at = ns_kw(db, ["async_ns"])
        t = await db.create_table("async_items", table_of(model[:100]), **at)
        assert await t.count_rows() == 100
        await t.add(table_of([row(1000)]))
        assert await t.count_rows("id = 1000") == 1
        got = await t.query().where("grp = 3").select(["id"]).limit(3).to_list()
        assert ids(got) == [3, 10, 17]
        near = await t.vector_search(model[7]["vector"]).limit(1).to_list()
        assert near[0]["id"] == 7 and close(near[0]["_distance"], 0.0)
        await t.update(updates={"name": "seven"}, where="id = 7")
        assert (await t.query().where("id = 7").select(["name"]).to_list()) == [{"name": "seven"}]
        await t.delete("id >= 50")
        assert await t.count_rows() == 50
        assert list(await db.table_names(**at)) == ["async_items"]
        again = await db.open_table("async_items", **at)
        assert await again.count_rows() == 50
        await db.drop_table("async_items", **at)
        assert list(await db.table_names(**at)) == []

    asyncio.run(run())


def test_authorization():
    if not AUTHZ:
        pytest.skip("authorization is off in this cell (the authz-on cells check refusals)")
    # A wrong key is refused, by the catalog, before anything is read or written.
    with pytest.raises(Exception, match="(?i)401|403|unauthori[sz]ed|forbidden|api key|permission|denied"):
        bad = connect(key="lck_not_a_key")
        list(bad.table_names())
        bad.create_table("never", table_of([row(1)]))
    with pytest.raises(Exception, match="(?i)not found|does not exist"):
        connect().open_table("never")


def test_s3_locations():
    if not ROOT.startswith("s3://") or MODE != "namespace":
        pytest.skip("a namespace-mode check of S3 table locations (this cell is not one)")
    t = connect().create_table("placed", table_of([row(1), row(2)]))
    assert t.count_rows() == 2
    # What the catalog told the SDK: a location under the root, connection hints, no secrets.
    req = urllib.request.Request(
        URL + "/v1/table/placed/describe", data=b"{}", method="POST",
        headers={"content-type": "application/json", **({"x-api-key": API_KEY} if API_KEY else {})},
    )
    d = json.load(urllib.request.urlopen(req))
    assert d["location"].startswith(ROOT + "/"), d["location"]
    so = d.get("storage_options") or {}
    assert so.get("aws_endpoint") and so.get("allow_http") == "true", so
    assert not ({"aws_access_key_id", "aws_secret_access_key", "aws_session_token"} & set(so)), sorted(so)
