// The Node half of the cross-client test (e2e/python_cross_test.go): the Node SDK, in remote mode,
// reads what the Python SDK wrote (scripts/e2e/python/test_cross.py, phase "python-writes") and
// writes what the Python SDK then reads (phase "python-reads"). Exits non-zero on the first failure.
//
// usage: LANCEDB_DIR=<node sdk install dir> node cross.mjs <catalog url>
// env:   LANCECAT_E2E_API_KEY   the API key (authorization on), else a placeholder
import { createRequire } from "node:module";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");

const [uri] = process.argv.slice(2);
const apiKey = process.env.LANCECAT_E2E_API_KEY || "cross-e2e";
const headers = process.env.LANCECAT_E2E_API_KEY ? { "x-api-key": apiKey } : {};
let checks = 0;
function ok(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
  checks++;
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const remote = await lancedb.connect("db://lancecat", { apiKey, hostOverride: uri });
const nsdb = await lancedb.connectNamespace("rest", Object.keys(headers).length ? { uri, headers } : { uri });

// What Python wrote: table "from_py" in namespace "cross" (ids 0..9, name "py<i>", then id 3 renamed
// "py-three" by a Python update and id 9 deleted), and "py_root" at the root through remote mode.
const t = await nsdb.openTable("from_py", ["cross"]);
const rows = (await t.query().select(["id", "name"]).toArray()).map((r) => ({ id: Number(r.id), name: r.name })).sort((a, b) => a.id - b.id);
const want = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => ({ id: i, name: i === 3 ? "py-three" : `py${i}` }));
ok(same(rows, want), "Node (namespace mode) reads Python's rows: " + JSON.stringify(rows));
const r = await remote.openTable("py_root");
ok((await r.countRows()) === 3, "Node (remote mode) counts Python's remote table");
ok(same((await r.query().where("x > 1").select(["x"]).toArray()).map((x) => Number(x.x)).sort(), [2, 3]), "Node reads Python's values");
// Node writes: into Python's table (namespace mode), and a table of its own (remote mode).
await t.add([{ id: 100, name: "node100", vector: [1, 2, 3, 4] }]);
await t.update({ where: "id = 0", values: { name: "node-zero" } });
await r.add([{ x: 10 }]);
await remote.createTable("from_node", [{ k: 1, v: "a" }, { k: 2, v: "b" }]);
await nsdb.createTable("from_node_ns", [{ k: 7, v: "seven" }], ["cross"]);
console.log(`ok: ${checks} checks`);
