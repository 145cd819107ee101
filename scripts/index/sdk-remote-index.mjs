// The official SDK in remote mode (db:// with hostOverride) against a
// running lancecat: the index calls of issue 16 item 4 on a root table of
// 200 rows of int64 columns id (distinct) and k (id % 4) without indices. Prints {"steps": [...]} and exits non-zero on the first
// failed check.
//
// usage: node sdk-remote-index.mjs <sdk-dir> <url> <table>
import { checker, remoteTable } from "../lib/checks.mjs";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, url, table] = process.argv.slice(2);
const { lancedb } = loadSDK(sdkDir);

const { steps, ok } = checker();
const byName = (list) => Object.fromEntries(list.map((i) => [i.name, i]));

const { t } = await remoteTable(lancedb, url, table);

await t.createIndex("id", { config: lancedb.Index.btree() });
await t.createIndex("k", { config: lancedb.Index.bitmap(), name: "k_bitmap" });
let list = byName(await t.listIndices());
ok(list.id_idx && list.id_idx.indexType === "BTree" && list.id_idx.columns.join() === "id", "listIndices: id_idx BTree on id " + JSON.stringify(list.id_idx));
ok(list.k_bitmap && list.k_bitmap.indexType === "Bitmap" && list.k_bitmap.columns.join() === "k", "listIndices: k_bitmap Bitmap on k " + JSON.stringify(list.k_bitmap));

const rows = 200; // the table's rows (count_rows is H-wire's door)
const st = await t.indexStats("k_bitmap");
ok(st && st.indexType === "BITMAP" && st.numIndexedRows === rows && st.numUnindexedRows === 0, "indexStats(k_bitmap) " + JSON.stringify(st));
ok((await t.indexStats("nope")) === undefined, "indexStats of a missing index is undefined");

await t.dropIndex("k_bitmap");
list = byName(await t.listIndices());
ok(!list.k_bitmap && list.id_idx, "dropIndex(k_bitmap)");
let err = "";
try { await t.dropIndex("k_bitmap"); } catch (e) { err = String(e.message); }
ok(/not found/i.test(err), "dropIndex of a missing index: " + err);
err = "";
try { await t.createIndex("missing", { config: lancedb.Index.btree() }); } catch (e) { err = String(e.message); }
ok(err !== "", "createIndex on a missing column fails: " + err);
err = "";
try { await t.createIndex("id", { config: lancedb.Index.ivfPq() }); } catch (e) { err = String(e.message); }
ok(err !== "", "createIndex IVF_PQ is refused for now: " + err);
console.log(JSON.stringify({ steps }));
