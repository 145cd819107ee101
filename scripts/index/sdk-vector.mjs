// The official SDK's half of lancecat's vector index interop tests and
// benchmark (lance/index/tableindex/vector_index_sdk_test.go, scripts/index/vecbench):
//
//   node sdk-vector.mjs create <sdk-dir> <job.json>
//       Creates table job.dir with job.rows rows {id: int64, vec:
//       fixed_size_list<float32>[job.dim]} (job.fragments appends) of
//       clustered data from job.seed, then the indices job.indices
//       [{column, type: IVF_PQ|IVF_FLAT|IVF_HNSW_SQ|IVF_HNSW_PQ, metric, num_partitions,
//       num_sub_vectors, max_iterations, sample_rate, name}] (may be
//       empty), and prints {version, build_ms: [one per index]}.
//   node sdk-vector.mjs index <sdk-dir> <job.json>
//       Builds job.indices on the existing table, printing {build_ms,
//       cpu_ms} per index (the build-time benchmark's SDK half).
//   node sdk-vector.mjs append <sdk-dir> <job.json>
//       Appends rows job.from..job.to-1 of the same data.
//   node sdk-vector.mjs check <sdk-dir> <job.json>
//       Opens job.dir and prints {"indices": listIndices(), "stats":
//       {name: indexStats(name)}, "queries": [{ids, distances}], "plan"}
//       for the vectors job.queries (k = job.k, nprobes = job.nprobes,
//       metric = job.metric, ef = job.ef; with job.flat the search bypasses the index),
//       plan being the explain plan of the first query, and "query_ms" the
//       mean latency of one query.
//   job.dir is a local path or a URI; job.storage_options reach it.
//
// The data: job.clusters centres uniform in [-1, 1]^dim (default 64), row
// i = centre[i % clusters] + 0.25 * gaussian noise, all from a mulberry32
// stream seeded with job.seed, so a row is the same in every run.
// <sdk-dir> is what scripts/lancedb/install.sh prints.
import fs from "node:fs";
import path from "node:path";
import { connectParent, loadSDK } from "../lib/sdk.mjs";

const [mode, sdkDir, arg] = process.argv.slice(2);
const { lancedb, arrow } = loadSDK(sdkDir);
const job = JSON.parse(fs.readFileSync(arg, "utf8"));
const dim = job.dim ?? 16;

function open(dir) {
  return connectParent(lancedb, dir, job.storage_options);
}

function mulberry32(a) {
  return function () {
    a |= 0; a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// data returns the vectors of rows 0..n-1 as one Float32Array.
function data(n) {
  const rnd = mulberry32(job.seed ?? 1);
  const nc = job.clusters ?? 64;
  const centres = new Float32Array(nc * dim);
  for (let i = 0; i < centres.length; i++) centres[i] = rnd() * 2 - 1;
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = (i % nc) * dim;
    for (let j = 0; j < dim; j += 2) {
      // Box-Muller: two gaussians per pair of uniforms.
      const u = Math.max(rnd(), 1e-12), v = rnd();
      const r = Math.sqrt(-2 * Math.log(u));
      out[i * dim + j] = centres[c + j] + 0.25 * r * Math.cos(2 * Math.PI * v);
      if (j + 1 < dim) out[i * dim + j + 1] = centres[c + j + 1] + 0.25 * r * Math.sin(2 * Math.PI * v);
    }
  }
  return out;
}

const vecType = new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true));
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("vec", vecType, true),
]);

function batch(all, lo, hi) {
  const ids = new BigInt64Array(hi - lo);
  for (let i = lo; i < hi; i++) ids[i - lo] = BigInt(i);
  const values = arrow.makeData({ type: new arrow.Float32(), data: all.subarray(lo * dim, hi * dim) });
  const vec = arrow.makeData({ type: vecType, length: hi - lo, nullCount: 0, child: values });
  const idData = arrow.makeData({ type: new arrow.Int64(), data: ids });
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: hi - lo, nullCount: 0, children: [idData, vec] });
  return new arrow.Table(schema, new arrow.RecordBatch(schema, struct));
}

function config(ix) {
  const o = {};
  if (ix.metric) o.distanceType = ix.metric;
  if (ix.num_partitions) o.numPartitions = ix.num_partitions;
  if (ix.num_sub_vectors) o.numSubVectors = ix.num_sub_vectors;
  if (ix.max_iterations) o.maxIterations = ix.max_iterations;
  if (ix.sample_rate) o.sampleRate = ix.sample_rate;
  switch (ix.type) {
    case "IVF_PQ": return lancedb.Index.ivfPq(o);
    case "IVF_FLAT": return lancedb.Index.ivfFlat(o);
    // The HNSW kinds (IVF_HNSW_FLAT has no Node builder: scripts/index/pylance-vector.py).
    case "IVF_HNSW_SQ": return lancedb.Index.hnswSq(o);
    case "IVF_HNSW_PQ": return lancedb.Index.hnswPq(o);
  }
  throw new Error(`unknown index type ${ix.type}`);
}

const big = (k, v) => (typeof v === "bigint" ? Number(v) : v);

if (mode === "create") {
  const { db, name } = await open(job.dir);
  const n = job.rows ?? 100;
  const frags = job.fragments ?? 1;
  const per = Math.ceil(n / frags);
  const all = data(n);
  let t;
  for (let lo = 0; lo < n; lo += per) {
    const b = batch(all, lo, Math.min(n, lo + per));
    if (!t) t = await db.createTable(name, b, { mode: "overwrite" });
    else await t.add(b);
  }
  const build_ms = [];
  for (const ix of job.indices ?? []) {
    const t0 = performance.now();
    await t.createIndex(ix.column ?? "vec", { config: config(ix), name: ix.name, replace: true });
    build_ms.push(performance.now() - t0);
  }
  console.log(JSON.stringify({ version: await t.version(), build_ms }));
} else if (mode === "index") {
  // Builds job.indices on the existing table job.dir, timing each (wall
  // and this process's CPU, which includes the SDK's native threads).
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  const build_ms = [], cpu_ms = [];
  for (const ix of job.indices ?? []) {
    const t0 = performance.now(), c0 = process.cpuUsage();
    await t.createIndex(ix.column ?? "vec", { config: config(ix), name: ix.name, replace: true });
    build_ms.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu_ms.push((c.user + c.system) / 1000);
  }
  console.log(JSON.stringify({ version: await t.version(), build_ms, cpu_ms }));
} else if (mode === "append") {
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  const all = data(job.to);
  await t.add(batch(all, job.from, job.to));
  console.log(JSON.stringify({ version: await t.version() }));
} else if (mode === "check") {
  const { db, name } = await open(job.dir);
  const t = await db.openTable(name);
  const indices = await t.listIndices();
  const stats = {};
  for (const ix of indices) stats[ix.name] = await t.indexStats(ix.name);
  const q = (v) => {
    let s = t.search(Float32Array.from(v)).column(job.column ?? "vec").limit(job.k ?? 10).select(["id"]);
    if (job.metric) s = s.distanceType(job.metric);
    if (job.nprobes) s = s.nprobes(job.nprobes);
    if (job.refine_factor) s = s.refineFactor(job.refine_factor);
    if (job.ef) s = s.ef(job.ef);
    if (job.flat) s = s.bypassVectorIndex();
    return s;
  };
  // job.query_rows / job.query_count: queries near rows of the table's
  // data (rows of data(query_rows) moved by 0.1 gaussian noise).
  if (job.query_rows && !job.queries) {
    const all = data(job.query_rows), rnd = mulberry32(12345);
    job.queries = [];
    for (let i = 0; i < (job.query_count ?? 100); i++) {
      const r = Math.floor(rnd() * job.query_rows);
      job.queries.push(Array.from(all.subarray(r * dim, (r + 1) * dim), (v) => v + 0.1 * (rnd() * 2 - 1)));
    }
  }
  const queries = [];
  let plan = "";
  const t0 = performance.now();
  for (const v of job.queries ?? []) {
    const res = await q(v).toArray();
    queries.push({ ids: res.map((r) => Number(r.id)), distances: res.map((r) => r._distance) });
  }
  const query_ms = (job.queries ?? []).length ? (performance.now() - t0) / job.queries.length : 0;
  if ((job.queries ?? []).length) plan = await q(job.queries[0]).explainPlan(true);
  console.log(JSON.stringify({ indices, stats, queries, plan, query_ms }, big));
} else {
  console.error("usage: node sdk-vector.mjs create|append|check <sdk-dir> <job.json>");
  process.exit(2);
}
