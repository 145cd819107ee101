"""The spec's own Python client, lance-namespace-urllib3-client (generated from the Lance Namespace
spec, the version lance-namespace pins), against `lancecat serve`: every operation it offers
(test_every_operation_is_called checks the list), values checked. Operations lancecat answers with
a spec error are checked for a clean one: the spec's status and JSON error body with its code.
"""

import io
import json
import os

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from importlib.metadata import version

import lance_namespace_urllib3_client as lc
from lance_namespace_urllib3_client import models as m
from lance_namespace_urllib3_client.api import (
    BranchApi,
    DataApi,
    IndexApi,
    MaterializedViewApi,
    MetadataApi,
    NamespaceApi,
    TableApi,
    TagApi,
    TransactionApi,
)
from lance_namespace_urllib3_client.exceptions import ApiException

URL = os.environ.get("LANCECAT_URL", "http://127.0.0.1:2333")
API_KEY = os.environ.get("LANCECAT_E2E_API_KEY", "")
D = "$"  # lancecat's delimiter

CALLED = set()


def client():
    cfg = lc.Configuration(host=URL)
    api = lc.ApiClient(cfg)
    if API_KEY:
        api.set_default_header("x-api-key", API_KEY)
    return api


class Recorder:
    """Wraps an API class and records which operations were called."""

    def __init__(self, api):
        self._api = api

    def __getattr__(self, name):
        fn = getattr(self._api, name)
        CALLED.add(name)
        return fn


_api = client()
ns = Recorder(NamespaceApi(_api))
tb = Recorder(TableApi(_api))
tx = Recorder(TransactionApi(_api))
mv = Recorder(DataApi(_api))


def ipc_stream(tbl):
    sink = io.BytesIO()
    with ipc.new_stream(sink, tbl.schema) as w:
        w.write_table(tbl)
    return sink.getvalue()


def read_ipc(b):
    b = bytes(b)
    try:
        return ipc.open_file(pa.BufferReader(b)).read_all()
    except pa.ArrowInvalid:
        return ipc.open_stream(pa.BufferReader(b)).read_all()


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()), pa.field("vector", pa.list_(pa.float32(), 4))])


def rows(ids, name=lambda i: f"n{i}"):
    return pa.Table.from_pylist([{"id": i, "name": name(i), "vector": [float(i), 1.0, 0.0, float(i % 3)]} for i in ids], schema=SCHEMA)


def spec_error(fn, statuses, code=None):
    """fn fails with one of the spec's statuses and a JSON error body (with code when given)."""
    with pytest.raises(ApiException) as e:
        fn()
    assert e.value.status in statuses, (e.value.status, e.value.body)
    body = json.loads(e.value.body)
    assert isinstance(body.get("code"), int), body
    if code is not None:
        assert body["code"] == code, body
    print(f"answered {e.value.status} code {body['code']}: {body.get('error')}")
    return body


def test_client_is_the_pinned_one():
    assert version("lance-namespace-urllib3-client") == "0.13.0"
    assert version("lance-namespace") == "0.13.0"


def test_namespaces():
    r = ns.create_namespace("spec", m.CreateNamespaceRequest(id=["spec"], properties={"owner": "alice"}), delimiter=D)
    assert r.properties.get("owner") == "alice", r
    ns.create_namespace("spec$child", m.CreateNamespaceRequest(id=["spec", "child"]), delimiter=D)
    spec_error(lambda: ns.create_namespace("spec", m.CreateNamespaceRequest(id=["spec"]), delimiter=D), {409}, code=2)
    ns.create_namespace("spec", m.CreateNamespaceRequest(id=["spec"], mode="exist_ok"), delimiter=D)
    d = ns.describe_namespace("spec", m.DescribeNamespaceRequest(id=["spec"]), delimiter=D)
    assert d.properties.get("owner") == "alice"
    ns.namespace_exists("spec", m.NamespaceExistsRequest(id=["spec"]), delimiter=D)
    spec_error(lambda: ns.namespace_exists("nope", m.NamespaceExistsRequest(id=["nope"]), delimiter=D), {404}, code=1)
    for n in ["b", "c", "d"]:
        ns.create_namespace(f"spec$child{n}", m.CreateNamespaceRequest(id=["spec", "child" + n]), delimiter=D)
    assert ns.list_namespaces("spec", delimiter=D).namespaces == ["child", "childb", "childc", "childd"]
    seen, token = [], None
    while True:
        page = ns.list_namespaces("spec", delimiter=D, limit=3, page_token=token)
        seen += page.namespaces
        token = page.page_token
        if not token:
            break
    assert seen == ["child", "childb", "childc", "childd"]
    ns.drop_namespace("spec$childd", m.DropNamespaceRequest(id=["spec", "childd"]), delimiter=D)
    assert "childd" not in ns.list_namespaces("spec", delimiter=D).namespaces
    spec_error(lambda: ns.drop_namespace("spec$gone", m.DropNamespaceRequest(id=["spec", "gone"]), delimiter=D), {404}, code=1)
    assert "spec" in ns.list_namespaces("$", delimiter=D).namespaces


@pytest.fixture(scope="module")
def items():
    ns.create_namespace("data", m.CreateNamespaceRequest(id=["data"], mode="exist_ok"), delimiter=D)
    r = tb.create_table("data$items", ipc_stream(rows(range(10))), delimiter=D)
    assert r.version == 1, r
    return "data$items"


def test_create_describe_list_exists(items):
    d = tb.describe_table(items, m.DescribeTableRequest(id=["data", "items"]), delimiter=D)
    assert d.version == 1 and d.location, d
    assert [f.name for f in d.var_schema.fields] == ["id", "name", "vector"]
    tb.table_exists(items, m.TableExistsRequest(id=["data", "items"]), delimiter=D)
    spec_error(lambda: tb.table_exists("data$nope", m.TableExistsRequest(id=["data", "nope"]), delimiter=D), {404}, code=4)
    spec_error(lambda: tb.create_table(items, ipc_stream(rows([1])), delimiter=D), {409}, code=5)
    assert ns.list_tables("data", delimiter=D).tables == ["items"]
    assert tb.list_tables("data", delimiter=D).tables == ["items"]
    assert "data$items" in tb.list_all_tables(delimiter=D).tables


def test_insert_count_query(items):
    r = tb.insert_into_table(items, ipc_stream(rows(range(10, 15))), delimiter=D)
    assert r.version == 2, r
    assert tb.count_table_rows(items, m.CountTableRowsRequest(id=["data", "items"]), delimiter=D) == 15
    assert tb.count_table_rows(items, m.CountTableRowsRequest(id=["data", "items"], predicate="id >= 12"), delimiter=D) == 3
    assert tb.count_table_rows(items, m.CountTableRowsRequest(id=["data", "items"], version=1), delimiter=D) == 10
    q = m.QueryTableRequest(
        id=["data", "items"], filter="id < 3", columns=m.QueryTableRequestColumns(column_names=["id", "name"]), k=10,
        vector=m.QueryTableRequestVector(single_vector=[]),
    )
    got = read_ipc(tb.query_table(items, q, delimiter=D))
    assert sorted(got.to_pylist(), key=lambda x: x["id"]) == [{"id": i, "name": f"n{i}"} for i in range(3)]
    v = m.QueryTableRequest(id=["data", "items"], vector=m.QueryTableRequestVector(single_vector=[4.0, 1.0, 0.0, 1.0]), k=2,
                            columns=m.QueryTableRequestColumns(column_names=["id"]))
    near = read_ipc(tb.query_table(items, v, delimiter=D)).to_pylist()
    assert [x["id"] for x in near][0] == 4 and near[0]["_distance"] == pytest.approx(0.0), near
    plan = tb.explain_table_query_plan(items, m.ExplainTableQueryPlanRequest(id=["data", "items"], query=q), delimiter=D)
    assert "id < 3" in str(plan), plan
    analyzed = tb.analyze_table_query_plan(items, m.AnalyzeTableQueryPlanRequest(
        id=["data", "items"], filter="id < 3", k=10, vector=m.QueryTableRequestVector(single_vector=[])), delimiter=D)
    assert "3" in str(analyzed), analyzed


def test_update_delete_merge(items):
    r = tb.update_table(items, m.UpdateTableRequest(id=["data", "items"], predicate="id = 1", updates=[["name", "'one'"]]), delimiter=D)
    assert r.updated_rows == 1, r
    r = tb.delete_from_table(items, m.DeleteFromTableRequest(id=["data", "items"], predicate="id >= 13"), delimiter=D)
    assert tb.count_table_rows(items, m.CountTableRowsRequest(id=["data", "items"]), delimiter=D) == 13
    r = tb.merge_insert_into_table(items, ["id"], ipc_stream(rows([2, 100], name=lambda i: f"m{i}")), delimiter=D,
                                   when_matched_update_all=True, when_not_matched_insert_all=True)
    assert (r.num_updated_rows, r.num_inserted_rows) == (1, 1), r
    got = read_ipc(tb.query_table(items, m.QueryTableRequest(id=["data", "items"], filter="id IN (1, 2, 100)", k=10,
                                                             vector=m.QueryTableRequestVector(single_vector=[]),
                                                             columns=m.QueryTableRequestColumns(column_names=["id", "name"])), delimiter=D))
    assert sorted(got.to_pylist(), key=lambda x: x["id"]) == [{"id": 1, "name": "one"}, {"id": 2, "name": "m2"}, {"id": 100, "name": "m100"}]


def test_columns_and_metadata(items):
    tb.alter_table_add_columns(items, m.AlterTableAddColumnsRequest(id=["data", "items"], new_columns=[m.AddColumnsEntry(name="twice", expression="id * 2")]), delimiter=D)
    tb.alter_table_alter_columns(items, m.AlterTableAlterColumnsRequest(id=["data", "items"], alterations=[m.AlterColumnsEntry(path="twice", rename="double")]), delimiter=D)
    d = tb.describe_table(items, m.DescribeTableRequest(id=["data", "items"]), delimiter=D)
    assert [f.name for f in d.var_schema.fields] == ["id", "name", "vector", "double"]
    tb.update_field_metadata(items, m.UpdateFieldMetadataRequest(id=["data", "items"], updates=[m.UpdateFieldMetadataEntry(path="name", metadata={"unit": "none"})]), delimiter=D)
    tb.update_table_schema_metadata(items, {"owner": "spec"}, delimiter=D)
    d = tb.describe_table(items, m.DescribeTableRequest(id=["data", "items"]), delimiter=D)
    name = next(f for f in d.var_schema.fields if f.name == "name")
    assert (name.metadata or {}).get("unit") == "none", name
    assert (d.var_schema.metadata or {}).get("owner") == "spec", d.var_schema.metadata
    # backfill: recompute a column; lancecat answers it or refuses it with a spec error
    try:
        tb.alter_table_backfill_columns(items, m.AlterTableBackfillColumnsRequest(id=["data", "items"], column="double"), delimiter=D)
    except ApiException as e:
        assert e.status in (400, 404, 406, 501), (e.status, e.body)
        assert isinstance(json.loads(e.body).get("code"), int)
    tb.alter_table_drop_columns(items, m.AlterTableDropColumnsRequest(id=["data", "items"], columns=["double"]), delimiter=D)
    d = tb.describe_table(items, m.DescribeTableRequest(id=["data", "items"]), delimiter=D)
    assert [f.name for f in d.var_schema.fields] == ["id", "name", "vector"]
    st = tb.get_table_stats(items, m.GetTableStatsRequest(id=["data", "items"]), delimiter=D)
    assert st.num_rows == 14, st


def test_indices(items):
    tb.create_table_scalar_index(items, m.CreateTableIndexRequest(id=["data", "items"], column="id", index_type="BTREE"), delimiter=D)
    big = "data$vecs"
    tb.create_table(big, ipc_stream(rows(range(300))), delimiter=D)
    tb.create_table_index(big, m.CreateTableIndexRequest(id=["data", "vecs"], column="vector", index_type="IVF_FLAT", distance_type="l2", num_partitions=2), delimiter=D)
    idx = tb.list_table_indices(items, m.ListTableIndicesRequest(id=["data", "items"]), delimiter=D).indexes
    assert [(i.columns, i.index_name) for i in idx] == [(["id"], "id_idx")], idx
    vidx = tb.list_table_indices(big, m.ListTableIndicesRequest(id=["data", "vecs"]), delimiter=D).indexes
    assert [i.columns for i in vidx] == [["vector"]], vidx
    s = tb.describe_table_index_stats(items, "id_idx", m.DescribeTableIndexStatsRequest(id=["data", "items"]), delimiter=D)
    assert s.num_indexed_rows == 14, s
    tb.drop_table_index(items, "id_idx", delimiter=D)
    assert tb.list_table_indices(items, m.ListTableIndicesRequest(id=["data", "items"]), delimiter=D).indexes == []


def test_versions_tags_restore(items):
    vs = tb.list_table_versions(items, delimiter=D).versions
    nums = [v.version for v in vs]
    assert nums == sorted(nums) and nums[0] == 1, nums
    latest = nums[-1]
    assert [v.version for v in tb.list_table_versions(items, delimiter=D, descending=True).versions] == sorted(nums, reverse=True)
    dv = tb.describe_table_version(items, m.DescribeTableVersionRequest(id=["data", "items"], version=1), delimiter=D)
    assert dv.version.version == 1, dv
    tb.create_table_tag(items, m.CreateTableTagRequest(id=["data", "items"], tag="first", version=1), delimiter=D)
    tb.create_table_tag(items, m.CreateTableTagRequest(id=["data", "items"], tag="second", version=2), delimiter=D)
    spec_error(lambda: tb.create_table_tag(items, m.CreateTableTagRequest(id=["data", "items"], tag="first", version=2), delimiter=D), {409})
    tags = tb.list_table_tags(items, delimiter=D).tags
    assert {k: v.version for k, v in tags.items()} == {"first": 1, "second": 2}, tags
    assert tb.get_table_tag_version(items, m.GetTableTagVersionRequest(id=["data", "items"], tag="second"), delimiter=D).version == 2
    tb.update_table_tag(items, m.UpdateTableTagRequest(id=["data", "items"], tag="second", version=3), delimiter=D)
    assert tb.get_table_tag_version(items, m.GetTableTagVersionRequest(id=["data", "items"], tag="second"), delimiter=D).version == 3
    tb.delete_table_tag(items, m.DeleteTableTagRequest(id=["data", "items"], tag="second"), delimiter=D)
    assert list(tb.list_table_tags(items, delimiter=D).tags) == ["first"]
    d = tb.describe_table(items, m.DescribeTableRequest(id=["data", "items"], tag="first"), delimiter=D)
    assert d.version == 1
    tb.restore_table(items, m.RestoreTableRequest(id=["data", "items"], version=1), delimiter=D)
    assert tb.count_table_rows(items, m.CountTableRowsRequest(id=["data", "items"]), delimiter=D) == 10
    assert tb.describe_table(items, m.DescribeTableRequest(id=["data", "items"]), delimiter=D).version == latest + 1


def test_branches(items):
    tb.create_table_branch(items, m.CreateTableBranchRequest(id=["data", "items"], name="dev", from_version=1), delimiter=D)
    br = tb.list_table_branches(items, delimiter=D).branches
    assert "dev" in br, br
    tb.insert_into_table(items, ipc_stream(rows([500])), delimiter=D, branch="dev")
    assert tb.count_table_rows(items, m.CountTableRowsRequest(id=["data", "items"], branch="dev"), delimiter=D) == 11
    assert tb.count_table_rows(items, m.CountTableRowsRequest(id=["data", "items"], predicate="id = 500"), delimiter=D) == 0
    tb.delete_table_branch(items, m.DeleteTableBranchRequest(id=["data", "items"], name="dev"), delimiter=D)
    assert "dev" not in tb.list_table_branches(items, delimiter=D).branches


def test_declare_register_rename_deregister_drop():
    ns.create_namespace("life", m.CreateNamespaceRequest(id=["life"]), delimiter=D)
    dec = tb.declare_table("life$declared", m.DeclareTableRequest(id=["life", "declared"]), delimiter=D)
    assert dec.location, dec
    assert tb.list_tables("life", delimiter=D, include_declared=True).tables == ["declared"]
    tb.create_table("life$t", ipc_stream(rows([1, 2])), delimiter=D)
    loc = tb.describe_table("life$t", m.DescribeTableRequest(id=["life", "t"]), delimiter=D).location
    tb.rename_table("life$t", m.RenameTableRequest(id=["life", "t"], new_table_name="t2"), delimiter=D)
    assert tb.count_table_rows("life$t2", m.CountTableRowsRequest(id=["life", "t2"]), delimiter=D) == 2
    spec_error(lambda: tb.describe_table("life$t", m.DescribeTableRequest(id=["life", "t"]), delimiter=D), {404}, code=4)
    loc = tb.describe_table("life$t2", m.DescribeTableRequest(id=["life", "t2"]), delimiter=D).location
    tb.deregister_table("life$t2", m.DeregisterTableRequest(id=["life", "t2"]), delimiter=D)
    spec_error(lambda: tb.describe_table("life$t2", m.DescribeTableRequest(id=["life", "t2"]), delimiter=D), {404}, code=4)
    r = tb.register_table("life$back", m.RegisterTableRequest(id=["life", "back"], location=loc), delimiter=D)
    assert tb.count_table_rows("life$back", m.CountTableRowsRequest(id=["life", "back"]), delimiter=D) == 2, r
    tb.drop_table("life$back", delimiter=D)
    spec_error(lambda: tb.drop_table("life$back", delimiter=D), {404}, code=4)


def test_version_commits():
    """create_table_version / batch_create_table_versions / batch_delete_table_versions /
    batch_commit_tables: the managed-versioning commit path; called with a manifest that does not
    exist, they must refuse it with a spec error, never record it."""
    ns.create_namespace("ver", m.CreateNamespaceRequest(id=["ver"]), delimiter=D)
    tb.create_table("ver$t", ipc_stream(rows([1])), delimiter=D)
    loc = tb.describe_table("ver$t", m.DescribeTableRequest(id=["ver", "t"]), delimiter=D).location
    bogus = loc.rstrip("/") + "/_versions/18446744073709551613.manifest-0b1c2d3e-0000-4000-8000-000000000000"
    spec_error(lambda: tb.create_table_version("ver$t", m.CreateTableVersionRequest(id=["ver", "t"], version=2, manifest_path=bogus), delimiter=D), {400, 404, 409})
    spec_error(lambda: tb.batch_create_table_versions(m.BatchCreateTableVersionsRequest(entries=[
        m.CreateTableVersionEntry(id=["ver", "t"], version=2, manifest_path=bogus)]), delimiter=D), {400, 404, 409})
    try:
        r = tb.batch_delete_table_versions("ver$t", m.BatchDeleteTableVersionsRequest(id=["ver", "t"], ranges=[m.VersionRange(start_version=50, end_version=60)]), delimiter=D)
        assert (r.deleted_count or 0) == 0, r
    except ApiException as e:
        assert e.status in (400, 404, 409), (e.status, e.body)
    spec_error(lambda: tb.batch_commit_tables(m.BatchCommitTablesRequest(operations=[m.CommitTableOperation(
        create_table_version=m.CreateTableVersionRequest(id=["ver", "t"], version=2, manifest_path=bogus))]), delimiter=D), {400, 404, 409})
    assert tb.describe_table("ver$t", m.DescribeTableRequest(id=["ver", "t"]), delimiter=D).version == 1


def test_transactions_and_materialized_views():
    """Operations lancecat answers with a spec error when there is nothing to act on: an unknown
    transaction, a materialized view over a missing source."""
    spec_error(lambda: tx.describe_transaction("nope", m.DescribeTransactionRequest(id=["nope"]), delimiter=D), {400, 404, 406, 501})
    spec_error(lambda: tx.alter_transaction("nope", m.AlterTransactionRequest(id=["nope"], actions=[
        m.AlterTransactionAction(set_status_action=m.AlterTransactionSetStatus(status="ABORTED"))]), delimiter=D), {400, 404, 406, 501})
    spec_error(lambda: mv.refresh_materialized_view("nope$mv", delimiter=D, refresh_materialized_view_request=m.RefreshMaterializedViewRequest(id=["nope", "mv"])), {400, 404, 406, 501})
    spec_error(lambda: mv.create_materialized_view("nope$mv", m.CreateMaterializedViewRequest(
        id=["nope", "mv"], kind="query", source_query="SELECT * FROM missing", output_schema="{}"), delimiter=D), {400, 404, 406, 501})


def test_every_operation_is_called():
    offered = set()
    for cls in [NamespaceApi, TableApi, TagApi, TransactionApi, IndexApi, DataApi, MetadataApi, BranchApi, MaterializedViewApi]:
        for name in dir(cls):
            if name.startswith("_") or name.endswith(("_with_http_info", "_without_preload_content")):
                continue
            if callable(getattr(cls, name)):
                offered.add(name)
    assert len(offered) == 54, sorted(offered)
    assert offered - CALLED == set(), sorted(offered - CALLED)
