// The official SDK's half of lancecat's scalar index interop tests
// (lance/index, lance/index/tableindex/index_sdk_test.go):
//
//   node sdk-index.mjs create <sdk-dir> <job.json>
//       Creates table job.dir with the fixed test data (ids 0..rows-1 in
//       job.fragments appends), then the indices job.indices
//       [{column, type: BTREE|BITMAP|LABEL_LIST, name}] (may be empty).
//   node sdk-index.mjs append <sdk-dir> <job.json>
//       Appends rows job.from..job.to-1 of the same data to job.dir.
//   node sdk-index.mjs check <sdk-dir> <job.json>
//       Opens job.dir and prints {"indices": listIndices(),
//       "stats": {name: indexStats(name)}, "queries": [{filter, ids, plan}]}
//       for job.filters (ids sorted ascending); with job.drop, drops that
//       index and adds "after_drop": listIndices().
//   job.dir is a local path or a URI; job.storage_options reach it.
//
// The data of row i: id = i; cat one of 5 colours (null when i % 7 == 3);
// x = i / 4 (null when i % 11 == 4); tags ⊆ [fizz (i % 3 == 0), buzz
// (i % 5 == 0), even (i % 2 == 0)] (null when i % 13 == 6).
// <sdk-dir> is what scripts/lancedb/install.sh prints.
import fs from "node:fs";
import path from "node:path";
import { connectParent, loadSDK } from "../lib/sdk.mjs";

const [mode, sdkDir, arg] = process.argv.slice(2);
const { lancedb, arrow } = loadSDK(sdkDir);
const job = JSON.parse(fs.readFileSync(arg, "utf8"));

// open connects to the parent of a table given as a local path or a URI
// ("s3://bucket/a/t.lance", reached with job.storage_options).
function open(dir) {
  return connectParent(lancedb, dir, job.storage_options);
}

function rows(lo, hi) {
  const cats = ["red", "green", "blue", "cyan", "magenta"];
  const out = [];
  for (let i = lo; i < hi; i++) {
    const tags = [];
    if (i % 3 === 0) tags.push("fizz");
    if (i % 5 === 0) tags.push("buzz");
    if (i % 2 === 0) tags.push("even");
    out.push({
      id: i,
      cat: i % 7 === 3 ? null : cats[i % 5],
      x: i % 11 === 4 ? null : i / 4,
      tags: i % 13 === 6 ? null : tags,
    });
  }
  return out;
}

const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("cat", new arrow.Utf8(), true),
  new arrow.Field("x", new arrow.Float64(), true),
  new arrow.Field("tags", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
]);

function config(type) {
  switch (type) {
    case "BTREE": return lancedb.Index.btree();
    case "BITMAP": return lancedb.Index.bitmap();
    case "LABEL_LIST": return lancedb.Index.labelList();
  }
  throw new Error(`unknown index type ${type}`);
}

if (mode === "create") {
  const { db, name } = await open(job.dir);
  const n = job.rows ?? 100;
  const frags = job.fragments ?? 1;
  const per = Math.ceil(n / frags);
  let t;
  for (let lo = 0; lo < n; lo += per) {
    const batch = rows(lo, Math.min(n, lo + per));
    if (!t) t = await db.createTable(name, batch, { schema, mode: "overwrite" });
    else await t.add(batch);
  }
  for (const ix of job.indices ?? []) {
    await t.createIndex(ix.column, { config: config(ix.type), name: ix.name, replace: true });
  }
  console.log(JSON.stringify({ version: await t.version() }));
} else if (mode === "append") {
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  await t.add(rows(job.from, job.to));
  console.log(JSON.stringify({ version: await t.version() }));
} else if (mode === "check") {
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  const indices = await t.listIndices();
  const stats = {};
  for (const ix of indices) stats[ix.name] = await t.indexStats(ix.name);
  const queries = [];
  for (const filter of job.filters ?? []) {
    const q = () => t.query().where(filter).select(["id"]);
    const res = await q().toArray();
    const ids = res.map((r) => Number(r.id)).sort((a, b) => a - b);
    const plan = await q().explainPlan(true);
    queries.push({ filter, ids, plan });
  }
  const out = { indices, stats, queries };
  if (job.drop) { await t.dropIndex(job.drop); out.after_drop = await t.listIndices(); }
  console.log(JSON.stringify(out, (k, v) => (typeof v === "bigint" ? Number(v) : v)));
} else {
  console.error("usage: node sdk-index.mjs create|append|check <sdk-dir> <job.json>");
  process.exit(2);
}
