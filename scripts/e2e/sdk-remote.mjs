// End-to-end check of lancecat with the official LanceDB Node SDK in REMOTE mode
// (lancedb.connect("db://…", {apiKey, hostOverride}): every data operation goes to lancecat's REST
// routes), value-checked against a model of the table; then cross-client: a namespace-mode client
// (connectNamespace("rest")) reads exactly what remote mode wrote, and remote mode writes (insert,
// update, merge) into a table the namespace-mode SDK created (file format 2.2 with 0.39), which the
// namespace-mode SDK then reads. Exits non-zero on the first failure.
//
// Index checks are left out (indices are the next issue). Covers lancedb-remote-client.md §9 core
// (minus indexes) and extended (minus FTS and the BITMAP index).
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-remote.mjs <catalog url>
// env:   LANCECAT_E2E_API_KEY   the API key remote mode sends (x-api-key); with authorization on,
//                               an estate admin's key. Default: a placeholder (the SDK needs one).
//        LANCECAT_E2E_AUTHZ=1   the catalog runs with authorization on
//        AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
//                               the namespace-mode client's own S3 credentials (an S3 root)
import { counter } from "../lib/checks.mjs";
import { loadSDK } from "../lib/sdk.mjs";
const { lancedb, arrow, version: sdkVersion } = loadSDK(process.env.LANCEDB_DIR);

const [uri] = process.argv.slice(2);
const apiKey = process.env.LANCECAT_E2E_API_KEY || "remote-e2e";
const authorized = process.env.LANCECAT_E2E_AUTHZ === "1";
const { ok, fails, step, count } = counter();
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const close = (a, b, eps = 1e-3) => Math.abs(a - b) <= eps * Math.max(1, Math.abs(b));

const remote = () =>
  lancedb.connect("db://lancecat", {
    apiKey,
    hostOverride: uri,
    clientConfig: { retryConfig: { retries: 3 } },
  });
const headers = authorized ? { "x-api-key": apiKey } : {};
const nsClient = () => lancedb.connectNamespace("rest", Object.keys(headers).length ? { uri, headers } : { uri });

// The model: 512 rows of id Int64, grp Int32, name Utf8, vector FixedSizeList<Float32>[16].
const DIM = 16;
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("grp", new arrow.Int32(), true),
  new arrow.Field("name", new arrow.Utf8(), true),
  new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), true),
]);
const f32 = (x) => Math.fround(x);
const vec = (id) => Array.from({ length: DIM }, (_, j) => f32(Math.sin((id + 1) * (j + 1) * 0.37)));
const mkrow = (id, over = {}) => ({ id, grp: id % 7, name: "n" + id, vector: vec(id), ...over });
const table = (rows) =>
  lancedb.makeArrowTable(
    rows.map((r) => ({ ...r, id: BigInt(r.id) })),
    { schema },
  );
// Rows as the SDK returns them, normalized (bigints, vectors) for comparison.
const norm = (r) => {
  const o = {};
  for (const [k, v] of Object.entries(r)) {
    if (typeof v === "bigint") o[k] = Number(v);
    else if (v && typeof v === "object" && typeof v.toArray === "function") o[k] = Array.from(v.toArray());
    else if (ArrayBuffer.isView(v)) o[k] = Array.from(v);
    else o[k] = v;
  }
  return o;
};
const rowsOf = async (q) => (await q.toArray()).map(norm);
const byId = (a, b) => a.id - b.id;
const l2 = (a, b) => a.reduce((s, x, i) => s + (x - b[i]) * (x - b[i]), 0);
const cosd = (a, b) => {
  let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) (d += a[i] * b[i]), (na += a[i] * a[i]), (nb += b[i] * b[i]);
  return 1 - d / Math.sqrt(na * nb);
};

let model = Array.from({ length: 512 }, (_, i) => mkrow(i));
const db = await remote();

step(`core: create and open (SDK ${sdkVersion})`);
let t = await db.createTable("items", table(model));
await fails(() => db.createTable("items", table([mkrow(1)])), "Table 'items' already exists", "duplicate create");
{
  const fresh = await remote();
  const t2 = await fresh.openTable("items");
  const s = await t2.schema();
  ok(
    same(
      s.fields.map((f) => `${f.name}:${f.type}`),
      ["id:Int64", "grp:Int32", "name:Utf8", "vector:FixedSizeList[16]<Float32>"],
    ),
    "schema round trip: " + s.fields.map((f) => `${f.name}:${f.type}`),
  );
  ok((await t2.version()) === 1, "version() after create");
}

step("core: counts and add");
const cnt = (pred) => model.filter(pred).length;
ok((await t.countRows()) === 512, "countRows()");
ok((await t.countRows("grp = 3")) === cnt((r) => r.grp === 3), "countRows(grp = 3)");
ok((await t.countRows("grp = 3 AND id > 100")) === cnt((r) => r.grp === 3 && r.id > 100), "compound filter");
{
  const v0 = await t.version();
  const added = Array.from({ length: 10 }, (_, i) => mkrow(600 + i));
  const res = await t.add(table(added));
  model = model.concat(added);
  ok((await t.countRows()) === 522, "count after add");
  ok((await t.version()) === v0 + 1, "version bump after add");
  if (res && res.version !== undefined) ok(res.version === v0 + 1, "add result version " + JSON.stringify(res));
}

step("core: queries");
{
  const got = await rowsOf(t.query().where("grp = 2").select(["id", "name"]).limit(5));
  const want = model.filter((r) => r.grp === 2).slice(0, 5).map((r) => ({ id: r.id, name: r.name }));
  ok(same(got, want), "where+select+limit: " + JSON.stringify(got));
  ok(got.length && same(Object.keys(got[0]), ["id", "name"]), "exact columns");
  const all = await rowsOf(t.query());
  ok(all.length === 522, "a query without limit returns every row: " + all.length);
  ok(same(all.map((r) => r.id), model.map((r) => r.id)), "every row, in order");
  ok(same(all[7].vector.map(f32), model[7].vector), "vector values");
  ok((await rowsOf(t.query().where("id < 0"))).length === 0, "empty result");
  const page = await rowsOf(t.query().select(["id"]).limit(5).offset(10));
  ok(same(page.map((r) => r.id), [10, 11, 12, 13, 14]), "limit+offset: " + JSON.stringify(page));
  const aliased = await rowsOf(t.query().where("id < 3").select({ id2: "id * 2", nm: "upper(name)" }));
  ok(same(aliased, [{ id2: 0, nm: "N0" }, { id2: 2, nm: "N1" }, { id2: 4, nm: "N2" }]), "select {alias: sql}: " + JSON.stringify(aliased));
}

step("core: vector search");
{
  const q = vec(42).map((x) => x + 0.01);
  const got = await rowsOf(t.vectorSearch(q).limit(5));
  const want = model.map((r) => ({ id: r.id, d: l2(r.vector, q) })).sort((a, b) => a.d - b.d || a.id - b.id).slice(0, 5);
  ok(same(got.map((r) => r.id), want.map((w) => w.id)), "l2 ids in order: " + JSON.stringify(got.map((r) => r.id)));
  ok(got.every((r, i) => close(r._distance, want[i].d)), "l2 _distance is the squared distance");
  ok(got.every((r, i) => i === 0 || r._distance >= got[i - 1]._distance), "ascending _distance");
  const cos = await rowsOf(t.vectorSearch(q).distanceType("cosine").where("grp = 1").limit(5));
  const wantCos = model
    .filter((r) => r.grp === 1)
    .map((r) => ({ id: r.id, d: cosd(r.vector, q) }))
    .sort((a, b) => a.d - b.d || a.id - b.id)
    .slice(0, 5);
  ok(same(cos.map((r) => r.id), wantCos.map((w) => w.id)), "cosine with prefilter: " + JSON.stringify(cos.map((r) => r.id)));
  ok(cos.every((r, i) => close(r._distance, wantCos[i].d)), "cosine _distance");
  // Two query vectors: with phalanx-version 0.1.0 the client sends one request per vector and
  // merges them, tagging each row with its query_index.
  const q2 = vec(7);
  const multi = await rowsOf(t.query().nearestTo(q).addQueryVector(q2).select(["id"]).limit(2));
  const want2 = model.map((r) => ({ id: r.id, d: l2(r.vector, q2) })).sort((a, b) => a.d - b.d || a.id - b.id).slice(0, 2);
  const byQuery = (i) => multi.filter((r) => r.query_index === i).map((r) => r.id);
  ok(same(byQuery(0), want.slice(0, 2).map((w) => w.id)) && same(byQuery(1), want2.map((w) => w.id)), "multiple query vectors: " + JSON.stringify(multi));
  const post = await rowsOf(t.vectorSearch(q).where("grp = 1").postfilter().limit(5));
  const top5 = want.map((w) => w.id);
  ok(post.every((r) => r.grp === 1 && top5.includes(r.id)), "postfilter filters the top-k: " + JSON.stringify(post.map((r) => r.id)));
}

step("plans");
{
  const plan = await t.query().where("grp = 2").select(["id"]).explainPlan(true);
  ok(typeof plan === "string" && plan.includes("grp = 2"), "explainPlan names the filter: " + plan);
  const vplan = await t.vectorSearch(vec(1)).limit(3).explainPlan();
  ok(/knn|KNN|distance|vector/i.test(vplan), "explainPlan of a vector search: " + vplan);
  const analyzed = await t.query().where("grp = 2").analyzePlan();
  ok(typeof analyzed === "string" && analyzed.includes(String(cnt((r) => r.grp === 2))), "analyzePlan counts the matching rows: " + analyzed);
}

step("core: mutations");
{
  let r = await t.update({ where: "id = 5", values: { name: "five" } });
  ok(r.rowsUpdated === 1, "update values: rowsUpdated " + JSON.stringify(r));
  model = model.map((m) => (m.id === 5 ? { ...m, name: "five" } : m));
  const five = await rowsOf(t.query().where("id = 5").select(["name"]));
  ok(same(five, [{ name: "five" }]), "updated value " + JSON.stringify(five));
  const g0 = cnt((m) => m.grp === 0);
  r = await t.update({ where: "grp = 0", valuesSql: { grp: "grp + 100" } });
  ok(r.rowsUpdated === g0, `update SQL: rowsUpdated ${JSON.stringify(r)}, want ${g0}`);
  model = model.map((m) => (m.grp === 0 ? { ...m, grp: 100 } : m));
  ok((await t.countRows("grp = 100")) === g0, "update SQL values");
  const del = await t.delete("id >= 500 AND id < 512");
  ok(del.numDeletedRows === 12, "delete: numDeletedRows " + JSON.stringify(del));
  model = model.filter((m) => !(m.id >= 500 && m.id < 512));
  ok((await t.countRows()) === model.length, "count after delete");
  const src = [mkrow(1, { name: "one!" }), mkrow(2, { name: "two!" }), mkrow(1000), mkrow(1001)];
  const m = await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(table(src));
  ok(m.numInsertedRows === 2 && m.numUpdatedRows === 2, "merge upsert counts " + JSON.stringify(m));
  for (const s of src) {
    const i = model.findIndex((x) => x.id === s.id);
    if (i >= 0) model[i] = s;
    else model.push(s);
  }
  const got = (await rowsOf(t.query().where("id IN (1, 2, 1000, 1001)").select(["id", "name"]))).sort(byId);
  ok(same(got, src.map((s) => ({ id: s.id, name: s.name }))), "merge values " + JSON.stringify(got));
  ok((await t.countRows()) === model.length, "count after merge");
}

step("core: columns");
{
  await t.addColumns([{ name: "double_id", valueSql: "id * 2" }]);
  let got = await rowsOf(t.query().where("id < 3").select(["id", "double_id"]));
  ok(same(got, [{ id: 0, double_id: 0 }, { id: 1, double_id: 2 }, { id: 2, double_id: 4 }]), "addColumns values " + JSON.stringify(got));
  await t.alterColumns([{ path: "double_id", rename: "did" }]);
  await t.alterColumns([{ path: "grp", dataType: "int64" }]);
  const s = await t.schema();
  ok(s.fields.some((f) => f.name === "did") && !s.fields.some((f) => f.name === "double_id"), "alterColumns rename");
  ok(String(s.fields.find((f) => f.name === "grp").type) === "Int64", "alterColumns cast to int64: " + s.fields.map((f) => `${f.name}:${f.type}`));
  got = await rowsOf(t.query().where("id = 3").select(["grp", "did"]));
  ok(same(got, [{ grp: 3, did: 6 }]), "values after alter " + JSON.stringify(got));
  await t.dropColumns(["did"]);
  ok(!(await t.schema()).fields.some((f) => f.name === "did"), "dropColumns");
  ok((await t.countRows("grp = 100")) === cnt((m) => m.grp === 100), "rows survive the column changes");
}

step("core: versions");
{
  const versions = await t.listVersions();
  const nums = versions.map((v) => v.version);
  ok(same(nums, [...nums].sort((a, b) => a - b)), "listVersions ascending " + JSON.stringify(nums));
  ok(versions.every((v) => v.timestamp instanceof Date && !isNaN(v.timestamp)), "version timestamps are Dates");
  const latest = await t.version();
  ok(nums[nums.length - 1] === latest, "latest listed is version()");
  await t.checkout(1);
  ok((await t.countRows()) === 512, "checkout(1): old rows");
  ok((await t.schema()).fields.length === 4, "checkout(1): old schema");
  await fails(() => t.add(table([mkrow(7000)])), "", "writes refused on a checked-out version");
  await t.checkoutLatest();
  await fails(() => t.checkout(9999), "", "checkout of a missing version");
  await t.checkoutLatest();
  await t.checkout(2);
  await t.restore();
  ok((await t.version()) === latest + 1, "restore makes a new version");
  ok((await t.countRows()) === 522, "restore: version 2's rows");
  await t.checkoutLatest();
  await t.add(table([mkrow(7001)]));
  ok((await t.countRows()) === 523, "writable again after checkoutLatest");
}

step("core: tags");
{
  const tags = await t.tags();
  await tags.create("v1", 1);
  await tags.create("v2", 2);
  const list = await tags.list();
  ok(list.v1 && list.v1.version === 1 && list.v2.version === 2, "tags list " + JSON.stringify(list));
  ok((await tags.getVersion("v1")) === 1, "tag getVersion");
  await fails(() => tags.create("v1", 2), "", "duplicate tag");
  await t.checkout("v1");
  ok((await t.countRows()) === 512, "checkout(tag)");
  await t.checkoutLatest();
  await tags.update("v1", 2);
  ok((await tags.getVersion("v1")) === 2, "tag update");
  await tags.delete("v2");
  ok(!("v2" in (await tags.list())), "tag delete");
}

step("extended");
{
  for (const n of ["p1", "p2", "p3"]) await db.createTable(n, table([mkrow(1)]));
  const names = await db.tableNames();
  ok(["items", "p1", "p2", "p3"].every((n) => names.includes(n)), "tableNames " + JSON.stringify(names));
  const page = await db.tableNames({ startAfter: "p1", limit: 1 });
  ok(same(page, ["p2"]), "tableNames paging " + JSON.stringify(page));
  await fails(() => db.openTable("missing_table"), "was not found", "openTable on a missing table");
  const eo = await db.createTable("p1", table([mkrow(5), mkrow(6)]), { mode: "exist_ok" });
  ok((await eo.countRows()) === 1, "exist_ok keeps the table");
  const ow = await db.createTable("p1", table([mkrow(5), mkrow(6)]), { mode: "overwrite" });
  ok((await ow.countRows()) === 2, "overwrite replaces it");
  const empty = await db.createEmptyTable("empty", schema);
  ok((await empty.countRows()) === 0, "createEmptyTable");
  await empty.add(table([mkrow(1), mkrow(2)]));
  ok((await empty.countRows()) === 2, "add to an empty table");
  await empty.add(table([mkrow(3)]), { mode: "overwrite" });
  ok(same((await rowsOf(empty.query().select(["id"]))).map((r) => r.id), [3]), "add overwrite");

  const mt = await db.createTable("merges", table([0, 1, 2, 3, 4].map((i) => mkrow(i))));
  let r = await mt.mergeInsert("id").whenNotMatchedInsertAll().execute(table([mkrow(3, { name: "x" }), mkrow(9)]));
  ok(r.numInsertedRows === 1 && r.numUpdatedRows === 0, "insert-if-not-exists " + JSON.stringify(r));
  ok(same((await rowsOf(mt.query().where("id = 3").select(["name"]))), [{ name: "n3" }]), "insert-if-not-exists keeps matches");
  r = await mt.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().whenNotMatchedBySourceDelete().execute(table([mkrow(1), mkrow(2)]));
  ok(r.numDeletedRows === 4, "whenNotMatchedBySourceDelete " + JSON.stringify(r));
  ok(same((await rowsOf(mt.query().select(["id"]))).map((x) => x.id).sort(), [1, 2]), "only the source rows remain");
  r = await mt.mergeInsert("id").whenMatchedUpdateAll({ where: "source.grp > 1" }).execute(table([mkrow(1, { name: "a" }), mkrow(2, { name: "b" })]));
  ok(r.numUpdatedRows === 1, "whenMatchedUpdateAll with a condition " + JSON.stringify(r));
  ok(same((await rowsOf(mt.query().select(["id", "name"]))).sort(byId), [{ id: 1, name: "n1" }, { id: 2, name: "b" }]), "conditional update values");
  if (sdkVersion !== "0.31.0") {
    // 0.31 refuses a composite key client-side; newer clients send ?on=id&on=grp.
    r = await mt.mergeInsert(["id", "grp"]).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(table([mkrow(1, { name: "k" }), mkrow(2, { grp: 5 })]));
    ok(r.numUpdatedRows === 1 && r.numInsertedRows === 1, "composite key merge " + JSON.stringify(r));
    const rows = (await rowsOf(mt.query().select(["id", "grp", "name"]))).sort((a, b) => a.id - b.id || a.grp - b.grp);
    ok(same(rows, [{ id: 1, grp: 1, name: "k" }, { id: 2, grp: 2, name: "b" }, { id: 2, grp: 5, name: "n2" }]), "composite key values " + JSON.stringify(rows));
  }

  // Types whose Lance JSON names differ from Arrow's (timestamps keep unit and zone).
  const tsSchema = new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false),
    new arrow.Field("at", new arrow.Timestamp(arrow.TimeUnit.MICROSECOND, "UTC"), true),
    new arrow.Field("x", new arrow.Float64(), true),
  ]);
  const when = Date.UTC(2026, 0, 2, 3, 4, 5);
  const tt = await db.createTable("typed", lancedb.makeArrowTable([{ id: 1n, at: when, x: 0.5 }], { schema: tsSchema }));
  const ts = await (await remote()).openTable("typed");
  const tsFields = (await ts.schema()).fields.map((f) => `${f.name}:${f.type}`);
  ok(same(tsFields, ["id:Int64", "at:Timestamp<MICROSECOND, UTC>", "x:Float64"]), "timestamp schema round trip " + JSON.stringify(tsFields));
  const trow = (await tt.query().toArray())[0];
  ok(Number(trow.at) === when || Number(trow.at) === when * 1000 || +new Date(trow.at) === when, "timestamp value " + trow.at);

  const st = await t.stats();
  ok(st.numRows === 523 && st.fragmentStats && st.fragmentStats.numFragments > 0, "stats " + JSON.stringify(st));

  await t.updateFieldMetadata([{ path: "name", metadata: { unit: "none", temp: "x" } }]);
  await t.updateFieldMetadata([{ path: "name", metadata: { temp: null } }]);
  const md = (await t.schema()).fields.find((f) => f.name === "name").metadata;
  ok(md.get("unit") === "none" && !md.has("temp"), "updateFieldMetadata " + JSON.stringify([...md]));

  await db.renameTable("p3", "p3b");
  ok((await db.tableNames()).includes("p3b") && !(await db.tableNames()).includes("p3"), "renameTable");

  await db.createNamespace(["rns"], { mode: "exist_ok" });
  await db.createNamespace(["rns"], { mode: "exist_ok" });
  ok((await db.listNamespaces([])).namespaces.includes("rns"), "listNamespaces");
  ok((await db.describeNamespace(["rns"])) !== undefined, "describeNamespace");
  const nt = await db.createTable("inner", table([mkrow(1), mkrow(2)]), ["rns"]);
  ok((await nt.countRows()) === 2, "a table inside a namespace");
  ok(same(await db.tableNames(["rns"]), ["inner"]), "tables of a namespace");
  ok(!(await db.tableNames()).some((n) => n.includes("$")), "the root lists its own tables only " + JSON.stringify(await db.tableNames()));
  ok((await (await db.openTable("inner", ["rns"])).countRows("id = 2")) === 1, "open a table inside a namespace");
  // newNamespacePath [] is the root namespace (the client sends no new_namespace for it).
  await db.renameTable("inner", "fromrns", { namespacePath: ["rns"], newNamespacePath: [] });
  ok(same(await db.tableNames(["rns"]), []) && (await db.tableNames()).includes("fromrns"), "renameTable to the root namespace");
  ok((await (await db.openTable("fromrns")).countRows()) === 2, "the moved table keeps its rows");
  await db.dropTable("fromrns");
  await db.dropNamespace(["rns"], { mode: "skip" });
  ok(!(await db.listNamespaces([])).namespaces.includes("rns"), "dropNamespace");
}

step("cross-client: namespace mode reads what remote mode wrote");
{
  const ns = await nsClient();
  const nt = await ns.openTable("items", []);
  const a = (await rowsOf(nt.query())).sort(byId);
  const b = (await rowsOf(t.query())).sort(byId);
  ok(a.length === 523 && same(a, b), `namespace mode reads remote's rows (${a.length} vs ${b.length})`);
  ok((await nt.countRows("grp = 100")) === (await t.countRows("grp = 100")), "namespace mode counts the same");
}

step("cross-client: remote mode writes a table the namespace-mode SDK created");
{
  const ns = await nsClient();
  // 0.39 creates file format 2.2; the Go test checks the table's data storage version.
  let xmodel = [0, 1, 2, 3].map((i) => mkrow(i));
  await ns.createTable("crossed", table(xmodel), []);
  const rt = await db.openTable("crossed");
  ok((await rt.countRows()) === 4, "remote opens the namespace-mode table");
  await rt.add(table([mkrow(4), mkrow(5)]));
  xmodel.push(mkrow(4), mkrow(5));
  const u = await rt.update({ where: "id = 1", values: { name: "uno" } });
  ok(u.rowsUpdated === 1, "remote update of the namespace-mode table");
  xmodel[1] = { ...xmodel[1], name: "uno" };
  const m = await rt.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(table([mkrow(2, { name: "dos" }), mkrow(6)]));
  ok(m.numUpdatedRows === 1 && m.numInsertedRows === 1, "remote merge " + JSON.stringify(m));
  xmodel[2] = { ...xmodel[2], name: "dos" };
  xmodel.push(mkrow(6));
  const got = (await rowsOf((await (await nsClient()).openTable("crossed", [])).query())).sort(byId);
  ok(same(got.map((r) => ({ ...r, vector: r.vector.map(f32) })), xmodel), "the namespace-mode SDK reads remote's writes: " + JSON.stringify(got.map((r) => [r.id, r.name])));
}

step("core: drop");
{
  await db.dropTable("items");
  ok(!(await db.tableNames()).includes("items"), "dropped table is not listed");
  await fails(async () => (await remote()).openTable("items"), "was not found", "openTable after drop");
}

console.log(`ok: ${count()} checks`);
