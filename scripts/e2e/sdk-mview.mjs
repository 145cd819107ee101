// Reads a table through the official LanceDB Node SDK in namespace mode (connectNamespace
// "rest") and prints {"fields": [...], "rows": [...]} as JSON: e2e/mview_test.go checks that a
// materialized view (and a backfilled computed column) is an ordinary table to a client.
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-mview.mjs <catalog url> <namespace> <table> [columns,...]
import { createRequire } from "node:module";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");

const [uri, ns, name, cols] = process.argv.slice(2);
const db = await lancedb.connectNamespace("rest", { uri });
const t = await db.openTable(name, [ns]);
const schema = await t.schema();
let q = t.query();
if (cols) q = q.select(cols.split(","));
const rows = (await q.toArray()).map((r) => {
  const o = {};
  for (const [k, v] of Object.entries(r.toJSON ? r.toJSON() : r)) o[k] = typeof v === "bigint" ? Number(v) : v;
  return o;
});
console.log(JSON.stringify({ fields: schema.fields.map((f) => f.name), rows }));
