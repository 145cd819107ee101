// The oracle of the query package's indexed-query differential test (query/index_sdk_test.go): the
// official LanceDB SDK (embedded) writes a table, builds or leaves the scalar indices, appends and
// deletes after the build, and answers a corpus of filters, so the Go side answers the same filters
// over the very same dataset with its index path.
//
//   node index-oracle.mjs create <sdk-dir> <dir>           table "t" under <dir> (2 fragments)
//   node index-oracle.mjs index  <sdk-dir> <dir>           BTREE id, BITMAP name, BTREE score, LABEL_LIST tags
//   node index-oracle.mjs vindex <sdk-dir> <dir> <IVF_FLAT|IVF_PQ> [metric]   8 partitions on vec
//   node index-oracle.mjs mutate <sdk-dir> <dir>           append 500 rows (unindexed), delete some indexed rows
//   node index-oracle.mjs query  <sdk-dir> <dir> <queries.json>
//
// A query: {name, filter, select, limit, offset, vector, k, prefilter, nprobes, minimum_nprobes,
// maximum_nprobes (0: no bound), refine, bypass, fast (fastSearch), metric}.
// Prints {"sdk", "results": [{name, ids, distances, plan} | {name, error}]}.
// The data of row i: id = i; name n<i%150> (null when i%7 == 0); score a rounded random in [0, 100)
// (null when i%5 == 0, NaN when i%13 == 0); tags ⊆ [fizz (i%3 == 0), buzz (i%5 == 0)] (null when
// i%11 == 6); vec float32[16] random.
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [mode, sdkDir, dir, queriesPath] = process.argv.slice(2);
const { lancedb, arrow, version: sdkVersion } = loadSDK(sdkDir);

const DIM = 16;
const F = (name, type, nullable = true) => new arrow.Field(name, type, nullable);
const schema = new arrow.Schema([
  F("id", new arrow.Int64(), false),
  F("name", new arrow.Utf8()),
  F("score", new arrow.Float64()),
  F("tags", new arrow.List(F("item", new arrow.Utf8()))),
  F("vec", new arrow.FixedSizeList(DIM, F("item", new arrow.Float32()))),
]);
const rows = (lo, hi) => {
  // mulberry32 (32-bit integer arithmetic: a float LCG loses precision and repeats vectors)
  let seed = 777 + lo;
  const rnd = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const out = [];
  for (let i = lo; i < hi; i++) {
    const tags = [];
    if (i % 3 === 0) tags.push("fizz");
    if (i % 5 === 0) tags.push("buzz");
    out.push({
      id: BigInt(i),
      name: i % 7 === 0 ? null : `n${String(i % 150).padStart(3, "0")}`,
      score: i % 5 === 0 ? null : i % 13 === 0 ? NaN : Math.round(rnd() * 1000) / 10,
      tags: i % 11 === 6 ? null : tags,
      vec: Array.from({ length: DIM }, () => Math.fround(rnd() * 2 - 1)),
    });
  }
  return out;
};

const db = await lancedb.connect(dir);
if (mode === "create") {
  const t = await db.createTable("t", lancedb.makeArrowTable(rows(0, 1500), { schema }), { mode: "overwrite" });
  await t.add(lancedb.makeArrowTable(rows(1500, 3000), { schema }));
} else if (mode === "index") {
  const t = await db.openTable("t");
  await t.createIndex("id", { config: lancedb.Index.btree(), name: "id_idx" });
  await t.createIndex("name", { config: lancedb.Index.bitmap(), name: "name_idx" });
  await t.createIndex("score", { config: lancedb.Index.btree(), name: "score_idx" });
  await t.createIndex("tags", { config: lancedb.Index.labelList(), name: "tags_idx" });
} else if (mode === "vindex") {
  // node index-oracle.mjs vindex <sdk-dir> <dir> <IVF_FLAT|IVF_PQ> [metric]
  const [kind, metric] = process.argv.slice(5);
  const t = await db.openTable("t");
  const o = { numPartitions: 8, distanceType: metric ?? "l2" };
  if (kind === "IVF_PQ") o.numSubVectors = 4;
  const config = kind === "IVF_PQ" ? lancedb.Index.ivfPq(o) : lancedb.Index.ivfFlat(o);
  await t.createIndex("vec", { config, name: "vec_idx" });
} else if (mode === "big") {
  // node index-oracle.mjs big <sdk-dir> <dir> <rows>: one table of <rows> rows, then the version
  // with BTREE id and BITMAP name (the version before is the same data unindexed)
  const n = Number(process.argv[5]);
  let t;
  for (let lo = 0; lo < n; lo += 50000) {
    const b = lancedb.makeArrowTable(rows(lo, Math.min(n, lo + 50000)), { schema });
    if (!t) t = await db.createTable("t", b, { mode: "overwrite" });
    else await t.add(b);
  }
  await t.optimize();
  await t.createIndex("id", { config: lancedb.Index.btree(), name: "id_idx" });
  await t.createIndex("name", { config: lancedb.Index.bitmap(), name: "name_idx" });
  console.log(JSON.stringify({ version: await t.version() }));
} else if (mode === "bench") {
  // node index-oracle.mjs bench <sdk-dir> <dir> <queries.json>: {name: ms per query} (median of
  // the runs after a warm-up)
  const t = await db.openTable("t");
  const queries = JSON.parse(fs.readFileSync(queriesPath, "utf8"));
  const out = {};
  for (const q of queries) {
    const run = async () => {
      let b = t.query().where(q.filter).select(q.select ?? ["id"]);
      if (q.limit) b = b.limit(q.limit);
      return (await b.toArrow()).numRows;
    };
    await run();
    const ms = [];
    for (let i = 0; i < (q.runs || 20); i++) {
      const t0 = performance.now();
      await run();
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    out[q.name] = ms[Math.floor(ms.length / 2)];
  }
  process.stdout.write(JSON.stringify(out));
} else if (mode === "mutate") {
  const t = await db.openTable("t");
  await t.add(lancedb.makeArrowTable(rows(3000, 3500), { schema }));
  await t.delete("id % 10 = 4 AND id < 2000");
} else if (mode === "query") {
  const t = await db.openTable("t");
  const queries = JSON.parse(fs.readFileSync(queriesPath, "utf8"));
  const results = [];
  for (const q of queries) {
    const build = () => {
      let b;
      if (q.vector) {
        b = t.vectorSearch(q.vector).column("vec");
        if (q.k) b = b.limit(q.k);
        if (q.prefilter === false) b = b.postfilter();
        if (q.nprobes) b = b.nprobes(q.nprobes);
        if (q.minimum_nprobes) b = b.minimumNprobes(q.minimum_nprobes);
        if (q.maximum_nprobes !== undefined) b = b.maximumNprobes(q.maximum_nprobes);
        if (q.refine) b = b.refineFactor(q.refine);
        if (q.bypass) b = b.bypassVectorIndex();
        if (q.fast) b = b.fastSearch();
        if (q.metric) b = b.distanceType(q.metric);
      } else {
        b = t.query();
        if (q.limit) b = b.limit(q.limit);
      }
      if (q.filter) b = b.where(q.filter);
      b = b.select(q.select ?? ["id"]);
      if (q.offset) b = b.offset(q.offset);
      return b;
    };
    try {
      const res = await build().toArrow();
      const col = (n) => { const c = res.getChild(n); return c ? Array.from(c.toArray(), (v) => (typeof v === "bigint" ? Number(v) : v)) : undefined; };
      const plan = await build().explainPlan(true);
      results.push({ name: q.name, ids: col("id") ?? [], distances: col("_distance"), plan });
    } catch (e) {
      results.push({ name: q.name, error: String(e.message ?? e) });
    }
  }
  process.stdout.write(JSON.stringify({ sdk: sdkVersion, results }));
} else {
  console.error("usage: node index-oracle.mjs create|index|mutate|query <sdk-dir> <dir> [queries.json]");
  process.exit(2);
}
