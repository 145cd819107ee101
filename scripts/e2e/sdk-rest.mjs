// End-to-end check of lancecat with the official LanceDB Node SDK: drives connectNamespace("rest")
// against a running `lancecat serve`, then opens the same root with connectNamespace("dir") and
// checks it sees the same namespaces, tables and rows. Exits non-zero on the first failure.
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-rest.mjs <catalog url> <root>
// env:   LANCECAT_E2E_MANAGED=1     the root has table_version_management=true: every table must
//                                   be answered with managed_versioning (commits go through the
//                                   catalog's create_table_version)
//        LANCECAT_E2E_DIR_STORAGE   JSON storage options for connectNamespace("dir") (an S3 root)
//        AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
//                                   the client's own S3 credentials (an S3 root): lancecat answers
//                                   table locations with endpoint hints only, never its own keys
//        LANCECAT_E2E_HEADERS       JSON HTTP headers sent with every catalog request, by the SDK
//                                   and by the direct calls (e.g. {"x-api-key": "..."} against a
//                                   catalog with authorization on)
//        LANCECAT_E2E_AUTHZ=1       the catalog runs with authorization on (the headers identify an
//                                   estate admin): what differs is checked explicitly below
import { createRequire } from "node:module";
import { readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");

const [uri, root] = process.argv.slice(2);
const managed = process.env.LANCECAT_E2E_MANAGED === "1";
const dirStorage = JSON.parse(process.env.LANCECAT_E2E_DIR_STORAGE || "{}");
const headers = JSON.parse(process.env.LANCECAT_E2E_HEADERS || "{}");
const authorized = process.env.LANCECAT_E2E_AUTHZ === "1";
const local = !root.includes("://");
let checks = 0;
function ok(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
  checks++;
}
async function fails(fn, want, what) {
  try {
    await fn();
  } catch (e) {
    const msg = String(e && e.message ? e.message : e);
    if (/Failed to parse error response|Internal error/.test(msg)) throw new Error(`${what}: unparsable error: ${msg}`);
    if (!msg.includes(want)) throw new Error(`${what}: want an error with "${want}", got: ${msg}`);
    checks++;
    return;
  }
  throw new Error(`${what}: succeeded, want an error with "${want}"`);
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const step = (name) => console.log(`-- ${name} (${checks} checks so far)`);

// rest calls a lancecat route directly (operations the Node SDK never sends itself).
async function rest(route, body, query = "") {
  const r = await fetch(`${uri}${route}?delimiter=%24${query}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body === undefined ? null : body),
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${route}: status ${r.status}, body is not JSON: ${text}`);
  }
  return { status: r.status, json };
}
const tid = (...parts) => parts.map(encodeURIComponent).join("%24");
async function restOK(route, body, what, query) {
  const r = await rest(route, body, query);
  if (r.status !== 200) throw new Error(`${what}: status ${r.status}: ${JSON.stringify(r.json)}`);
  checks++;
  return r.json;
}
async function restCode(route, body, code, what, query) {
  const r = await rest(route, body, query);
  if (r.json.code !== code) throw new Error(`${what}: want code ${code}, got status ${r.status}: ${JSON.stringify(r.json)}`);
  checks++;
  return r.json;
}
// stagingLeft lists staged manifests left in a local table's _versions/ (managed mode publishes
// and deletes them).
function stagingLeft(location) {
  if (!local) return [];
  const dir = join(location.replace(/^file:\/\//, ""), "_versions");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => n.includes(".manifest-"));
}
async function describe(...id) {
  return restOK(`/v1/table/${tid(...id)}/describe`, { id }, `describe ${id.join("$")}`);
}

const restConfig = Object.keys(headers).length ? { uri, headers } : { uri };
// On an S3 root the SDK brings its own credentials (AWS_* in its environment): lancecat answers
// table locations with connection hints only (unless its operator opted into
// --vend-static-credentials).
const db = await lancedb.connectNamespace("rest", restConfig);

step("namespaces");
await db.createNamespace(["prod"], { properties: { owner: "alice" } });
await db.createNamespace(["prod", "team"]);
await fails(() => db.createNamespace(["prod"]), "already exists", "duplicate namespace");
await db.createNamespace(["prod"], { mode: "exist_ok" });
await fails(() => db.createNamespace(["nope", "x"]), "not found", "namespace under a missing parent");
const desc = await db.describeNamespace(["prod"]);
ok(desc.properties && desc.properties.owner === "alice", "describe returns properties: " + JSON.stringify(desc));
await fails(() => db.describeNamespace(["missing"]), "Namespace not found", "describe a missing namespace");
for (const n of ["a1", "a2", "a3", "a4", "a5"]) await db.createNamespace([n]);
ok(same((await db.listNamespaces([])).namespaces, ["a1", "a2", "a3", "a4", "a5", "prod"]), "list root namespaces");
ok(same((await db.listNamespaces(["prod"])).namespaces, ["team"]), "list child namespaces");
{
  const seen = [];
  let pageToken;
  for (;;) {
    const r = await db.listNamespaces([], { limit: 2, pageToken });
    seen.push(...r.namespaces);
    if (!r.pageToken) break;
    pageToken = r.pageToken;
  }
  ok(same(seen, ["a1", "a2", "a3", "a4", "a5", "prod"]), "namespace pagination: " + JSON.stringify(seen));
}

step("tables");
const rows = [{ id: 1, name: "a", vector: [1, 0] }, { id: 2, name: "b", vector: [0, 1] }, { id: 3, name: "c", vector: [1, 1] }];
let t = await db.createTable("items", rows, ["prod"]);
ok((await t.countRows()) === 3, "count after create");
{
  const d = await describe("prod", "items");
  ok(d.location, "describe answers a location");
  ok(managed ? d.managed_versioning === true : !d.managed_versioning, "describe managed_versioning=" + d.managed_versioning);
  ok(d.version === 1 && d.schema && d.schema.fields.length === 3, "describe version and schema: " + JSON.stringify(d.version));
  ok(same(stagingLeft(d.location), []), "no staged manifest left behind");
  if (!local) {
    const so = d.storage_options || {};
    ok(d.location.startsWith(root + "/"), "an S3 location under the root: " + d.location);
    ok(so.aws_endpoint && so.aws_region && so.allow_http === "true" && so.aws_virtual_hosted_style_request === "false",
      "storage_options name the store: " + JSON.stringify(Object.keys(so)));
    ok(!so.aws_access_key_id && !so.aws_secret_access_key && !so.aws_session_token,
      "storage_options never carry the server's credentials: " + JSON.stringify(Object.keys(so)));
  }
}
await db.createTable("rootitems", [{ x: 1 }]);
await fails(() => db.createTable("items", rows, ["prod"]), "already exists", "duplicate table");
await db.createTable("items", rows, ["prod"], { mode: "exist_ok" });
await fails(() => db.createTable("t", rows, ["missing"]), "not found", "create in a missing namespace");
ok(same(await db.tableNames(["prod"]), ["items"]), "tableNames(prod)");
ok(same(await db.tableNames([]), ["rootitems"]), "tableNames(root)");
for (const n of ["b1", "b2", "b3"]) await db.createEmptyTable(n, await t.schema(), ["a1"]);
ok((await (await db.openTable("b2", ["a1"])).schema()).fields.length === 3, "createEmptyTable keeps the schema");
ok((await (await db.openTable("b2", ["a1"])).countRows()) === 0, "createEmptyTable is empty");
ok(same(await db.tableNames(["a1"], { limit: 2 }), ["b1", "b2"]), "tableNames limit");
ok(same(await db.tableNames(["a1"], { startAfter: "b1" }), ["b2", "b3"]), "tableNames startAfter");
await fails(() => db.openTable("missing", ["prod"]), "was not found", "open a missing table");
// Overwrite mode, on a new and on an existing table.
let ow = await db.createTable("ow", rows, ["prod"], { mode: "overwrite" });
ok((await ow.countRows()) === 3, "overwrite on a new table");
ow = await db.createTable("ow", [{ id: 9, name: "z", vector: [9, 9] }], ["prod"], { mode: "overwrite" });
ok((await ow.countRows()) === 1, "overwrite on an existing table");
ok((await ow.version()) === 2, "overwrite is the next version: " + (await ow.version()));
await db.dropTable("ow", ["prod"]);

step("data through the returned location");
t = await db.openTable("items", ["prod"]);
await t.add([{ id: 4, name: "d", vector: [2, 2] }]);
ok((await t.countRows()) === 4, "count after add");
ok((await t.countRows("id > 2")) === 2, "count with filter");
const q = await t.query().where("id = 2").select(["name"]).toArray();
ok(q.length === 1 && q[0].name === "b", "query where/select");
const nn = await t.search([0, 1]).limit(1).toArray();
ok(nn[0].id === 2, "vector search");
const t2 = await (await lancedb.connectNamespace("rest", restConfig)).openTable("items", ["prod"]);
ok((await t2.countRows()) === 4, "a second client sees the writes");
await t.update({ values: { name: "dd" }, where: "id = 4" });
ok((await t.countRows("name = 'dd'")) === 1, "update");
await t.delete("id = 3");
ok((await t.countRows()) === 3, "delete");
await t
  .mergeInsert("id")
  .whenMatchedUpdateAll()
  .whenNotMatchedInsertAll()
  .execute([{ id: 2, name: "bb", vector: [0, 1] }, { id: 5, name: "e", vector: [3, 3] }]);
ok((await t.countRows()) === 4, "merge insert count");
ok((await t.countRows("name = 'bb'")) === 1, "merge insert updated the match");
await t.createIndex("id");
ok((await t.listIndices()).length === 1, "btree index: " + JSON.stringify(await t.listIndices()));
{
  const vrows = [];
  for (let i = 0; i < 300; i++) vrows.push({ id: i, vector: Array.from({ length: 8 }, (_, j) => Math.sin(i * 7 + j)) });
  const vt = await db.createTable("vecs", vrows, ["prod"]);
  await vt.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }) });
  ok((await vt.listIndices()).some((i) => i.indexType === "IvfPq"), "IVF_PQ index: " + JSON.stringify(await vt.listIndices()));
  const hit = await vt.search(vrows[42].vector).limit(1).refineFactor(10).toArray();
  ok(hit[0].id === 42, "vector search through the IVF_PQ index: " + hit[0].id);
}
const t3 = await (await lancedb.connectNamespace("rest", restConfig)).openTable("items", ["prod"]);
ok((await t3.countRows()) === 4 && (await t3.countRows("name = 'bb'")) === 1, "a second client sees update/delete/merge");

step("versions, tags, checkout, restore");
{
  const v = await t.version();
  const versions = await t.listVersions();
  ok(versions.length === v && versions[versions.length - 1].version === v, `listVersions (${versions.length}) ends at version ${v}`);
  const tags = await t.tags();
  await tags.create("first", 1);
  ok(Object.keys(await tags.list()).includes("first"), "tags list");
  ok((await tags.getVersion("first")) === 1, "tag getVersion");
  await tags.update("first", 2);
  ok((await tags.getVersion("first")) === 2, "tag update");
  await tags.delete("first");
  ok(!Object.keys(await tags.list()).includes("first"), "tag delete");
  await tags.create("v1", 1);
  await t.checkout(1);
  ok((await t.countRows()) === 3, "checkout(1)");
  await t.checkoutLatest();
  ok((await t.countRows()) === 4, "checkoutLatest");
  await t.checkout("v1");
  ok((await t.countRows()) === 3, "checkout(tag)");
  await t.checkout(2);
  await t.restore();
  ok((await t.version()) === v + 1, "restore commits a new version");
  ok((await t.countRows()) === 4 && (await t.countRows("name = 'd'")) === 1, "restore brings version 2 back");
  const old = await db.openTable("items", ["prod"], { version: 1 });
  ok((await old.countRows()) === 3, "openTable with a version");
  const r = await restOK(`/v1/table/${tid("prod", "items")}/version/list`, null, "version/list", "&descending=true&limit=1");
  ok(r.versions.length === 1 && r.versions[0].version === v + 1, "the catalog lists the SDK's latest version: " + JSON.stringify(r));
}

step("schema evolution");
await t.addColumns([{ name: "double_id", valueSql: "id * 2" }]);
ok((await t.countRows("double_id = 4")) === 1, "addColumns");
await t.alterColumns([{ path: "double_id", rename: "did" }]);
ok((await t.schema()).fields.some((f) => f.name === "did"), "alterColumns rename");
await t.dropColumns(["did"]);
ok(!(await t.schema()).fields.some((f) => f.name === "did"), "dropColumns");

step("branches");
{
  const br = await t.branches();
  const dev = await br.create("dev");
  await dev.add([{ id: 100, name: "dev", vector: [5, 5] }]);
  ok((await dev.countRows()) === 5, "a branch takes writes");
  ok((await t.countRows()) === 4, "main does not see the branch's writes");
  if (managed) {
    const r = await restOK(`/v1/table/${tid("prod", "items")}/version/list`, null, "branch version/list", "&descending=true&limit=1&branch=dev");
    ok(r.versions.length === 1 && r.versions[0].version === (await dev.version()), "the catalog lists the branch's versions: " + JSON.stringify(r));
  }
}

step("table operations through the catalog");
{
  const ops = await db.createTable("ops", rows, ["prod"]);
  await ops.add([{ id: 4, name: "d", vector: [2, 2] }]); // version 2
  const p = `/v1/table/${tid("prod", "ops")}`;
  const st = await restOK(`${p}/stats`, {}, "stats");
  ok(st.num_rows === 4 && st.fragment_stats.num_fragments === 2, "stats: " + JSON.stringify(st));
  await restCode(`/v1/table/${tid("prod", "nope")}/stats`, {}, 4, "stats of a missing table");
  const vd = await restOK(`${p}/version/describe`, { version: 1 }, "version/describe");
  ok(vd.version.version === 1 && vd.version.manifest_path.endsWith(".manifest") && vd.version.timestamp_millis > 0, "version/describe: " + JSON.stringify(vd));
  await restCode(`${p}/version/describe`, { version: 99 }, 11, "describe a missing version");
  const vl = await restOK(`${p}/version/list`, null, "version/list ascending");
  ok(same(vl.versions.map((v) => v.version).sort(), [1, 2]), "version/list: " + JSON.stringify(vl.versions.map((v) => v.version)));
  await restCode(`/v1/table/${tid("prod", "nope")}/version/list`, null, 4, "versions of a missing table");
  const nb = await restOK(`${p}/version/list`, null, "version/list of an unknown branch", "&branch=nobranch");
  ok(same(nb.versions, []), "an unknown branch has no versions");

  await restOK(`${p}/tags/create`, { tag: "t1", version: 1 }, "tags/create");
  await restCode(`${p}/tags/create`, { tag: "t1", version: 2 }, 9, "create a taken tag");
  await restCode(`${p}/tags/create`, { tag: "t9", version: 99 }, 11, "tag a missing version");
  ok((await restOK(`${p}/tags/version`, { tag: "t1" }, "tags/version")).version === 1, "tag version");
  ok((await (await ops.tags()).getVersion("t1")) === 1, "the SDK sees the catalog's tag");
  await restOK(`${p}/tags/update`, { tag: "t1", version: 2 }, "tags/update");
  const tl = await restOK(`${p}/tags/list`, null, "tags/list");
  ok(tl.tags.t1 && tl.tags.t1.version === 2, "tags/list: " + JSON.stringify(tl));
  await restOK(`${p}/tags/delete`, { tag: "t1" }, "tags/delete");
  await restCode(`${p}/tags/version`, { tag: "t1" }, 8, "a deleted tag");
  await restCode(`${p}/tags/delete`, { tag: "t1" }, 8, "delete a missing tag");

  let md = await restOK(`${p}/schema_metadata/update`, { a: "1", b: "2" }, "schema_metadata/update");
  ok(md.a === "1" && md.b === "2", "schema metadata set: " + JSON.stringify(md));
  md = await restOK(`${p}/schema_metadata/update`, { a: null }, "schema_metadata/update delete");
  ok(md.a === undefined && md.b === "2", "schema metadata merge, null deletes: " + JSON.stringify(md));
  const fm = await restOK(`${p}/update_field_metadata`, { updates: [{ path: "name", metadata: { k: "v" } }] }, "update_field_metadata");
  ok(fm.fields && fm.fields.name && fm.fields.name.k === "v", "field metadata: " + JSON.stringify(fm));
  await restCode(`${p}/update_field_metadata`, { updates: [{ path: "nope", metadata: { k: "v" } }] }, 12, "field metadata of a missing column");
  let reopened = await db.openTable("ops", ["prod"]);
  const sch = await reopened.schema();
  ok(sch.metadata.get("b") === "2" && !sch.metadata.has("a"), "the SDK sees the schema metadata");
  ok(sch.fields.find((f) => f.name === "name").metadata.get("k") === "v", "the SDK sees the field metadata");

  await restOK(`${p}/alter_columns`, { alterations: [{ path: "name", rename: "label" }] }, "alter_columns");
  await restCode(`${p}/alter_columns`, { alterations: [{ path: "nope", rename: "x" }] }, 12, "alter a missing column");
  reopened = await db.openTable("ops", ["prod"]);
  ok((await reopened.query().where("label = 'd'").toArray()).length === 1, "the SDK reads the renamed column");
  await restOK(`${p}/drop_columns`, { columns: ["label"] }, "drop_columns");
  await restCode(`${p}/drop_columns`, { columns: ["nope"] }, 12, "drop a missing column");
  reopened = await db.openTable("ops", ["prod"]);
  ok(same((await reopened.schema()).fields.map((f) => f.name), ["id", "vector"]), "the SDK sees the dropped column gone");

  await restOK(`${p}/restore`, { version: 1 }, "restore");
  await restCode(`${p}/restore`, { version: 99 }, 11, "restore a missing version");
  reopened = await db.openTable("ops", ["prod"]);
  ok((await reopened.countRows()) === 3 && (await reopened.schema()).fields.length === 3, "the SDK sees the restored version");
  await reopened.add([{ id: 7, name: "g", vector: [7, 7] }]);
  ok((await reopened.countRows()) === 4, "the SDK writes on top of a catalog commit");
  const del = await restOK(`${p}/version/delete`, { ranges: [{ start_version: 1, end_version: 2 }] }, "version/delete");
  ok(del.deleted_count === 1, "version/delete: " + JSON.stringify(del));
  await restCode(`${p}/version/describe`, { version: 1 }, 11, "a deleted version");
}

step("create_table with an Arrow IPC body");
{
  const arrow = require("apache-arrow");
  const ipc = (cols) => arrow.tableToIPC(arrow.tableFromArrays(cols), "stream");
  async function create(name, body, query = "") {
    const r = await fetch(`${uri}/v1/table/${tid("prod", name)}/create?delimiter=%24${query}`, {
      method: "POST", headers: { ...headers, "content-type": "application/vnd.apache.arrow.stream" }, body,
    });
    return { status: r.status, json: JSON.parse(await r.text()) };
  }
  let r = await create("ipc", ipc({ id: Int32Array.from([1, 2, 3]), name: ["a", "b", "c"], score: Float64Array.from([0.5, 1.5, 2.5]) }),
    "&properties=" + encodeURIComponent(JSON.stringify({ src: "ipc" })));
  ok(r.status === 200 && r.json.version === 1 && r.json.properties.src === "ipc", "create_table: " + JSON.stringify(r.json));
  let it = await db.openTable("ipc", ["prod"]);
  ok((await it.countRows()) === 3, "the SDK counts the catalog-written rows");
  const row = await it.query().where("id = 2").toArray();
  ok(row.length === 1 && row[0].name === "b" && row[0].score === 1.5, "the SDK reads the catalog-written values: " + JSON.stringify(row));
  await it.add([{ id: 4, name: "d", score: 3.5 }]);
  ok((await it.countRows()) === 4, "the SDK appends to a catalog-written table");
  r = await create("ipc", ipc({ id: Int32Array.from([9]) }));
  ok(r.json.code === 5, "create_table on a taken name: " + JSON.stringify(r.json));
  r = await create("ipc", ipc({ id: Int32Array.from([9]) }), "&mode=ExistOk");
  ok(r.status === 200, "create_table ExistOk");
  ok((await (await db.openTable("ipc", ["prod"])).countRows()) === 4, "ExistOk leaves the table alone");
  r = await create("ipc", ipc({ id: Int32Array.from([7, 8]), tag: ["x", "y"] }), "&mode=Overwrite");
  ok(r.status === 200 && r.json.version === 3, "create_table Overwrite: " + JSON.stringify(r.json));
  it = await db.openTable("ipc", ["prod"]);
  ok((await it.countRows()) === 2 && same((await it.schema()).fields.map((f) => f.name), ["id", "tag"]), "Overwrite replaces rows and schema");
  await it.checkout(1);
  ok((await it.countRows()) === 3, "the overwritten version is still there");
  const schemaOnly = new arrow.Schema([new arrow.Field("k", new arrow.Int64(), true), new arrow.Field("v", new arrow.Utf8(), true)]);
  r = await create("ipcempty", arrow.tableToIPC(new arrow.Table(schemaOnly), "stream"));
  ok(r.status === 200, "create_table with an empty stream: " + JSON.stringify(r.json));
  const et = await db.openTable("ipcempty", ["prod"]);
  ok((await et.countRows()) === 0 && same((await et.schema()).fields.map((f) => f.name), ["k", "v"]), "an empty stream makes an empty table");
  r = await create("ipcbad", new Uint8Array([255, 255, 255, 255, 16, 0, 0, 0, 1, 2, 3]));
  ok(r.json.code === 13, "a broken stream is invalid input: " + JSON.stringify(r.json));
  await restCode(`/v1/table/${tid("prod", "ipcbad")}/describe`, { id: ["prod", "ipcbad"] }, 4, "a refused create leaves no table");
  await db.dropTable("ipc", ["prod"]);
  await db.dropTable("ipcempty", ["prod"]);
}

if (managed) {
  step("managed versioning");
  const d = await describe("prod", "items");
  const latest = await t.version();
  const dv = await restOK(`/v1/table/${tid("prod", "items")}/version/describe`, { version: latest }, "describe the latest version");
  ok(!dv.version.manifest_path.includes("://") && !dv.version.manifest_path.startsWith("/"), "manifest_path in object-store form: " + dv.version.manifest_path);
  // A taken version: 409 code 14, and the published manifest is untouched.
  await restCode(`/v1/table/${tid("prod", "items")}/version/create`,
    { version: latest, manifest_path: dv.version.manifest_path.replace(/\.manifest$/, ".manifest-staged"), naming_scheme: "V2" }, 14, "create a taken version");
  ok((await t.countRows()) === 4, "a refused create changes nothing");
  ok(same(stagingLeft(d.location), []), "no staged manifest left behind after every commit");
}

step("concurrent creates and renames over HTTP");
{
  const declares = await Promise.all(Array.from({ length: 8 }, () => rest(`/v1/table/${tid("prod", "race")}/declare`, { id: ["prod", "race"] })));
  ok(declares.filter((r) => r.status === 200).length === 1, "8 concurrent creates: one succeeds: " + JSON.stringify(declares.map((r) => r.status)));
  ok(declares.filter((r) => r.json.code === 5).length === 7, "8 concurrent creates: seven get code 5");
  await db.dropTable("race", ["prod"]);
  await db.createTable("rsrc", rows, ["prod"]);
  const renames = await Promise.all(Array.from({ length: 8 }, (_, i) =>
    rest(`/v1/table/${tid("prod", "rsrc")}/rename`, { id: ["prod", "rsrc"], new_table_name: `r${i}` })));
  ok(renames.filter((r) => r.status === 200).length === 1, "8 concurrent renames: one succeeds: " + JSON.stringify(renames.map((r) => r.status)));
  ok(renames.filter((r) => r.status !== 200).every((r) => r.json.code === 4), "8 concurrent renames: the others find no source: " + JSON.stringify(renames.map((r) => r.json.code)));
  const names = (await db.tableNames(["prod"])).filter((n) => /^r\d$|^rsrc$/.test(n));
  ok(names.length === 1 && names[0] !== "rsrc", "the table lives at exactly one id: " + JSON.stringify(names));
  ok((await (await db.openTable(names[0], ["prod"])).countRows()) === 3, "the renamed table is readable");
  await db.renameTable(names[0], "raced", { namespacePath: ["prod"] });
}

step("rename");
await db.renameTable("items", "items2", { namespacePath: ["prod"] });
await fails(() => db.openTable("items", ["prod"]), "was not found", "renamed-away name");
ok((await (await db.openTable("items2", ["prod"])).countRows()) === 4, "renamed table opens");
await db.renameTable("items2", "moved", { namespacePath: ["prod"], newNamespacePath: ["prod", "team"] });
ok((await (await db.openTable("moved", ["prod", "team"])).countRows()) === 4, "moved table opens");
await db.createTable("taken", [{ x: 1 }], ["prod", "team"]);
await fails(() => db.renameTable("moved", "taken", { namespacePath: ["prod", "team"] }), "already exists", "rename onto a taken name");
{
  const moved = await db.openTable("moved", ["prod", "team"]);
  await moved.add([{ id: 6, name: "f", vector: [6, 6] }]);
  ok((await moved.countRows()) === 5, "a renamed table takes writes");
}

step("drop");
await db.dropTable("taken", ["prod", "team"]);
await fails(() => db.openTable("taken", ["prod", "team"]), "was not found", "open a dropped table");
await fails(() => db.dropTable("taken", ["prod", "team"]), "not found", "drop a missing table");
await db.createTable("rootitems2", [{ x: 1 }]);
await db.dropTable("rootitems2");
t = await db.createTable("rootitems2", [{ x: 5 }, { x: 6 }]);
ok((await t.countRows()) === 2, "re-create after drop");
await fails(() => db.dropNamespace(["a1"]), "not empty", "drop a non-empty namespace");
await db.dropAllTables(["a1"]);
ok(same(await db.tableNames(["a1"]), []), "dropAllTables");
await db.dropNamespace(["a1"]);
await db.createTable("z", [{ x: 1 }], ["a2"]);
await db.dropNamespace(["a2"], { behavior: "cascade" });
await db.dropNamespace(["a2"], { mode: "skip" });
await fails(() => db.dropNamespace(["a2"], { mode: "fail" }), "not found", "drop a missing namespace");

step("the same root through LanceDB's own directory namespace");
const extraProperties = {};
for (const [k, v] of Object.entries(dirStorage)) extraProperties["storage." + k] = v;
const dir = await lancedb.connectNamespace("dir", { root, extraProperties }, { storageOptions: dirStorage });
ok(same((await dir.listNamespaces([])).namespaces, ["a3", "a4", "a5", "prod"]), "dir: namespaces " + JSON.stringify(await dir.listNamespaces([])));
ok(same((await dir.listNamespaces(["prod"])).namespaces, ["team"]), "dir: child namespaces");
ok(same(await dir.tableNames(["prod"]), await db.tableNames(["prod"])), "dir: tables of prod " + JSON.stringify(await dir.tableNames(["prod"])));
ok(same(await dir.tableNames(["prod", "team"]), ["moved"]), "dir: tables");
ok(same(await dir.tableNames([]), ["rootitems", "rootitems2"]), "dir: root tables " + JSON.stringify(await dir.tableNames([])));
ok((await (await dir.openTable("moved", ["prod", "team"], { storageOptions: dirStorage })).countRows()) === 5, "dir: rows");
ok((await (await dir.openTable("ops", ["prod"], { storageOptions: dirStorage })).countRows()) === 4, "dir: rows of catalog-side commits");
ok((await dir.describeNamespace(["prod"])).properties.owner === "alice", "dir: properties");
// And back: what the dir client writes, lancecat serves.
// (An S3 root: LanceDB's dir client needs the storage options again on every table it opens.)
await dir.createTable("fromdir", [{ x: 1 }], ["prod"], { storageOptions: dirStorage });
if (authorized) {
  // With authorization on, a table written behind the catalog's back has no tuples yet. A listing
  // is decided by the caller's reads on the namespace (authz.FilterListing), which covers every
  // table in it, so the estate admin sees it at once; the first request for it attaches it to its
  // namespace (adoption), after which it is governed like any other table.
  ok((await db.tableNames(["prod"])).includes("fromdir"), "authorized: rest lists dir's table to whoever reads its namespace");
  ok((await (await db.openTable("fromdir", ["prod"])).countRows()) === 1, "authorized: rest opens dir's table, adopting it");
  ok((await db.tableNames(["prod"])).includes("fromdir"), "authorized: the adopted table is listed");
} else {
  ok((await db.tableNames(["prod"])).includes("fromdir"), "rest sees dir's table");
  ok((await (await db.openTable("fromdir", ["prod"])).countRows()) === 1, "rest opens dir's table");
}

console.log(`ok: ${checks} checks`);
