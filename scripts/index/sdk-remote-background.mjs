// The official SDK in remote mode (db:// with hostOverride) against a running lancecat whose
// index builds run in the background from a few rows (--index-background-rows): createIndex
// answers before the index exists, and the SDK's own wait (waitTimeoutSeconds, or waitForIndex)
// polls listIndices and indexStats until the index is listed with no unindexed rows; then the
// index serves a vector search that finds the exact row, and the table's tasks list the builds.
// The table: id int64 0..rows-1 and vec fixed_size_list<float32>[16].
//
// usage: node sdk-remote-background.mjs <sdk-dir> <url> <table> <rows>
import { checker, remoteTable } from "../lib/checks.mjs";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, url, table, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg);
const { lancedb } = loadSDK(sdkDir);

const { steps, ok } = checker();
const byName = (list) => Object.fromEntries(list.map((i) => [i.name, i]));

const { t } = await remoteTable(lancedb, url, table);

// createIndex with a wait: returns once the background build committed.
await t.createIndex("vec", {
  config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 4, distanceType: "l2" }),
  waitTimeoutSeconds: 120,
});
let list = byName(await t.listIndices());
ok(list.vec_idx && list.vec_idx.indexType === "IvfPq", "createIndex(IVF_PQ, waitTimeoutSeconds) then listed " + JSON.stringify(list.vec_idx));
const st = await t.indexStats("vec_idx");
ok(st && st.numIndexedRows === rows && st.numUnindexedRows === 0, "indexStats(vec_idx) " + JSON.stringify(st));

// createIndex without a wait, then the SDK's waitForIndex.
await t.createIndex("id", { config: lancedb.Index.btree() });
await t.waitForIndex(["id_idx"], 120);
list = byName(await t.listIndices());
ok(list.id_idx && list.id_idx.indexType === "BTree", "createIndex(BTREE) + waitForIndex then listed " + JSON.stringify(list.id_idx));

// The vector index finds the exact row.
const [row] = await t.query().where("id = 42").select(["id", "vec"]).toArray();
const q = Array.from(row.vec);
const hits = await t.search(q).nprobes(2).refineFactor(10).limit(3).select(["id"]).toArray();
ok(hits.length === 3 && Number(hits[0].id) === 42, "vector search through vec_idx finds row 42 first: " + hits.map((h) => h.id).join(","));
const plan = await t.search(q).nprobes(2).limit(3).explainPlan();
ok(/vec_idx/.test(plan), "explainPlan names the index: " + plan.split("\n").filter((l) => /vec_idx/.test(l)).join(" | "));

// The table's tasks list both builds, succeeded.
const res = await fetch(`${url}/v1/table/${table}/tasks`, { headers: { "x-api-key": "none" } });
ok(res.ok, "GET /v1/table/{id}/tasks: " + res.status + " " + (res.ok ? "" : await res.clone().text()));
const body = await res.json();
const builds = body.tasks.filter((x) => x.kind === "create_index");
ok(builds.length === 2 && builds.every((x) => x.state === "succeeded"), "tasks: two create_index builds succeeded " + JSON.stringify(builds.map((x) => [x.state, x.progress && x.progress.index_name])));
console.log(JSON.stringify({ steps }));
