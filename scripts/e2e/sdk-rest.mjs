// End-to-end check of lancecat with the official LanceDB Node SDK: drives connectNamespace("rest")
// against a running `lancecat serve`, then opens the same root with connectNamespace("dir") and
// checks it sees the same namespaces, tables and rows. Exits non-zero on the first failure.
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-rest.mjs <catalog url> <root dir>
import { createRequire } from "node:module";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");

const [uri, root] = process.argv.slice(2);
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

const db = await lancedb.connectNamespace("rest", { uri });

// Namespaces.
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

// Tables.
const rows = [{ id: 1, name: "a", vector: [1, 0] }, { id: 2, name: "b", vector: [0, 1] }, { id: 3, name: "c", vector: [1, 1] }];
let t = await db.createTable("items", rows, ["prod"]);
ok((await t.countRows()) === 3, "count after create");
await db.createTable("rootitems", [{ x: 1 }]);
await fails(() => db.createTable("items", rows, ["prod"]), "already exists", "duplicate table");
await db.createTable("items", rows, ["prod"], { mode: "exist_ok" });
await fails(() => db.createTable("t", rows, ["missing"]), "not found", "create in a missing namespace");
ok(same(await db.tableNames(["prod"]), ["items"]), "tableNames(prod)");
ok(same(await db.tableNames([]), ["rootitems"]), "tableNames(root)");
for (const n of ["b1", "b2", "b3"]) await db.createEmptyTable(n, t.schema ? await t.schema() : undefined, ["a1"]);
ok(same(await db.tableNames(["a1"], { limit: 2 }), ["b1", "b2"]), "tableNames limit");
ok(same(await db.tableNames(["a1"], { startAfter: "b1" }), ["b2", "b3"]), "tableNames startAfter");
await fails(() => db.openTable("missing", ["prod"]), "was not found", "open a missing table");

// Data through the returned location.
t = await db.openTable("items", ["prod"]);
await t.add([{ id: 4, name: "d", vector: [2, 2] }]);
ok((await t.countRows()) === 4, "count after add");
ok((await t.countRows("id > 2")) === 2, "count with filter");
const q = await t.query().where("id = 2").select(["name"]).toArray();
ok(q.length === 1 && q[0].name === "b", "query where/select");
const nn = await t.search([0, 1]).limit(1).toArray();
ok(nn[0].id === 2, "vector search");
const t2 = await (await lancedb.connectNamespace("rest", { uri })).openTable("items", ["prod"]);
ok((await t2.countRows()) === 4, "a second client sees the writes");

// Rename within and across namespaces, onto a taken name.
await db.renameTable("items", "items2", { namespacePath: ["prod"] });
await fails(() => db.openTable("items", ["prod"]), "was not found", "renamed-away name");
ok((await (await db.openTable("items2", ["prod"])).countRows()) === 4, "renamed table opens");
await db.renameTable("items2", "moved", { namespacePath: ["prod"], newNamespacePath: ["prod", "team"] });
ok((await (await db.openTable("moved", ["prod", "team"])).countRows()) === 4, "moved table opens");
await db.createTable("taken", [{ x: 1 }], ["prod", "team"]);
await fails(() => db.renameTable("moved", "taken", { namespacePath: ["prod", "team"] }), "already exists", "rename onto a taken name");

// Drop, re-create, namespace drops.
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

// The same root through LanceDB's own directory namespace.
const dir = await lancedb.connectNamespace("dir", { root });
ok(same((await dir.listNamespaces([])).namespaces, ["a3", "a4", "a5", "prod"]), "dir: namespaces " + JSON.stringify(await dir.listNamespaces([])));
ok(same((await dir.listNamespaces(["prod"])).namespaces, ["team"]), "dir: child namespaces");
ok(same(await dir.tableNames(["prod", "team"]), ["moved"]), "dir: tables");
ok(same(await dir.tableNames([]), ["rootitems", "rootitems2"]), "dir: root tables " + JSON.stringify(await dir.tableNames([])));
ok((await (await dir.openTable("moved", ["prod", "team"])).countRows()) === 4, "dir: rows");
ok((await dir.describeNamespace(["prod"])).properties.owner === "alice", "dir: properties");
// And back: what the dir client writes, lancecat serves.
await dir.createTable("fromdir", [{ x: 1 }], ["prod"]);
ok(same(await db.tableNames(["prod"]), ["fromdir"]), "rest sees dir's table");
ok((await (await db.openTable("fromdir", ["prod"])).countRows()) === 1, "rest opens dir's table");

console.log(`ok: ${checks} checks`);
