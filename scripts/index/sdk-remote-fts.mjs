// The official SDK in remote mode (db:// with hostOverride) against a
// running lancecat: createIndex FTS on the text column of a table of
// id int64 and text, listIndices/indexStats, and full-text searches (match,
// prefiltered match, two phrases). Prints {"steps": [...], "results":
// [{ids, scores}]} for the Go side to compare with lancecat's own reader,
// and exits non-zero on the first failed check.
//
// usage: node sdk-remote-fts.mjs <sdk-dir> <url> <table>
import { checker, remoteTable } from "../lib/checks.mjs";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, url, table] = process.argv.slice(2);
const { lancedb } = loadSDK(sdkDir);

const { steps, ok } = checker();

const { t } = await remoteTable(lancedb, url, table);

let err = "";
try { await t.createIndex("text", { config: lancedb.Index.fts({ language: "French" }) }); } catch (e) { err = String(e.message); }
ok(err !== "", "createIndex FTS with language French (lancecat stems English only) is refused: " + err);
ok((await t.listIndices()).length === 0, "nothing committed by the failed create");

await t.createIndex("text", { config: lancedb.Index.fts({ withPosition: true }) });
const list = await t.listIndices();
ok(list.length === 1 && list[0].name === "text_idx" && list[0].columns.join() === "text", "listIndices: text_idx " + JSON.stringify(list));
const st = await t.indexStats("text_idx");
ok(st && st.numIndexedRows === 300 && st.numUnindexedRows === 0, "indexStats(text_idx) " + JSON.stringify(st));

const results = [];
async function run(what, q) {
  const rows = await q.toArray();
  ok(rows.every((r) => typeof r._score === "number"), what + ": rows carry _score");
  results.push({ ids: rows.map((r) => Number(r.id)), scores: rows.map((r) => r._score) });
}
await run("match fox", t.search("fox", "fts").select(["id", "text"]).limit(10));
await run("match quick dog prefiltered", t.search("quick dog", "fts").where("id < 150").select(["id"]).limit(10));
await run("phrase quick jumps", t.search(new lancedb.PhraseQuery("quick jumps", "text"), "fts").select(["id"]).limit(10));
await run("phrase fox lazy", t.search(new lancedb.PhraseQuery("fox lazy", "text"), "fts").select(["id"]).limit(10));
// (Every query type, boolean and fuzzy included, is compared with the SDK
// embedded in e2e/fts_diff_test.go.)
const plan = await t.search("fox", "fts").limit(5).explainPlan(true);
ok(/text_idx/.test(plan), "explainPlan names text_idx: " + plan);
console.log(JSON.stringify({ steps, results }));
