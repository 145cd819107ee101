// The benchmark through the client users run (issue 35): the official LanceDB Node SDK in remote
// mode (lancedb.connect("db://…", {hostOverride})) against `lancecat serve`, interleaved with the
// same SDK embedded (lancedb.connect(<root>)) on the same table, in one process and one run.
//
// usage: node remote.mjs <sdk-dir> <url> <root> <serve-pid> <out.json>
// env:   LANCECAT_BENCH_ROWS     rows of (id int64, name utf8, vector float32[128]) (default 200000)
//        LANCECAT_BENCH_SECONDS  timed seconds per operation, both sides together (default 2)
//        LANCECAT_BENCH_INDEX    1: build IVF_PQ (256 partitions, 16 sub-vectors) on both sides
//                                and time indexed kNN (default 1 from 1,000,000 rows, else 0)
//        LANCECAT_BENCH_CLIENTS  concurrent clients of the throughput part (default 16)
//
// Interleaving: every timed run of an operation is one remote run followed by one embedded run
// (then the next pair), so both sides of a ratio see the same load on a shared machine; the ratio
// is remote / embedded of the medians. The write is the same batches created (first batch) and
// added (the rest), remote into lancecat (table "bench") and embedded into <root>-sdk, batch by
// batch alternately. The reads then run on lancecat's table, which the embedded SDK opens from
// <root> directly: the very same files. Peak RSS: lancecat serve's VmHWM (from /proc/<serve-pid>)
// and this process's (remote client and embedded SDK together).
import fs from "node:fs";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, url, root, servePid, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error("usage: node remote.mjs <sdk-dir> <url> <root> <serve-pid> <out.json>");
  process.exit(2);
}
const { lancedb, arrow: A, version: sdkVersion } = loadSDK(sdkDir);

const ROWS = Number(process.env.LANCECAT_BENCH_ROWS || 200000);
const BUDGET = Number(process.env.LANCECAT_BENCH_SECONDS || 2);
const INDEX = process.env.LANCECAT_BENCH_INDEX ? process.env.LANCECAT_BENCH_INDEX === "1" : ROWS >= 1000000;
const CLIENTS = Number(process.env.LANCECAT_BENCH_CLIENTS || 16);
const DIM = 128, BATCH = 50000, TABLE = "bench";
const words = ["lance", "catalog", "arrow", "vector", "table", "file", "page", "chunk", "row", "column", "index", "query"];

const status = (pid, field) => {
  const m = new RegExp(`${field}:\\s*(\\d+)\\s*kB`).exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
};
const loadavg = () => fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const now = () => Number(process.hrtime.bigint()) / 1e9;

// A deterministic batch: rows [start, start+n). The word of a row is a hash of its id, so every
// filter below keeps the same rows at any table size.
function batch(start, n) {
  const ids = new BigInt64Array(n), names = new Array(n), vec = new Float32Array(n * DIM);
  let s = (start * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    const id = start + i;
    ids[i] = BigInt(id);
    const h = Math.imul(id ^ (id >>> 7), 0x9e3779b1) >>> 0;
    names[i] = `${words[h % 12]}-${h % 1000003}`;
    for (let k = 0; k < DIM; k++) {
      s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
      vec[i * DIM + k] = (s / 4294967296) * 2 - 1;
    }
  }
  const vtype = new A.FixedSizeList(DIM, new A.Field("item", new A.Float32(), true));
  const child = A.makeData({ type: new A.Float32(), length: n * DIM, nullCount: 0, data: vec });
  return new A.Table({
    id: A.makeVector(ids),
    name: A.vectorFromArray(names, new A.Utf8()),
    vector: A.makeVector(A.makeData({ type: vtype, length: n, nullCount: 0, child })),
  });
}

// The filters: 2,000 rows at any size of at least 124,000 rows (ids 100,000..123,999, a twelfth
// of them by word), and a third of a twelfth of the table for the count.
const lo = Math.min(100000, Math.max(0, ROWS - 24000));
const ops = [
  { name: "count", label: "count_rows", kind: "count" },
  { name: "count_filter", label: "count_rows(filter)", kind: "count", filter: "id % 3 = 0 AND name LIKE 'vector-%'" },
  { name: "filtered_query", label: "filtered query [id name]", kind: "query", filter: `id >= ${lo} AND id < ${lo + 24000} AND name LIKE 'index-%'`, columns: ["id", "name"] },
  { name: "scan_id_name", label: "full scan [id name]", kind: "query", columns: ["id", "name"] },
  { name: "scan_id_vector", label: "full scan [id vector]", kind: "query", columns: ["id", "vector"] },
  { name: "knn", label: "top-10 kNN l2 (flat)", kind: "knn", columns: ["id", "name"], k: 10 },
];
const qv = Float32Array.from({ length: DIM }, (_, k) => Math.sin(k * 0.37) * 0.5);

function runner(tbl, op, res) {
  switch (op.kind) {
    case "count":
      return async () => { res.rows = await (op.filter ? tbl.countRows(op.filter) : tbl.countRows()); };
    case "query":
      return async () => {
        let q = tbl.query().select(op.columns);
        if (op.filter) q = q.where(op.filter);
        res.rows = (await q.toArrow()).numRows;
      };
    case "knn":
    case "ann":
      return async () => {
        let q = tbl.vectorSearch(qv).column("vector").distanceType("l2").select(op.columns).limit(op.k);
        if (op.kind === "ann") q = q.nprobes(20).refineFactor(10);
        else q = q.bypassVectorIndex();
        const out = await q.toArrow();
        res.rows = out.numRows;
        res.ids = Array.from(out.getChild("id").toArray(), Number);
      };
  }
  throw new Error(`unknown kind ${op.kind}`);
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };

// Pairs: remote then embedded, warm-up (3 pairs and 0.3 s) untimed, then pairs while they fit in
// the budget (at least 5, at most 500).
async function pairs(fr, fe) {
  const t0 = now();
  for (let i = 0; i < 3 || now() - t0 < 0.3; i++) { await fr(); await fe(); }
  const r = [], e = [];
  let spent = 0;
  while (r.length < 500 && (r.length < 5 || spent < BUDGET)) {
    let t = now(); await fr(); const dr = now() - t;
    t = now(); await fe(); const de = now() - t;
    r.push(dr); e.push(de); spent += dr + de;
  }
  return { remote: median(r), embedded: median(e), remote_best: Math.min(...r), embedded_best: Math.min(...e), runs: r.length };
}

const remote = () => lancedb.connect("db://lancecat", { apiKey: "bench", hostOverride: url, clientConfig: { retryConfig: { retries: 0 } } });
const rdb = await remote();
const sdkRoot = root + "-sdk";
fs.rmSync(sdkRoot, { recursive: true, force: true });
const edbW = await lancedb.connect(sdkRoot);
const results = { sdk: sdkVersion, rows: ROWS, load: {}, ops: {} };

// Write: create + add, batch by batch alternately.
{
  let tr = 0, te = 0, rt, et;
  for (let start = 0; start < ROWS; start += BATCH) {
    const b = batch(start, Math.min(BATCH, ROWS - start));
    let t = now();
    if (start === 0) rt = await rdb.createTable(TABLE, b); else await rt.add(b);
    tr += now() - t;
    t = now();
    if (start === 0) et = await edbW.createTable(TABLE, b); else await et.add(b);
    te += now() - t;
  }
  results.ops.write = { remote: tr, embedded: te, runs: 1, rows: ROWS };
  results.load.write = loadavg();
  results.write_hwm = status(servePid, "VmHWM");
}
const edb = await lancedb.connect(root);
const rt = await rdb.openTable(TABLE);
const et = await edb.openTable(TABLE);

async function timeOp(op) {
  const rr = {}, er = {};
  const t = await pairs(runner(rt, op, rr), runner(et, op, er));
  if (rr.rows !== er.rows) throw new Error(`${op.name}: remote ${rr.rows} rows, embedded ${er.rows}`);
  if (op.kind === "knn" && JSON.stringify(rr.ids) !== JSON.stringify(er.ids)) throw new Error(`${op.name}: ids differ: ${rr.ids} vs ${er.ids}`);
  results.ops[op.name] = { ...t, rows: rr.rows, ids_remote: rr.ids, ids_embedded: er.ids };
  results.load[op.name] = loadavg();
}
for (const op of ops) await timeOp(op);

// The HTTP floor through the SDK's own client: countRows against `lancebench httpfloor`
// (LANCECAT_BENCH_FLOOR_URL), a minimal Go net/http server answering every POST with a constant
// count. No server answers count_rows to this client faster; the embedded count pays no hop.
if (process.env.LANCECAT_BENCH_FLOOR_URL) {
  const ft = await (await lancedb.connect("db://floor", { apiKey: "bench", hostOverride: process.env.LANCECAT_BENCH_FLOOR_URL })).openTable(TABLE);
  const ds = [];
  const t0 = now();
  for (let i = 0; i < 20 || now() - t0 < 0.3; i++) await ft.countRows();
  for (let i = 0; i < 500 && (i < 20 || ds.reduce((a, b) => a + b, 0) < BUDGET / 2); i++) { const t = now(); await ft.countRows(); ds.push(now() - t); }
  results.healthz = median(ds);
  results.floor = "countRows through this SDK's remote client to a minimal Go net/http server (lancebench httpfloor)";
} else {
  const ds = [];
  for (let i = 0; i < 200; i++) { const t = now(); await (await fetch(url + "/healthz")).text(); ds.push(now() - t); }
  results.healthz = median(ds.slice(20));
  results.floor = "GET /healthz of lancecat serve by node fetch";
}

// Indexed: IVF_PQ built by each side on its own copy (the write tables), timed once each; then
// indexed kNN on lancecat's table (which now has the index) vs the embedded copy with its own.
if (INDEX) {
  // A config is consumed by the createIndex it is given: one each.
  const cfg = () => ({ config: lancedb.Index.ivfPq({ numPartitions: 256, numSubVectors: 16, distanceType: "l2" }) });
  let t = now();
  await rt.createIndex("vector", { ...cfg(), waitTimeoutSeconds: 3600 });
  const ir = now() - t;
  const etw = await edbW.openTable(TABLE);
  t = now();
  await etw.createIndex("vector", cfg());
  const ie = now() - t;
  results.ops.ivf_pq_build = { remote: ir, embedded: ie, runs: 1 };
  results.load.ivf_pq_build = loadavg();
  const op = { name: "ann", label: "indexed kNN top-10 (nprobes 20, refine 10)", kind: "ann", columns: ["id", "name"], k: 10 };
  const rr = {}, er = {};
  // Ground truth: flat top-10 (the bypass run above).
  const truth = new Set(results.ops.knn.ids_embedded);
  const r = await pairs(runner(rt, op, rr), runner(etw, op, er));
  const recall = (ids) => ids.filter((x) => truth.has(x)).length / truth.size;
  results.ops.ann = { ...r, rows: rr.rows, recall_remote: recall(rr.ids), recall_embedded: recall(er.ids) };
  results.load.ann = loadavg();
}

// Concurrency: CLIENTS remote clients (each its own connection) against one server vs CLIENTS
// concurrent queries on one embedded table, the filtered query, for BUDGET seconds each, twice
// interleaved (remote, embedded, remote, embedded).
{
  const op = ops.find((o) => o.name === "filtered_query");
  const handles = [];
  for (let i = 0; i < CLIENTS; i++) handles.push(await (await remote()).openTable(TABLE));
  async function load(tbls) {
    const lat = [];
    const end = now() + BUDGET;
    await Promise.all(tbls.map(async (tb) => {
      const f = runner(tb, op, {});
      while (now() < end) { const t = now(); await f(); lat.push(now() - t); }
    }));
    return { n: lat.length, lat };
  }
  for (const h of handles) await runner(h, op, {})();
  const R = [], E = [];
  for (let round = 0; round < 2; round++) {
    R.push(await load(handles));
    E.push(await load(Array.from({ length: CLIENTS }, () => et)));
  }
  const sum = (xs) => ({ qps: xs.reduce((a, x) => a + x.n, 0) / (BUDGET * xs.length), p99: pct(xs.flatMap((x) => x.lat), 0.99), p50: pct(xs.flatMap((x) => x.lat), 0.5) });
  results.concurrency = { clients: CLIENTS, remote: sum(R), embedded: sum(E), load: loadavg() };
}

results.serve_hwm = status(servePid, "VmHWM");
results.serve_rss = status(servePid, "VmRSS");
results.node_hwm = status("self", "VmHWM");
fs.writeFileSync(outPath, JSON.stringify(results, null, 2) + "\n");
