// The official SDK in remote mode (db:// with hostOverride) against a running lancecat: the HNSW
// vector index kinds it asks for (Index.hnswSq; Index.hnswPq, which the remote client of 0.31.0
// and 0.39.0 refuses itself without a request) are built, listed, described and searched through
// (nprobes, ef), and Index.ivfRq is refused by lancecat with a 406 naming IVF_RQ. The table: id int64
// 0..rows-1 and vec fixed_size_list<float32>[16]. Prints {"steps": [...]}; exits non-zero on
// the first failed check.
//
// usage: node sdk-remote-vector.mjs <sdk-dir> <url> <table> <rows>
import { checker, remoteTable } from "../lib/checks.mjs";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, url, table, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg);
const { lancedb } = loadSDK(sdkDir);

const { steps, ok } = checker();

const { t } = await remoteTable(lancedb, url, table);
const [row] = await t.query().where("id = 42").select(["id", "vec"]).toArray();
const q = Array.from(row.vec);

for (const [kind, config] of [
  ["IVF_HNSW_SQ", lancedb.Index.hnswSq({ numPartitions: 2, distanceType: "l2" })],
  ["IVF_HNSW_PQ", lancedb.Index.hnswPq({ numPartitions: 2, numSubVectors: 4, distanceType: "l2" })],
]) {
  try {
    await t.createIndex("vec", { config, replace: true });
  } catch (e) {
    // The remote client of 0.31.0 and 0.39.0 refuses hnswPq itself, sending nothing ("not
    // supported: Index type not supported"); an answer of the server's would be an Http error.
    ok(kind === "IVF_HNSW_PQ" && !/Http error/.test(e.message), `createIndex(${kind}) refused by the SDK itself: ${e.message}`);
    continue;
  }
  const list = await t.listIndices();
  ok(list.length === 1 && list[0].name === "vec_idx", `createIndex(${kind}) then listed ` + JSON.stringify(list));
  const st = await t.indexStats("vec_idx");
  ok(st && st.indexType === kind && st.numIndexedRows === rows && st.numUnindexedRows === 0, `indexStats(${kind}) ` + JSON.stringify(st));
  const hits = await t.search(q).nprobes(2).ef(40).limit(3).select(["id"]).toArray();
  ok(hits.length === 3 && Number(hits[0].id) === 42, `search through ${kind} finds row 42 first: ` + hits.map((h) => h.id).join(","));
  const plan = await t.search(q).nprobes(2).ef(40).limit(3).explainPlan();
  ok(/vec_idx/.test(plan), `explainPlan names the ${kind} index: ` + plan.split("\n").filter((l) => /vec_idx/.test(l)).join(" | "));
}

let err = "";
try {
  await t.createIndex("vec", { config: lancedb.Index.ivfRq({ numPartitions: 2 }), replace: true });
} catch (e) {
  err = String(e.message);
}
ok(/IVF_RQ/.test(err), "createIndex(IVF_RQ) is refused naming it: " + err);
console.log(JSON.stringify({ steps }));
