// The SDK's half of the surface test (e2e/surface_test.go): every public method and option of
// the Node SDK, one case each (or more), run through one connection — embedded (a local
// directory) or remote (db:// with hostOverride against lancecat serve, behind the test's
// counting proxy). The same script on the same inserts in both modes; the Go side compares.
//
//   node surface.mjs <sdk-dir> <job.json>
//
// job: {conn: {kind: "local", dir} | {kind: "remote", url}}
// Prints {version, cases: [{name, covers, value} | {name, covers, error, sent}]}: value is the
// case's answer made canonical (bigints as numbers, Arrow as rows, Dates as ISO strings, keys
// sorted, unordered rows sorted); sent is the requests the remote client sent for a case that
// failed (none: the SDK refused it itself), from the proxy's /__surface/log.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const [sdkDir, jobPath] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");
const job = JSON.parse(fs.readFileSync(jobPath, "utf8"));
const version = JSON.parse(
  fs.readFileSync(path.join(path.resolve(sdkDir), "node_modules/@lancedb/lancedb/package.json"), "utf8"),
).version;
const remote = job.conn.kind === "remote";
const db = remote
  ? await lancedb.connect("db://lancecat", { apiKey: "surface", hostOverride: job.conn.url, clientConfig: { retryConfig: { retries: 0 } } })
  : await lancedb.connect(job.conn.dir);

async function sentSoFar() {
  if (!remote) return 0;
  const r = await fetch(job.conn.url + "/__surface/count");
  return Number(await r.text());
}

// ---- canonical values ----
const isArrowTable = (v) => v && typeof v === "object" && v.schema && typeof v.toArray === "function" && v.batches;
function canon(v) {
  if (v === undefined) return null;
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
  if (typeof v === "bigint") return Number(v);
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v)) return { bytes: v.toString("hex") };
  if (ArrayBuffer.isView(v)) return Array.from(v, canon);
  if (v instanceof arrow.Schema) return schemaOf(v);
  if (v instanceof arrow.DataType) return String(v);
  if (isArrowTable(v)) return sortRows(v.toArray().map((r) => canon(r.toJSON ? r.toJSON() : r)));
  if (v instanceof Map) return canon(Object.fromEntries(v));
  if (typeof v.toArray === "function" && !Array.isArray(v)) return canon(v.toArray());
  if (Array.isArray(v)) return v.map(canon);
  if (typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v).sort()) if (typeof v[k] !== "function") o[k] = canon(v[k]);
    return o;
  }
  return String(v);
}
const schemaOf = (s) =>
  s.fields.map((f) => {
    const o = { name: f.name, type: String(f.type), nullable: f.nullable };
    const md = Object.fromEntries(f.metadata ?? []);
    if (Object.keys(md).length) o.metadata = md;
    return o;
  });
const sortRows = (rows) => rows.map((r) => [JSON.stringify(r), r]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((x) => x[1]);
// rows of a query, unordered unless ordered
const rows = async (q, ordered = false) => {
  const got = (await q.toArray()).map((r) => canon({ ...r }));
  return ordered ? got : sortRows(got);
};
// rows of a ranked query (search), in rank order with ties by id: two indices may order equal
// scores differently
// scores; rows tied with the last at a limit's cut are left out (which of them make the cut is
// either index's choice), its score kept
const ranked = async (q) => {
  const got = (await q.toArray()).map((r) => canon({ ...r }));
  const key = (r) => (r._score !== undefined ? -r._score : r._distance ?? 0);
  got.sort((a, b) => key(a) - key(b) || a.id - b.id);
  if (got.length < 2) return got;
  const cut = key(got[got.length - 1]);
  const near = (a, b) => Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(b));
  return { rows: got.filter((r) => !near(key(r), cut)), cut };
};
// drop what is the store's and not the answer's (sizes, timestamps, uuids)
const pick = (o, keys) => Object.fromEntries(keys.filter((k) => o && o[k] !== undefined).map((k) => [k, canon(o[k])]));

// ---- the data: the same inserts on both sides ----
const DIM = 8;
const vfield = () => new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), true);
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("grp", new arrow.Int32(), true),
  new arrow.Field("name", new arrow.Utf8(), true),
  new arrow.Field("price", new arrow.Float64(), true),
  new arrow.Field("flag", new arrow.Bool(), true),
  new arrow.Field("ts", new arrow.TimestampMillisecond(), true),
  new arrow.Field("tags", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
  new arrow.Field("text", new arrow.Utf8(), true),
  vfield(),
]);
const words = `glacier river mountain storm harbor legend voyage forest island song quick brown fox rain
  valley ocean desert canyon meadow thunder lightning snow ice cold warm north south east west anchor
  sailor lighthouse ancient modern myth tale saga epic poem verse melody rhythm breeze cloudy`.split(/\s+/);
let xs = 2463534242;
const rnd = () => ((xs ^= xs << 13), (xs ^= xs >>> 17), (xs ^= xs << 5), (xs >>> 0));
const texts = Array.from({ length: 1024 }, () => Array.from({ length: 3 + (rnd() % 13) }, () => {
  const u = (rnd() % 10000) / 10000;
  return words[Math.floor(u * u * words.length)];
}).join(" "));
const f32 = Math.fround;
const vec = (i) => Array.from({ length: DIM }, (_, j) => f32(Math.sin((i + 1) * (j + 1) * 0.37)));
const row = (i) => ({
  id: BigInt(i),
  grp: i % 7 === 6 ? null : i % 7,
  name: "n" + i,
  price: i % 11 === 0 ? null : (i * 37) % 101 / 4,
  flag: i % 3 === 0,
  ts: new Date(Date.UTC(2024, 0, 1) + i * 3600_000),
  tags: [words[i % words.length], words[(i * 3) % words.length]],
  text: texts[i % texts.length],
  vector: vec(i),
});
const data = (from, n) => lancedb.makeArrowTable(Array.from({ length: n }, (_, k) => row(from + k)), { schema });
const N = 512;

let seq = 0;
// a fresh table of its own for a case that writes
async function fresh(n = 64, name) {
  const t = await db.createTable(name ?? `w${seq++}`, data(0, n));
  return t;
}
const base = await db.createTable("base", data(0, N));
// the indexed table: a scalar, a label list and a full-text index (built on both sides the same way)
const idx = await db.createTable("idx", data(0, N));
await idx.createIndex("grp", { config: lancedb.Index.btree() });
await idx.createIndex("tags", { config: lancedb.Index.labelList() });
await idx.createIndex("text", { config: lancedb.Index.fts({ withPosition: true }) });
await idx.createIndex("vector", { config: lancedb.Index.ivfFlat({ numPartitions: 2 }) });
const q8 = vec(42).map((x) => x + 0.01);

// ---- the cases ----
const cases = [];
// c(name, covers, fn): covers are the surface items (Class.member / Interface.field) the case exercises
const c = (name, covers, fn) => cases.push({ name, covers, fn });
const has = (o, m) => o && typeof o[m] === "function";

// Connection
c("Connection.isOpen", ["Connection.isOpen"], () => db.isOpen());
c("Connection.display", ["Connection.display"], () => typeof db.display() === "string" && db.display().length > 0);
c("Connection.tableNames", ["Connection.tableNames"], async () => (await db.tableNames()).filter((n) => n === "base" || n === "idx"));
c("Connection.tableNames limit", ["TableNamesOptions.limit"], () => db.tableNames({ limit: 1 }));
c("Connection.tableNames startAfter", ["TableNamesOptions.startAfter"], async () => (await db.tableNames({ startAfter: "base" })).filter((n) => n === "idx"));
c("Connection.listTables", ["Connection.listTables"], async () => (await db.listTables()).tables.filter((n) => n === "base" || n === "idx"));
c("Connection.listTables limit", ["ListTablesOptions.limit"], async () => (await db.listTables({ limit: 1 })).tables.length);
c("Connection.listTables pageToken", ["ListTablesOptions.pageToken"], async () => {
  const first = await db.listTables({ limit: 1 });
  const next = await db.listTables({ limit: 1, pageToken: first.pageToken ?? undefined });
  return next.tables[0] > first.tables[0];
});
c("Connection.openTable", ["Connection.openTable"], async () => (await db.openTable("base")).countRows());
c("Connection.openTable missing", ["Connection.openTable"], () => db.openTable("no_such_table"));
c("Connection.openTable version", ["OpenTableOptions.version"], async () => {
  const t = await fresh(10);
  await t.add(data(100, 5));
  return (await db.openTable(t.name, undefined, { version: 1 })).countRows();
});
c("Connection.openTable branch", ["OpenTableOptions.branch"], () => db.openTable("base", undefined, { branch: "no_such_branch" }).then((t) => t.countRows()));
c("Connection.openTable storageOptions", ["OpenTableOptions.storageOptions"], async () => (await db.openTable("base", undefined, { storageOptions: {} })).countRows());
c("Connection.openTable indexCacheSize", ["OpenTableOptions.indexCacheSize"], async () => (await db.openTable("base", undefined, { indexCacheSize: 16 })).countRows());
c("Connection.createTable rows", ["Connection.createTable"], async () => {
  const t = await db.createTable("c_rows", [{ id: 1, s: "a" }, { id: 2, s: "b" }]);
  return { schema: await t.schema(), rows: await rows(t.query()) };
});
c("Connection.createTable exists", ["Connection.createTable"], () => db.createTable("base", data(0, 1)));
c("Connection.createTable options object", ["Connection.createTable"], async () => {
  const t = await db.createTable({ name: "c_obj", data: data(0, 3) });
  return t.countRows();
});
c("Connection.createTable mode overwrite", ["CreateTableOptions.mode"], async () => {
  await db.createTable("c_over", data(0, 5));
  const t = await db.createTable("c_over", data(10, 2), { mode: "overwrite" });
  return rows(t.query().select(["id"]));
});
c("Connection.createTable existOk", ["CreateTableOptions.existOk"], async () => {
  await db.createTable("c_exist", data(0, 5));
  const t = await db.createTable("c_exist", data(10, 2), { existOk: true });
  return t.countRows();
});
c("Connection.createTable schema", ["CreateTableOptions.schema"], async () => {
  const s = new arrow.Schema([new arrow.Field("a", new arrow.Int32(), true), new arrow.Field("b", new arrow.Utf8(), true)]);
  const t = await db.createTable("c_schema", [{ a: 1, b: "x" }], { schema: s });
  return { schema: await t.schema(), rows: await rows(t.query()) };
});
c("Connection.createTable storageOptions", ["CreateTableOptions.storageOptions"], async () => (await db.createTable("c_so", data(0, 3), { storageOptions: {} })).countRows());
c("Connection.createTable dataStorageVersion", ["CreateTableOptions.dataStorageVersion"], async () =>
  (await db.createTable("c_dsv", data(0, 3), { dataStorageVersion: "2.1" })).countRows());
c("Connection.createTable enableV2ManifestPaths", ["CreateTableOptions.enableV2ManifestPaths"], async () => {
  const t = await db.createTable("c_v2", data(0, 3), { enableV2ManifestPaths: true });
  return t.countRows();
});
c("Connection.createEmptyTable", ["Connection.createEmptyTable"], async () => {
  const t = await db.createEmptyTable("c_empty", schema);
  return { schema: await t.schema(), count: await t.countRows() };
});
c("Connection.dropTable", ["Connection.dropTable"], async () => {
  await db.createTable("c_drop", data(0, 2));
  await db.dropTable("c_drop");
  return (await db.tableNames()).includes("c_drop");
});
c("Connection.dropTable missing", ["Connection.dropTable"], () => db.dropTable("no_such_table"));
c("Connection.dropTableAsync", ["Connection.dropTableAsync"], async () => {
  await db.createTable("c_dropa", data(0, 2));
  const j = await db.dropTableAsync("c_dropa");
  await j.wait();
  return (await db.tableNames()).includes("c_dropa");
});
c("Connection.renameTable", ["Connection.renameTable"], async () => {
  await db.createTable("c_ren", data(0, 2));
  await db.renameTable("c_ren", "c_ren2");
  const n = await db.tableNames();
  return [n.includes("c_ren"), n.includes("c_ren2")];
});
c("Connection.renameTable namespaces", ["RenameTableOptions.namespacePath", "RenameTableOptions.newNamespacePath"], async () => {
  await db.createTable("c_ren3", data(0, 2));
  await db.renameTable("c_ren3", "c_ren4", { namespacePath: [], newNamespacePath: [] });
  return (await db.tableNames()).includes("c_ren4");
});
c("Connection.createNamespace", ["Connection.createNamespace"], async () => canon(await db.createNamespace(["ns1"])).properties ?? null);
c("Connection.createNamespace mode exist_ok", ["CreateNamespaceOptions.mode"], async () => {
  await db.createNamespace(["ns2"]);
  await db.createNamespace(["ns2"], { mode: "exist_ok" });
  return true;
});
c("Connection.createNamespace properties", ["CreateNamespaceOptions.properties"], async () => {
  await db.createNamespace(["ns3"], { properties: { owner: "me" } });
  return (await db.describeNamespace(["ns3"])).properties?.owner ?? null;
});
c("Connection.describeNamespace", ["Connection.describeNamespace"], async () => {
  await db.createNamespace(["ns4"]);
  return pick(canon(await db.describeNamespace(["ns4"])), []);
});
c("Connection.listNamespaces", ["Connection.listNamespaces"], async () => {
  await db.createNamespace(["ns5"]);
  return (await db.listNamespaces()).namespaces.includes("ns5");
});
c("Connection.listNamespaces limit", ["ListNamespacesOptions.limit"], async () => (await db.listNamespaces([], { limit: 1 })).namespaces.length);
c("Connection.listNamespaces pageToken", ["ListNamespacesOptions.pageToken"], async () => {
  const a = await db.listNamespaces([], { limit: 1 });
  const b = await db.listNamespaces([], { limit: 1, pageToken: a.pageToken ?? undefined });
  return b.namespaces.length === 1 && b.namespaces[0] !== a.namespaces[0];
});
c("Connection.dropNamespace", ["Connection.dropNamespace"], async () => {
  await db.createNamespace(["ns6"]);
  await db.dropNamespace(["ns6"]);
  return (await db.listNamespaces()).namespaces.includes("ns6");
});
c("Connection.dropNamespace mode skip", ["DropNamespaceOptions.mode"], async () => {
  await db.dropNamespace(["no_such_ns"], { mode: "skip" });
  return true;
});
c("Connection.dropNamespace behavior cascade", ["DropNamespaceOptions.behavior"], async () => {
  await db.createNamespace(["ns7"]);
  await db.createTable("in7", data(0, 2), ["ns7"]);
  await db.dropNamespace(["ns7"], { behavior: "cascade" });
  return (await db.listNamespaces()).namespaces.includes("ns7");
});
c("Connection.dropAllTables", ["Connection.dropAllTables"], async () => {
  await db.createNamespace(["ns8"]);
  await db.createTable("a", data(0, 2), ["ns8"]);
  await db.createTable("b", data(0, 2), ["ns8"]);
  await db.dropAllTables(["ns8"]);
  return db.tableNames(["ns8"]);
});
c("Connection.cloneTable", ["Connection.cloneTable"], async () => {
  const src = remote ? "base" : path.join(job.conn.dir, "base.lance");
  const t = await db.cloneTable("c_clone", src, { isShallow: true });
  return t.countRows();
});
c("Connection.listJobs", ["Connection.listJobs"], async () => Array.isArray(await db.listJobs()));
c("Connection.openJob missing", ["Connection.openJob"], () => db.openJob("no-such-job"));
c("Connection.cancelJob missing", ["Connection.cancelJob"], () => db.cancelJob("no-such-job"));
c("Connection.createMaterializedView", ["Connection.createMaterializedView", "Connection.openMaterializedView", "Connection.listMaterializedViews",
  "MaterializedView.name", "MaterializedView.table", "MaterializedView.definition", "MaterializedView.refresh"], async () => {
  const mv = await db.createMaterializedView("mv1", "base", { select: ["id", "grp"], where: "grp = 1", limit: 100 });
  await mv.refresh({ full: true });
  const again = await db.openMaterializedView("mv1");
  const def = await again.definition();
  return { name: again.name, list: (await db.listMaterializedViews()).includes("mv1"), def: pick(def, ["sourceTable", "filter", "limit"]),
    rows: await rows(again.table().query()) };
});
c("Connection.close", ["Connection.close"], async () => {
  const other = remote ? await lancedb.connect("db://lancecat", { apiKey: "surface", hostOverride: job.conn.url }) : await lancedb.connect(job.conn.dir);
  other.close();
  return other.isOpen();
});

// Table basics
c("Table.name", ["Table.name"], () => base.name);
c("Table.isOpen", ["Table.isOpen"], () => base.isOpen());
c("Table.display", ["Table.display"], () => typeof base.display() === "string");
c("Table.close", ["Table.close"], async () => {
  const t = await db.openTable("base");
  t.close();
  return t.isOpen();
});
c("Table.schema", ["Table.schema"], () => base.schema());
c("Table.countRows", ["Table.countRows"], () => base.countRows());
c("Table.countRows filter", ["Table.countRows"], () => base.countRows("grp = 3 AND price > 5"));
c("Table.countRows bad filter", ["Table.countRows"], () => base.countRows("no_such_col = 1"));
c("Table.toArrow", ["Table.toArrow"], async () => (await (await fresh(20)).toArrow()));
c("Table.version", ["Table.version"], () => base.version());
c("Table.stats", ["Table.stats"], async () => pick(await base.stats(), ["numRows", "numIndices"]));
c("Table.initialStorageOptions", ["Table.initialStorageOptions"], () => base.initialStorageOptions());
c("Table.latestStorageOptions", ["Table.latestStorageOptions"], () => base.latestStorageOptions());
c("Table.usesV2ManifestPaths", ["LocalTable.usesV2ManifestPaths"], () => base.usesV2ManifestPaths());
c("Table.migrateManifestPathsV2", ["LocalTable.migrateManifestPathsV2"], async () => {
  const t = await fresh(4);
  await t.migrateManifestPathsV2();
  return t.countRows();
});
c("Table.blobColumns", ["Table.blobColumns"], () => base.blobColumns());
c("Table.fetchBlobs no blob column", ["Table.fetchBlobs"], () => base.fetchBlobs("name", [0]));
c("Table.fetchBlobFiles no blob column", ["Table.fetchBlobFiles"], () => base.fetchBlobFiles("name", [0]));

// writes
c("Table.add", ["Table.add"], async () => {
  const t = await fresh(10);
  const r = await t.add(data(100, 5));
  return { version: r.version, rows: await rows(t.query().select(["id", "name"])) };
});
c("Table.add rows", ["Table.add"], async () => {
  const t = await fresh(2);
  await t.add([{ ...row(7), id: 77n }]);
  return rows(t.query().select(["id", "grp", "tags"]));
});
c("Table.add bad schema", ["Table.add"], async () => (await fresh(2)).add([{ nope: 1 }]));
c("Table.add mode overwrite", ["AddDataOptions.mode"], async () => {
  const t = await fresh(10);
  await t.add(data(200, 3), { mode: "overwrite" });
  return rows(t.query().select(["id"]));
});
c("Table.add progress", ["AddDataOptions.progress"], async () => {
  const t = await fresh(10);
  let last = null;
  await t.add(data(200, 3), { progress: (p) => { if (p.done) last = p; } });
  await new Promise((r) => setTimeout(r, 50));
  return last ? pick(last, ["outputRows", "totalRows", "done"]) : "no final progress";
});
c("Table.update values", ["Table.update", "UpdateOptions.where"], async () => {
  const t = await fresh(20);
  const r = await t.update({ where: "id < 5", values: { name: "x", price: 1.5, flag: true } });
  return { rows: r.rowsUpdated, got: await rows(t.query().where("id < 6").select(["id", "name", "price", "flag"])) };
});
c("Table.update values Date", ["Table.update"], async () => {
  const t = await fresh(10);
  await t.update({ where: "id = 1", values: { ts: new Date(Date.UTC(2030, 4, 6, 7, 8, 9)) } });
  return rows(t.query().where("id = 1").select(["id", "ts"]));
});
c("Table.update values list", ["Table.update"], async () => {
  const t = await fresh(10);
  await t.update({ where: "id = 2", values: { tags: ["a", "b"] } });
  return rows(t.query().where("id = 2").select(["id", "tags"]));
});
c("Table.update values vector", ["Table.update"], async () => {
  const t = await fresh(10);
  await t.update({ where: "id = 2", values: { vector: [1, 2, 3, 4, 5, 6, 7, 8] } });
  return rows(t.query().where("id = 2").select(["id", "vector"]));
});
c("Table.update valuesSql", ["Table.update"], async () => {
  const t = await fresh(20);
  const r = await t.update({ where: "grp = 2", valuesSql: { price: "price * 2 + 1", name: "concat(name, '!')" } });
  return { rows: r.rowsUpdated, got: await rows(t.query().select(["id", "name", "price"])) };
});
c("Table.update map form", ["Table.update"], async () => {
  const t = await fresh(20);
  await t.update(new Map([["grp", "grp + 10"]]), { where: "id > 15" });
  return rows(t.query().select(["id", "grp"]));
});
c("Table.update no where", ["Table.update"], async () => {
  const t = await fresh(8);
  const r = await t.update({ valuesSql: { grp: "0" } });
  return r.rowsUpdated;
});
c("Table.update bad column", ["Table.update"], async () => (await fresh(4)).update({ valuesSql: { nope: "1" } }));
c("Table.delete", ["Table.delete"], async () => {
  const t = await fresh(30);
  const r = await t.delete("id % 3 = 0 OR grp IS NULL");
  return { version: r.version, rows: await rows(t.query().select(["id"])) };
});
c("Table.delete bad", ["Table.delete"], async () => (await fresh(4)).delete("nope > 1"));
c("Table.mergeInsert upsert", ["Table.mergeInsert", "MergeInsertBuilder.whenMatchedUpdateAll", "MergeInsertBuilder.whenNotMatchedInsertAll", "MergeInsertBuilder.execute"], async () => {
  const t = await fresh(10);
  const src = lancedb.makeArrowTable([8, 9, 10, 11].map((i) => ({ ...row(i), name: "m" + i })), { schema });
  const r = await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(src);
  return { r: pick(r, ["numInsertedRows", "numUpdatedRows", "numDeletedRows"]), rows: await rows(t.query().select(["id", "name"])) };
});
c("MergeInsertBuilder.whenMatchedUpdateAll where", ["MergeInsertBuilder.whenMatchedUpdateAll"], async () => {
  const t = await fresh(10);
  const src = lancedb.makeArrowTable([1, 2, 3].map((i) => ({ ...row(i), name: "m" + i })), { schema });
  const r = await t.mergeInsert("id").whenMatchedUpdateAll({ where: "target.id > 1" }).execute(src);
  return { r: pick(r, ["numInsertedRows", "numUpdatedRows", "numDeletedRows"]), rows: await rows(t.query().select(["id", "name"])) };
});
c("MergeInsertBuilder.whenNotMatchedBySourceDelete", ["MergeInsertBuilder.whenNotMatchedBySourceDelete"], async () => {
  const t = await fresh(10);
  const src = lancedb.makeArrowTable([1, 2, 3].map((i) => row(i)), { schema });
  const r = await t.mergeInsert("id").whenNotMatchedBySourceDelete({ where: "id > 6" }).execute(src);
  return { r: pick(r, ["numInsertedRows", "numUpdatedRows", "numDeletedRows"]), rows: await rows(t.query().select(["id"])) };
});
c("MergeInsertBuilder composite key", ["Table.mergeInsert"], async () => {
  const t = await fresh(10);
  const src = lancedb.makeArrowTable([1, 2].map((i) => ({ ...row(i), name: "k" + i })), { schema });
  await t.mergeInsert(["id", "grp"]).whenMatchedUpdateAll().execute(src);
  return rows(t.query().select(["id", "name"]));
});
c("MergeInsertBuilder.useIndex", ["MergeInsertBuilder.useIndex"], async () => {
  const t = await fresh(10);
  const r = await t.mergeInsert("id").whenNotMatchedInsertAll().useIndex(false).execute(data(5, 10));
  return pick(r, ["numInsertedRows", "numUpdatedRows"]);
});
c("MergeInsertBuilder.useLsmWrite", ["MergeInsertBuilder.useLsmWrite"], async () => {
  const t = await fresh(10);
  const r = await t.mergeInsert("id").whenNotMatchedInsertAll().useLsmWrite(false).execute(data(5, 10));
  return pick(r, ["numInsertedRows", "numUpdatedRows"]);
});
c("MergeInsertBuilder.useLsm", ["MergeInsertBuilder.useLsm"], async () => {
  const t = await fresh(10);
  const r = await t.mergeInsert("id").whenNotMatchedInsertAll().useLsm(false).execute(data(5, 10));
  return pick(r, ["numInsertedRows", "numUpdatedRows"]);
});
c("MergeInsertBuilder.validateSingleShard", ["MergeInsertBuilder.validateSingleShard"], async () => {
  const t = await fresh(10);
  const r = await t.mergeInsert("id").whenNotMatchedInsertAll().validateSingleShard(false).execute(data(5, 10));
  return pick(r, ["numInsertedRows", "numUpdatedRows"]);
});
c("MergeInsertBuilder.execute timeoutMs", ["WriteExecutionOptions.timeoutMs"], async () => {
  const t = await fresh(10);
  const r = await t.mergeInsert("id").whenNotMatchedInsertAll().execute(data(5, 10), { timeoutMs: 60000 });
  return pick(r, ["numInsertedRows"]);
});

// schema evolution
c("Table.addColumns sql", ["Table.addColumns"], async () => {
  const t = await fresh(10);
  await t.addColumns([{ name: "id2", valueSql: "id * 2" }, { name: "up", valueSql: "upper(name)" }]);
  return { schema: await t.schema(), rows: await rows(t.query().select(["id", "id2", "up"])) };
});
c("Table.addColumns cast varchar", ["Table.addColumns"], async () => {
  const t = await fresh(5);
  await t.addColumns([{ name: "ids", valueSql: "CAST(id AS VARCHAR)" }]);
  return { schema: await t.schema(), rows: await rows(t.query().select(["id", "ids"])) };
});
c("Table.addColumns field", ["Table.addColumns"], async () => {
  const t = await fresh(5);
  await t.addColumns(new arrow.Field("extra", new arrow.Float64(), true));
  return { schema: await t.schema(), rows: await rows(t.query().select(["id", "extra"])) };
});
c("Table.addColumns fields", ["Table.addColumns"], async () => {
  const t = await fresh(5);
  await t.addColumns([new arrow.Field("e1", new arrow.Int32(), true), new arrow.Field("e2", new arrow.Utf8(), true)]);
  return t.schema();
});
c("Table.addColumns schema", ["Table.addColumns"], async () => {
  const t = await fresh(5);
  await t.addColumns(new arrow.Schema([new arrow.Field("e3", new arrow.Bool(), true)]));
  return t.schema();
});
c("Table.addColumns computed", ["Table.addColumns"], async () => {
  const t = await fresh(5);
  await t.addColumns({ computed: [{ name: "dbl", valueSql: "price * 2" }] });
  return { schema: await t.schema(), rows: await rows(t.query().select(["id", "dbl"])) };
});
c("Table.addColumns exists", ["Table.addColumns"], async () => (await fresh(3)).addColumns([{ name: "name", valueSql: "'x'" }]));
c("Table.alterColumns rename", ["Table.alterColumns", "ColumnAlteration.path", "ColumnAlteration.rename"], async () => {
  const t = await fresh(5);
  await t.alterColumns([{ path: "name", rename: "label" }]);
  return { schema: await t.schema(), rows: await rows(t.query().select(["id", "label"])) };
});
c("Table.alterColumns nullable", ["ColumnAlteration.nullable"], async () => {
  const t = await fresh(5);
  await t.alterColumns([{ path: "id", nullable: true }]);
  return t.schema();
});
c("Table.alterColumns dataType", ["ColumnAlteration.dataType"], async () => {
  const t = await fresh(5);
  await t.alterColumns([{ path: "grp", dataType: "int64" }, { path: "price", dataType: new arrow.Float32() }]);
  return { schema: await t.schema(), rows: await rows(t.query().select(["id", "grp", "price"])) };
});
c("Table.alterColumns vector float16", ["ColumnAlteration.dataType"], async () => {
  const t = await fresh(5);
  await t.alterColumns([{ path: "vector", dataType: new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float16(), true)) }]);
  return { schema: await t.schema(), rows: await rows(t.query().where("id < 2").select(["id", "vector"])) };
});
c("Table.alterColumns bad cast", ["ColumnAlteration.dataType"], async () => (await fresh(3)).alterColumns([{ path: "name", dataType: "int32" }]));
c("Table.dropColumns", ["Table.dropColumns"], async () => {
  const t = await fresh(5);
  await t.dropColumns(["price", "tags"]);
  return t.schema();
});
c("Table.dropColumns missing", ["Table.dropColumns"], async () => (await fresh(3)).dropColumns(["nope"]));
c("Table.updateFieldMetadata", ["Table.updateFieldMetadata", "FieldMetadataUpdate.path", "FieldMetadataUpdate.metadata"], async () => {
  const t = await fresh(3);
  await t.updateFieldMetadata([{ path: "name", metadata: { a: "1", b: "2" } }]);
  await t.updateFieldMetadata([{ path: "name", metadata: { b: null } }]);
  return t.schema();
});
c("Table.updateFieldMetadata replace", ["FieldMetadataUpdate.replace"], async () => {
  const t = await fresh(3);
  await t.updateFieldMetadata([{ path: "name", metadata: { a: "1" } }]);
  await t.updateFieldMetadata([{ path: "name", metadata: { c: "3" }, replace: true }]);
  return t.schema();
});
c("Table.setUnenforcedPrimaryKey", ["Table.setUnenforcedPrimaryKey"], async () => {
  const t = await fresh(3);
  await t.setUnenforcedPrimaryKey("id");
  return t.schema();
});
c("Table.refreshColumn plain", ["Table.refreshColumn"], async () => (await fresh(3)).refreshColumn("name"));
c("Table.refreshColumnAsync plain", ["Table.refreshColumnAsync"], async () => (await fresh(3)).refreshColumnAsync("name").then((j) => j.wait()));
c("Table.refreshMaterializedView plain", ["Table.refreshMaterializedView"], async () => (await fresh(3)).refreshMaterializedView());

// LSM write spec
c("Table.getLsmWriteSpec", ["Table.getLsmWriteSpec"], async () => (await fresh(3)).getLsmWriteSpec());
c("Table.setLsmWriteSpec", ["Table.setLsmWriteSpec", "Table.unsetLsmWriteSpec", "LsmWriteSpec.specType", "LsmWriteSpec.column", "LsmWriteSpec.numBuckets"], async () => {
  const t = await fresh(3);
  if (!has(t, "getLsmWriteSpec")) return "no getLsmWriteSpec in this SDK";
  await t.setUnenforcedPrimaryKey("id");
  await t.setLsmWriteSpec({ specType: "bucket", column: "id", numBuckets: 4 });
  const got = await t.getLsmWriteSpec();
  await t.unsetLsmWriteSpec();
  return { got: pick(got, ["specType", "column", "numBuckets"]), after: await t.getLsmWriteSpec() };
});
c("Table.setLsmWriteSpec maintainedIndexes", ["LsmWriteSpec.maintainedIndexes", "LsmWriteSpec.writerConfigDefaults"], async () => {
  const t = await fresh(3);
  if (!has(t, "getLsmWriteSpec")) return "no getLsmWriteSpec in this SDK";
  await t.setUnenforcedPrimaryKey("id");
  await t.setLsmWriteSpec({ specType: "unsharded", maintainedIndexes: [], writerConfigDefaults: {} });
  return pick(await t.getLsmWriteSpec(), ["specType", "maintainedIndexes"]);
});
for (const m of ["flushLsm", "compactLsm", "checkpointLsm", "closeLsmWriters"]) {
  c("Table." + m, ["Table." + m], async () => (await fresh(3))[m]());
}
c("Table.getLsmStats", ["Table.getLsmStats"], async () => (await fresh(3)).getLsmStats(true));

// versions, tags, branches
c("Table.listVersions", ["Table.listVersions"], async () => {
  const t = await fresh(3);
  await t.add(data(10, 1));
  return (await t.listVersions()).map((v) => ({ version: v.version, isDate: v.timestamp instanceof Date }));
});
c("Table.checkout", ["Table.checkout", "Table.checkoutLatest"], async () => {
  const t = await fresh(3);
  await t.add(data(10, 2));
  await t.checkout(1);
  const old = await t.countRows();
  const readOnly = await t.add(data(20, 1)).then(() => "wrote", (e) => "refused");
  await t.checkoutLatest();
  return { old, readOnly, latest: await t.countRows(), version: await t.version() };
});
c("Table.restore", ["Table.restore"], async () => {
  const t = await fresh(3);
  await t.add(data(10, 2));
  await t.checkout(1);
  await t.restore();
  return { count: await t.countRows(), version: await t.version() };
});
c("Table.restore without checkout", ["Table.restore"], async () => (await fresh(3)).restore().then(async () => "restored"));
c("Table.tags", ["Table.tags", "Tags.create", "Tags.list", "Tags.getVersion", "Tags.update", "Tags.delete", "Table.checkout"], async () => {
  const t = await fresh(3);
  await t.add(data(10, 2));
  const tags = await t.tags();
  await tags.create("v1", 1);
  await tags.create("v2", 2);
  const listed = Object.fromEntries(Object.entries(await tags.list()).map(([k, v]) => [k, v.version]));
  await tags.update("v2", 1);
  const got = await tags.getVersion("v2");
  await tags.delete("v1");
  await t.checkout("v2");
  return { listed, got, after: Object.keys(await tags.list()), count: await t.countRows() };
});
c("Tags.getVersion missing", ["Tags.getVersion"], async () => (await (await fresh(2)).tags()).getVersion("nope"));
c("Table.branches", ["Table.branches", "Branches.create", "Branches.list", "Branches.checkout", "Branches.delete", "Table.currentBranch"], async () => {
  const t = await fresh(3);
  const br = await t.branches();
  const b = await br.create("dev");
  await b.add(data(50, 2));
  const listed = Object.keys(await br.list()).sort();
  const co = await br.checkout("dev");
  const out = { listed, main: await t.countRows(), dev: await co.countRows(), current: co.currentBranch(), mainCurrent: t.currentBranch() };
  await br.delete("dev");
  out.after = Object.keys(await br.list());
  return out;
});
c("Branches.diff", ["Branches.diff"], async () => {
  const t = await fresh(3);
  const br = await t.branches();
  const b = await br.create("d1");
  await b.add(data(50, 2));
  return pick(await br.diff("d1"), ["fromBranch", "rowCountMain", "rowCountBranch", "baseMoved"]);
});
c("Branches.cherryPick", ["Branches.cherryPick"], async () => {
  const t = await fresh(3);
  const br = await t.branches();
  await br.create("d2");
  return pick(await br.cherryPick("d2", true), ["status"]);
});

// queries
c("Query.toArray", ["Table.query", "QueryBase.toArray"], () => rows(base.query()));
c("Query.toArray maxBatchLength", ["QueryExecutionOptions.maxBatchLength"], async () => (await base.query().select(["id"]).toArray({ maxBatchLength: 10 })).length);
c("Query.toArray timeoutMs", ["QueryExecutionOptions.timeoutMs"], async () => (await base.query().select(["id"]).toArray({ timeoutMs: 60000 })).length);
c("Query.toArrow", ["QueryBase.toArrow"], async () => (await base.query().where("id < 5").toArrow()));
c("Query async iterator", ["QueryBase.toArrow"], async () => {
  let n = 0;
  for await (const b of base.query().select(["id"])) n += b.numRows;
  return n;
});
c("Query.select array", ["QueryBase.select"], () => rows(base.query().select(["id", "name"]).limit(20)));
c("Query.select record", ["QueryBase.select"], () => rows(base.query().where("id < 10").select({ d: "id * 2", u: "upper(name)", l: "length(text)" })));
c("Query.select map", ["QueryBase.select"], () => rows(base.query().where("id < 10").select(new Map([["x", "price + 1"]]))));
c("Query.select string", ["QueryBase.select"], () => rows(base.query().where("id < 10").select("name")));
c("Query.select missing", ["QueryBase.select"], () => rows(base.query().select(["nope"])));
c("Query.withRowId", ["QueryBase.withRowId"], async () => (await base.query().where("id < 3").select(["id"]).withRowId().toArray()).map((r) => [Number(r.id), typeof r._rowid]));
c("Query.explainPlan", ["QueryBase.explainPlan"], async () => typeof (await base.query().where("id > 3").explainPlan(true)) === "string");
c("Query.analyzePlan", ["QueryBase.analyzePlan"], async () => typeof (await base.query().where("id > 3").analyzePlan()) === "string");
c("Query.outputSchema", ["QueryBase.outputSchema"], () => base.query().select(["id", "name"]).outputSchema());
c("Query.outputSchema vector", ["QueryBase.outputSchema"], () => base.vectorSearch(q8).select(["id"]).outputSchema());
c("Query.where", ["StandardQueryBase.where"], () => rows(base.query().where("grp IN (1, 2) AND name LIKE 'n1%' AND NOT flag")));
c("Query.where timestamp", ["StandardQueryBase.where"], () => rows(base.query().where("ts >= timestamp '2024-01-02 00:00:00' AND ts < timestamp '2024-01-02 05:00:00'").select(["id"])));
c("Query.where isnan", ["StandardQueryBase.where"], () => rows(base.query().where("NOT isnan(price)").select(["id"]).limit(500)));
c("Query.where array_has_any", ["StandardQueryBase.where"], () => rows(base.query().where("array_has_any(tags, ['storm', 'fox'])").select(["id"])));
c("Query.where array_has_all", ["StandardQueryBase.where"], () => rows(base.query().where("array_has_all(tags, ['glacier', 'harbor'])").select(["id"])));
c("Query.where array_contains", ["StandardQueryBase.where"], () => rows(base.query().where("array_contains(tags, 'storm')").select(["id"])));
c("Query.where regexp", ["StandardQueryBase.where"], () => rows(base.query().where("regexp_match(name, '^n1[0-9]$')").select(["id"])));
c("Query.where bad", ["StandardQueryBase.where"], () => rows(base.query().where("id >>> 1")));
c("Query.filter", ["StandardQueryBase.filter"], () => rows(base.query().filter("price IS NULL").select(["id"])));
c("Query.limit", ["StandardQueryBase.limit"], async () => (await base.query().limit(7).toArray()).length);
c("Query.offset", ["StandardQueryBase.offset"], async () => (await base.query().select(["id"]).limit(5).offset(500).toArray()).length);
c("Query.orderBy", ["StandardQueryBase.orderBy", "ColumnOrdering.columnName"], async () => {
  if (!has(base.query(), "orderBy")) throw new Error("no orderBy");
  // rows of equal price may come in any order (Lance's sort is not stable across fragments):
  // the order of the prices is compared, and the rows of each price as a set
  const got = await rows(base.query().select(["id", "price"]).orderBy({ columnName: "price" }).limit(20), true);
  const runs = [];
  for (const r of got) {
    if (runs.length && runs[runs.length - 1][0].price === r.price) runs[runs.length - 1].push(r);
    else runs.push([r]);
  }
  // the last run is cut by the limit: its prices only
  return runs.map((run, i) => (i === runs.length - 1 ? { price: run[0].price } : sortRows(run)));
});
c("Query.orderBy desc nullsFirst", ["ColumnOrdering.ascending", "ColumnOrdering.nullsFirst"], () =>
  rows(base.query().select(["id", "price"]).orderBy([{ columnName: "price", ascending: false, nullsFirst: true }, { columnName: "id" }]).limit(20), true));
c("Query.fastSearch", ["StandardQueryBase.fastSearch"], async () => (await base.query().fastSearch().select(["id"]).toArray()).length);
c("Query.useLsm", ["StandardQueryBase.useLsm"], async () => (await base.query().useLsm(false).select(["id"]).toArray()).length);
c("Table.takeOffsets", ["Table.takeOffsets"], () => rows(base.takeOffsets([0, 5, 9]).select(["id", "name"])));
c("Table.takeRowIds", ["Table.takeRowIds"], async () => {
  const ids = (await base.query().where("id IN (3, 4)").withRowId().select(["id"]).toArray()).map((r) => r._rowid);
  return rows(base.takeRowIds(ids).select(["id"]));
});
c("TakeQuery.withRowId", ["TakeQuery.useLsm"], async () => (await base.takeOffsets([1, 2]).useLsm(false).select(["id"]).toArray()).length);

// vector search
c("Table.vectorSearch", ["Table.vectorSearch"], () => ranked(base.vectorSearch(q8).select(["id"]).limit(5)));
c("Table.search vector", ["Table.search"], () => ranked(base.search(q8).select(["id"]).limit(5)));
c("Table.search vector type", ["Table.search"], () => ranked(base.search(q8, "vector").select(["id"]).limit(5)));
c("Query.nearestTo", ["Query.nearestTo"], () => ranked(base.query().nearestTo(q8).select(["id"]).limit(5)));
c("VectorQuery.distanceType cosine", ["VectorQuery.distanceType"], () => ranked(base.vectorSearch(q8).distanceType("cosine").select(["id"]).limit(5)));
c("VectorQuery.distanceType dot", ["VectorQuery.distanceType"], () => ranked(base.vectorSearch(q8).distanceType("dot").select(["id"]).limit(5)));
c("VectorQuery.column", ["VectorQuery.column"], () => ranked(base.vectorSearch(q8).column("vector").select(["id"]).limit(3)));
c("VectorQuery.column missing", ["VectorQuery.column"], () => ranked(base.vectorSearch(q8).column("nope").limit(3)));
c("VectorQuery.where prefilter", ["StandardQueryBase.where"], () => ranked(base.vectorSearch(q8).where("grp = 2").select(["id"]).limit(5)));
c("VectorQuery.postfilter", ["VectorQuery.postfilter"], () => ranked(base.vectorSearch(q8).where("grp = 2").postfilter().select(["id"]).limit(5)));
c("VectorQuery.distanceRange", ["VectorQuery.distanceRange"], () => ranked(base.vectorSearch(q8).distanceRange(0.5, 3).select(["id"]).limit(5)));
c("VectorQuery.addQueryVector", ["VectorQuery.addQueryVector"], () => rows(base.vectorSearch(q8).addQueryVector(vec(7)).select(["id"]).limit(3)));
c("VectorQuery.wrong dimension", ["Table.vectorSearch"], () => rows(base.vectorSearch([1, 2, 3]).limit(3)));
c("VectorQuery.nprobes (indexed)", ["VectorQuery.nprobes"], () => ranked(idx.vectorSearch(q8).nprobes(2).select(["id"]).limit(5)));
c("VectorQuery.minimumNprobes", ["VectorQuery.minimumNprobes"], () => ranked(idx.vectorSearch(q8).minimumNprobes(2).select(["id"]).limit(5)));
c("VectorQuery.maximumNprobes", ["VectorQuery.maximumNprobes"], () => ranked(idx.vectorSearch(q8).minimumNprobes(1).maximumNprobes(2).select(["id"]).limit(5)));
c("VectorQuery.ef", ["VectorQuery.ef"], () => ranked(idx.vectorSearch(q8).ef(64).nprobes(2).select(["id"]).limit(5)));
c("VectorQuery.refineFactor", ["VectorQuery.refineFactor"], () => ranked(idx.vectorSearch(q8).refineFactor(2).nprobes(2).select(["id"]).limit(5)));
c("VectorQuery.bypassVectorIndex", ["VectorQuery.bypassVectorIndex"], () => ranked(idx.vectorSearch(q8).bypassVectorIndex().select(["id"]).limit(5)));
c("VectorQuery.fastSearch", ["StandardQueryBase.fastSearch"], () => ranked(idx.vectorSearch(q8).fastSearch().nprobes(2).select(["id"]).limit(5)));
c("VectorQuery.fastSearch no index", ["StandardQueryBase.fastSearch"], async () => (await base.vectorSearch(q8).fastSearch().select(["id"]).limit(5).toArray()).length);
c("VectorQuery.rerank hybrid", ["VectorQuery.rerank"], async () => {
  const rr = await lancedb.rerankers.RRFReranker.create();
  return rows(idx.query().nearestTo(q8).fullTextSearch("glacier").rerank(rr).select(["id"]).limit(5));
});

// full-text search
c("Table.search fts string", ["Table.search"], () => ranked(idx.search("glacier", "fts").select(["id", "_score"]).limit(10)));
c("Table.search fts columns", ["Table.search"], () => ranked(idx.search("glacier", "fts", "text").select(["id"]).limit(10)));
c("Table.search auto text", ["Table.search"], () => ranked(idx.search("river").select(["id"]).limit(10)));
c("Query.fullTextSearch", ["StandardQueryBase.fullTextSearch"], () => ranked(idx.query().fullTextSearch("storm rain").select(["id", "_score"]).limit(10)));
c("Query.fullTextSearch columns", ["FullTextSearchOptions.columns"], () => ranked(idx.query().fullTextSearch("storm", { columns: ["text"] }).select(["id"]).limit(10)));
c("Query.fullTextSearch where", ["StandardQueryBase.where"], () => ranked(idx.query().fullTextSearch("storm").where("id < 200").select(["id"]).limit(10)));
c("Query.nearestToText", ["Query.nearestToText"], () => ranked(idx.query().nearestToText("harbor").select(["id"]).limit(10)));
c("Query.fullTextSearch no index", ["StandardQueryBase.fullTextSearch"], () => rows(base.query().fullTextSearch("glacier").select(["id"]).limit(10)));
c("Query.fullTextSearch fastSearch no index", ["StandardQueryBase.fastSearch"], async () => (await base.query().fullTextSearch("glacier").fastSearch().select(["id"]).limit(10).toArray()).length);
c("MatchQuery", ["MatchQuery.queryType"], () => ranked(idx.search(new lancedb.MatchQuery("glacier river", "text", { boost: 2, operator: lancedb.Operator.And })).select(["id", "_score"]).limit(10)));
c("MatchQuery fuzzy", ["MatchQuery.queryType"], () => ranked(idx.search(new lancedb.MatchQuery("glaceir", "text", { fuzziness: 1, maxExpansions: 10, prefixLength: 1 })).select(["id", "_score"]).limit(10)));
c("PhraseQuery", ["PhraseQuery.queryType"], () => ranked(idx.search(new lancedb.PhraseQuery("quick brown", "text", { slop: 1 })).select(["id", "_score"]).limit(10)));
c("BoostQuery", ["BoostQuery.queryType"], () => ranked(idx.search(new lancedb.BoostQuery(new lancedb.MatchQuery("river", "text"), new lancedb.MatchQuery("storm", "text"), { negativeBoost: 0.3 })).select(["id", "_score"]).limit(10)));
c("MultiMatchQuery", ["MultiMatchQuery.queryType"], () => ranked(idx.search(new lancedb.MultiMatchQuery("glacier", ["text"], { boosts: [2] })).select(["id", "_score"]).limit(10)));
c("BooleanQuery", ["BooleanQuery.queryType"], () => ranked(idx.search(new lancedb.BooleanQuery([[lancedb.Occur.Must, new lancedb.MatchQuery("river", "text")], [lancedb.Occur.MustNot, new lancedb.MatchQuery("storm", "text")]])).select(["id", "_score"]).limit(10)));
c("FullTextQuery.queryType", ["MatchQuery.queryType"], () => [new lancedb.MatchQuery("a", "text").queryType(), new lancedb.PhraseQuery("a b", "text").queryType()]);
c("Table.tokenize", ["Table.tokenize"], async () => (await idx.tokenize("The Quick glaciers, running", { column: "text" })).map((x) => [x.text, x.position]));
c("Table.tokenize indexName", ["Table.tokenize"], async () => (await idx.tokenize("Storms", { indexName: "text_idx" })).map((x) => [x.text, x.position]));

// indices
const idxInfo = async (t) => (await t.listIndices()).map((i) => ({ name: i.name, type: i.indexType, columns: i.columns })).sort((a, b) => (a.name < b.name ? -1 : 1));
const stat = async (t, name) => pick(await t.indexStats(name), ["indexType", "numIndexedRows", "numUnindexedRows", "distanceType", "numIndices"]);
c("Table.listIndices", ["Table.listIndices"], () => idxInfo(idx));
c("Table.indexStats", ["Table.indexStats"], () => stat(idx, "grp_idx"));
c("Table.indexStats vector", ["Table.indexStats"], () => stat(idx, "vector_idx"));
c("Table.indexStats missing", ["Table.indexStats"], () => idx.indexStats("nope"));
const built = (label, covers, column, config, extra = {}) =>
  c("Table.createIndex " + label, covers, async () => {
    const t = await fresh(N);
    await t.createIndex(column, { config, ...extra });
    const name = extra.name ?? column + "_idx";
    return { list: await idxInfo(t), stats: await stat(t, name) };
  });
built("default vector", ["Table.createIndex"], "vector", undefined);
built("default scalar", ["Table.createIndex"], "id", undefined);
built("btree", ["Index.btree"], "id", lancedb.Index.btree());
built("bitmap", ["Index.bitmap"], "grp", lancedb.Index.bitmap());
built("labelList", ["Index.labelList"], "tags", lancedb.Index.labelList());
built("fm", ["Index.fm"], "name", has(lancedb.Index, "fm") ? lancedb.Index.fm() : undefined);
built("fts", ["Index.fts", "FtsOptions.withPosition", "FtsOptions.baseTokenizer", "FtsOptions.language", "FtsOptions.maxTokenLength", "FtsOptions.lowercase",
  "FtsOptions.stem", "FtsOptions.removeStopWords", "FtsOptions.asciiFolding"], "text",
  lancedb.Index.fts({ withPosition: false, baseTokenizer: "simple", language: "English", maxTokenLength: 30, lowercase: true, stem: true, removeStopWords: true, asciiFolding: true }));
built("fts ngram", ["FtsOptions.ngramMinLength", "FtsOptions.ngramMaxLength", "FtsOptions.prefixOnly"], "text",
  lancedb.Index.fts({ baseTokenizer: "ngram", ngramMinLength: 2, ngramMaxLength: 4, prefixOnly: true }));
built("fts customStopWords", ["FtsOptions.customStopWords"], "text", lancedb.Index.fts({ customStopWords: ["glacier"] }));
built("fts blockSize", ["FtsOptions.blockSize"], "text", lancedb.Index.fts({ blockSize: 256 }));
built("ivfPq", ["Index.ivfPq", "IvfPqOptions.numPartitions", "IvfPqOptions.numSubVectors", "IvfPqOptions.numBits", "IvfPqOptions.distanceType",
  "IvfPqOptions.maxIterations", "IvfPqOptions.sampleRate"], "vector",
  lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2, numBits: 8, distanceType: "l2", maxIterations: 10, sampleRate: 256 }));
built("ivfFlat", ["Index.ivfFlat", "IvfFlatOptions.numPartitions", "IvfFlatOptions.distanceType", "IvfFlatOptions.maxIterations", "IvfFlatOptions.sampleRate"], "vector",
  lancedb.Index.ivfFlat({ numPartitions: 2, distanceType: "cosine", maxIterations: 10, sampleRate: 256 }));
if (has(lancedb.Index, "ivfRq"))
  built("ivfRq", ["Index.ivfRq", "IvfRqOptions.numPartitions", "IvfRqOptions.numBits", "IvfRqOptions.distanceType", "IvfRqOptions.maxIterations", "IvfRqOptions.sampleRate"], "vector",
    lancedb.Index.ivfRq({ numPartitions: 2, numBits: 1, distanceType: "l2", maxIterations: 10, sampleRate: 256 }));
built("hnswPq", ["Index.hnswPq", "HnswPqOptions.distanceType", "HnswPqOptions.numPartitions", "HnswPqOptions.numSubVectors", "HnswPqOptions.maxIterations",
  "HnswPqOptions.sampleRate", "HnswPqOptions.m", "HnswPqOptions.efConstruction"], "vector",
  lancedb.Index.hnswPq({ distanceType: "l2", numPartitions: 1, numSubVectors: 2, maxIterations: 10, sampleRate: 256, m: 8, efConstruction: 50 }));
built("hnswSq", ["Index.hnswSq", "HnswSqOptions.distanceType", "HnswSqOptions.numPartitions", "HnswSqOptions.maxIterations", "HnswSqOptions.sampleRate",
  "HnswSqOptions.m", "HnswSqOptions.efConstruction"], "vector",
  lancedb.Index.hnswSq({ distanceType: "l2", numPartitions: 1, maxIterations: 10, sampleRate: 256, m: 8, efConstruction: 50 }));
built("name", ["IndexOptions.name", "IndexOptions.config"], "grp", lancedb.Index.btree(), { name: "my_grp" });
built("train false", ["IndexOptions.train"], "grp", lancedb.Index.btree(), { train: false });
built("waitTimeoutSeconds", ["IndexOptions.waitTimeoutSeconds"], "grp", lancedb.Index.bitmap(), { waitTimeoutSeconds: 30 });
c("Table.createIndex replace false", ["IndexOptions.replace"], async () => {
  const t = await fresh(20);
  await t.createIndex("id", { config: lancedb.Index.btree() });
  await t.createIndex("id", { config: lancedb.Index.btree(), replace: false });
  return idxInfo(t);
});
c("Table.createIndex replace true", ["IndexOptions.replace"], async () => {
  const t = await fresh(20);
  await t.createIndex("id", { config: lancedb.Index.btree() });
  await t.createIndex("id", { config: lancedb.Index.bitmap(), replace: true });
  return idxInfo(t);
});
c("Table.createIndex missing column", ["Table.createIndex"], async () => (await fresh(4)).createIndex("nope"));
c("Table.createIndexAsync", ["Table.createIndexAsync", "Job.wait", "Job.id", "Job.status"], async () => {
  const t = await fresh(20);
  const j = await t.createIndexAsync("id", { config: lancedb.Index.btree() });
  await j.wait();
  return { list: await idxInfo(t), hasId: j.id === null || typeof j.id === "string", status: typeof (await j.status()) };
});
c("Job getters", ["Job.state", "Job.jobType", "Job.creationMs", "Job.spec", "Job.result", "Job.failure", "Job.refresh", "Job.toString"], async () => {
  const t = await fresh(20);
  const j = await t.createIndexAsync("grp", { config: lancedb.Index.bitmap() });
  await j.wait();
  await j.refresh();
  return { state: typeof j.state, jobType: typeof j.jobType, failure: j.failure, str: typeof j.toString() };
});
c("Job.events", ["Job.events"], async () => {
  const t = await fresh(20);
  const j = await t.createIndexAsync("grp", { config: lancedb.Index.bitmap() });
  await j.wait();
  return (await j.events({ limit: 10 })).numRows >= 0;
});
c("Job.cancel", ["Job.cancel"], async () => {
  const t = await fresh(20);
  const j = await t.createIndexAsync("grp", { config: lancedb.Index.bitmap() });
  await j.wait();
  await j.cancel();
  return idxInfo(t);
});
c("Table.dropIndex", ["Table.dropIndex"], async () => {
  const t = await fresh(20);
  await t.createIndex("id", { config: lancedb.Index.btree() });
  await t.dropIndex("id_idx");
  return idxInfo(t);
});
c("Table.dropIndex missing", ["Table.dropIndex"], async () => (await fresh(3)).dropIndex("nope_idx"));
c("Table.waitForIndex", ["Table.waitForIndex"], async () => {
  const t = await fresh(20);
  await t.createIndex("id", { config: lancedb.Index.btree() });
  await t.waitForIndex(["id_idx"], 30);
  return idxInfo(t);
});
c("Table.prewarmIndex", ["Table.prewarmIndex"], () => idx.prewarmIndex("grp_idx"));
c("Table.prewarmData", ["Table.prewarmData"], () => idx.prewarmData(["id", "name"]));
c("Table.optimize", ["Table.optimize"], async () => {
  const t = await fresh(10);
  for (let i = 0; i < 3; i++) await t.add(data(100 + i * 10, 10));
  const s = await t.optimize();
  return { compaction: pick(s.compaction, ["fragmentsRemoved", "fragmentsAdded"]), rows: await t.countRows() };
});
c("Table.optimize cleanupOlderThan", ["OptimizeOptions.cleanupOlderThan", "OptimizeOptions.deleteUnverified"], async () => {
  const t = await fresh(10);
  for (let i = 0; i < 3; i++) await t.add(data(100 + i * 10, 10));
  const s = await t.optimize({ cleanupOlderThan: new Date(Date.now() + 1000), deleteUnverified: true });
  return { removed: s.prune.oldVersionsRemoved, versions: (await t.listVersions()).length, rows: await t.countRows() };
});
c("Table.optimize indices", ["Table.optimize"], async () => {
  const t = await fresh(20);
  await t.createIndex("id", { config: lancedb.Index.btree() });
  await t.add(data(100, 10));
  const before = await stat(t, "id_idx");
  await t.optimize();
  return { before, after: await stat(t, "id_idx") };
});

// permutations
const perm = async (f) => {
  const t = await fresh(100);
  const p = await f(lancedb.permutationBuilder(t)).execute();
  return { count: await p.countRows(), schema: (await p.schema()).fields.map((x) => x.name) };
};
if (has(lancedb, "permutationBuilder")) {
  c("permutationBuilder", ["PermutationBuilder.execute"], () => perm((b) => b));
  c("PermutationBuilder.splitRandom", ["PermutationBuilder.splitRandom"], () => perm((b) => b.splitRandom({ ratios: [0.5, 0.5], seed: 7 })));
  c("PermutationBuilder.splitHash", ["PermutationBuilder.splitHash"], () => perm((b) => b.splitHash({ columns: ["id"], splitWeights: [1, 1] })));
  c("PermutationBuilder.splitSequential", ["PermutationBuilder.splitSequential"], () => perm((b) => b.splitSequential({ counts: [30, 70] })));
  c("PermutationBuilder.splitCalculated", ["PermutationBuilder.splitCalculated"], () => perm((b) => b.splitCalculated({ calculation: "id % 2" })));
  c("PermutationBuilder.shuffle", ["PermutationBuilder.shuffle"], () => perm((b) => b.shuffle({ seed: 3 })));
  c("PermutationBuilder.filter", ["PermutationBuilder.filter"], () => perm((b) => b.filter("id < 40")));
  c("PermutationBuilder.persist", ["PermutationBuilder.persist"], () => perm((b) => b.persist(db, "perm_out")));
}

// ---- run ----
const out = [];
for (const k of cases) {
  const before = await sentSoFar();
  try {
    const value = canon(await k.fn());
    out.push({ name: k.name, covers: k.covers, value });
  } catch (e) {
    const sent = remote ? await (await fetch(job.conn.url + "/__surface/log?from=" + before)).json() : [];
    out.push({ name: k.name, covers: k.covers, error: String(e?.message ?? e).slice(0, 500), sent });
  }
}
console.log(JSON.stringify({ version, cases: out }));
