// The official SDK's half of lancecat's full-text index interop tests
// (lance/index/tableindex/fts_index_sdk_test.go):
//
//   node sdk-fts.mjs create <sdk-dir> <job.json>
//       Creates table job.dir from job.docs [{id, text}] and, with
//       job.index, the SDK's own FTS index on text (job.with_position).
//   node sdk-fts.mjs search <sdk-dir> <job.json>
//       Opens job.dir and prints [{ids, scores, plan, ms}] for job.queries
//       [{match | phrase, operator, filter}] with job.limit; ms is the
//       median latency of job.repeat runs (default 1).
//   node sdk-fts.mjs append <sdk-dir> <job.json>
//       Appends job.docs to the table job.dir (rows the index does not
//       cover until it is optimized).
//   node sdk-fts.mjs delete <sdk-dir> <job.json>
//       Deletes the rows of job.dir matching job.where.
//   node sdk-fts.mjs optimize <sdk-dir> <job.json>
//       The SDK's optimize() of job.dir (compaction, index optimization,
//       cleanup); prints {indices, stats}.
//   node sdk-fts.mjs time <sdk-dir> <job.json>
//       Like create with the index, printing {"build_ms": ...} of the
//       index build alone.
// <sdk-dir> is what scripts/lancedb/install.sh prints.
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [mode, sdkDir, arg] = process.argv.slice(2);
const { lancedb, arrow } = loadSDK(sdkDir);
const job = JSON.parse(fs.readFileSync(arg, "utf8"));

async function open(dir) {
  const db = await lancedb.connect(path.dirname(path.resolve(dir)));
  return { db, name: path.basename(dir).replace(/\.lance$/, "") };
}

const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("text", new arrow.Utf8(), true),
]);

function ftsQuery(q) {
  if (q.phrase !== undefined) return new lancedb.PhraseQuery(q.phrase, "text", { slop: q.slop ?? 0 });
  if (q.operator) return new lancedb.MatchQuery(q.match, "text", { operator: q.operator === "AND" ? lancedb.Operator.And : lancedb.Operator.Or });
  return q.match;
}

if (mode === "create" || mode === "time") {
  const { db, name } = await open(job.dir);
  const batch = new arrow.Table({
    id: arrow.vectorFromArray(job.docs.map((d) => BigInt(d.id)), new arrow.Int64()),
    text: arrow.vectorFromArray(job.docs.map((d) => d.text), new arrow.Utf8()),
  });
  const t = await db.createTable(name, batch, { mode: "overwrite", schema });
  if (job.index || mode === "time") {
    const t0 = performance.now();
    await t.createIndex("text", { config: lancedb.Index.fts({ withPosition: !!job.with_position }) });
    const ms = performance.now() - t0;
    if (mode === "time") console.log(JSON.stringify({ build_ms: ms }));
  }
} else if (mode === "append") {
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  await t.add(new arrow.Table({
    id: arrow.vectorFromArray(job.docs.map((d) => BigInt(d.id)), new arrow.Int64()),
    text: arrow.vectorFromArray(job.docs.map((d) => d.text), new arrow.Utf8()),
  }));
} else if (mode === "optimize") {
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  const stats = await t.optimize();
  console.log(JSON.stringify({ indices: await t.listIndices(), stats }));
} else if (mode === "delete") {
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  await t.delete(job.where);
} else if (mode === "search") {
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  const out = [];
  for (const q of job.queries) {
    const build = () => {
      let s = t.search(ftsQuery(q), "fts").select(["id", "_score"]).limit(job.limit ?? 10);
      if (q.filter) s = s.where(q.filter);
      return s;
    };
    const times = [];
    let rows;
    for (let i = 0; i < (job.repeat ?? 1); i++) {
      const t0 = performance.now();
      rows = await build().toArray();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const plan = await build().explainPlan(true);
    out.push({ ids: rows.map((r) => Number(r.id)), scores: rows.map((r) => r._score), plan, ms: times[times.length >> 1] });
  }
  console.log(JSON.stringify(out));
}
