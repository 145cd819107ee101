// The data-plane comparison (issue 15): the official LanceDB SDK embedded (no server) runs the
// operations `lancebench rest` timed against `lancecat serve` over REST, on the very same table
// (the one lancecat created through REST in <dir>/root), checks that both sides answered alike,
// and prints the ratios and peak RSS.
//
// usage: node dataplane.mjs <sdk-dir> <dir> [reps [operation]]
//
// With an operation (lancebench rest runs it so right after timing that operation itself, so
// both sides are timed within seconds of each other on a loaded machine), it times that one
// operation of <dir>/dataplane-plan.json and writes <dir>/sdk-<operation>.json. Without, it
// reads lancecat's figures from <dir>/dataplane.json, takes the SDK's from the sdk-*.json files
// (timing here those that are missing), and prints the comparison.
//
// Each operation is timed as lancebench's measure (rest.go) times it: warm-up runs untimed (at
// least 3 and 200 ms), then at least reps timed runs, more while they fit in the budget
// (LANCECAT_BENCH_SECONDS, default 1 s; at most 500 runs); the median is judged, the best shown.
// The SDK's scans and queries materialize the answer as an Arrow table in JavaScript
// (toArrow); lancecat's are decoded by the Go client as they arrive.

import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, dirArg, repsArg, onlyOp] = process.argv.slice(2);
if (!sdkDir || !dirArg) {
  console.error("usage: node dataplane.mjs <sdk-dir> <dir> [reps [operation]]");
  process.exit(2);
}
const { lancedb, version: sdkVersion } = loadSDK(sdkDir);
const dir = path.resolve(dirArg);
const reps = Number(repsArg ?? 3);
const plan = JSON.parse(fs.readFileSync(path.join(dir, onlyOp ? "dataplane-plan.json" : "dataplane.json"), "utf8"));
const opFile = (name) => path.join(dir, `sdk-${name}.json`);

function hwm() {
  const m = /VmHWM:\s*(\d+)\s*kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
}

const budget = Number(process.env.LANCECAT_BENCH_SECONDS) > 0 ? Number(process.env.LANCECAT_BENCH_SECONDS) : 1;
const warmRuns = 3, warmTime = 0.2, maxRuns = 500;
const now = () => Number(process.hrtime.bigint()) / 1e9;

async function measure(f) {
  const start = now();
  for (let i = 0; i < warmRuns || now() - start < warmTime; i++) await f();
  const ds = [];
  let spent = 0;
  while (ds.length < maxRuns && (ds.length < reps || spent < budget)) {
    const t = now();
    await f();
    const d = now() - t;
    spent += d;
    ds.push(d);
  }
  ds.sort((a, b) => a - b);
  return { median: ds[Math.floor(ds.length / 2)], best: ds[0], runs: ds.length };
}

const db = await lancedb.connect(plan.root);
const tbl = await db.openTable(plan.table);
const vector = Float32Array.from(plan.vector);
const sdk = {};
let sdkHWM = 0;
for (const op of plan.ops) {
  if (onlyOp && op.name !== onlyOp) continue;
  if (!onlyOp && fs.existsSync(opFile(op.name))) {
    const saved = JSON.parse(fs.readFileSync(opFile(op.name), "utf8"));
    sdk[op.name] = saved.res;
    sdkHWM = Math.max(sdkHWM, saved.hwm);
    continue;
  }
  const res = {};
  let run;
  switch (op.kind) {
    case "count":
      run = async () => {
        res.rows = await (op.filter ? tbl.countRows(op.filter) : tbl.countRows());
      };
      break;
    case "query":
      run = async () => {
        let q = tbl.query().select(op.columns);
        if (op.filter) q = q.where(op.filter);
        res.rows = (await q.toArrow()).numRows;
      };
      break;
    case "knn":
      run = async () => {
        const out = await tbl
          .vectorSearch(vector)
          .column("vector")
          .distanceType("l2")
          .select(op.columns)
          .limit(op.k)
          .toArrow();
        res.rows = out.numRows;
        res.ids = Array.from(out.getChild("id").toArray(), Number);
      };
      break;
    default:
      throw new Error(`unknown operation kind ${op.kind}`);
  }
  const t = await measure(run);
  res.seconds = t.median;
  res.best_s = t.best;
  res.runs = t.runs;
  sdk[op.name] = res;
  if (onlyOp) {
    fs.writeFileSync(opFile(op.name), JSON.stringify({ res, hwm: hwm() }) + "\n");
    process.exit(0);
  }
}
if (onlyOp) {
  console.error(`no operation ${onlyOp} in the plan`);
  process.exit(2);
}
const nodeHWM = Math.max(sdkHWM, hwm());

const fmt = (x) => (x < 0.001 ? `${(x * 1e6).toFixed(0)} µs` : x < 1 ? `${(x * 1000).toFixed(1)} ms` : `${x.toFixed(2)} s`);
const mb = (x) => `${(x / 1048576).toFixed(0)} MiB`;
const goal = 1.5;
console.log("");
console.log(
  `data plane: lancecat serve over REST vs @lancedb/lancedb ${sdkVersion} embedded, same table ` +
    `(${plan.lancecat.count.rows} rows, created through REST); warm-up, then at least ${reps} runs within ${budget} s ` +
    `per operation and side: median (best); ratio = lancecat / SDK of the medians (of the bests), goal <= ${goal}`,
);
console.log("");
const rows = [["operation", "rows", "lancecat", "SDK", "ratio", "runs", ""]];
const mismatches = [];
for (const op of plan.ops) {
  const g = plan.lancecat[op.name];
  const s = sdk[op.name];
  if (g.rows !== s.rows) mismatches.push(`${op.name}: lancecat ${g.rows} rows, SDK ${s.rows}`);
  if (op.kind === "knn" && JSON.stringify(g.ids) !== JSON.stringify(s.ids)) {
    mismatches.push(`${op.name}: lancecat ids ${g.ids}, SDK ids ${s.ids}`);
  }
  const ratio = g.seconds / s.seconds;
  const bestRatio = g.best_s / s.best_s;
  rows.push([
    op.label,
    String(s.rows),
    `${fmt(g.seconds)} (${fmt(g.best_s)})`,
    `${fmt(s.seconds)} (${fmt(s.best_s)})`,
    `${ratio.toFixed(2)} (${bestRatio.toFixed(2)})`,
    `${g.runs}/${s.runs}`,
    ratio > goal ? "over goal" : "",
  ]);
}
const widths = rows[0].map((_, k) => Math.max(...rows.map((r) => r[k].length)));
for (const r of rows) console.log(r.map((c, k) => c.padEnd(widths[k])).join("  ").trimEnd());
console.log("");
console.log(
  `peak RSS: lancecat serve ${mb(plan.serve_server_hwm)} (reads; ${mb(plan.serve_server_rss)} at the end), ` +
    `node + SDK ${mb(nodeHWM)} (the most of its processes)`,
);
console.log(`          lancecat serve creating the table through REST: ${mb(plan.create_server_hwm)} in ${fmt(plan.create_s)}`);
console.log(`client:   ${plan.client}; one HTTP round trip (GET /healthz): ${fmt(plan.healthz_s)} (${fmt(plan.healthz_best_s)})`);
if (plan.http_floor_s) {
  // count_rows can be no faster than one loopback request to a server that does nothing.
  const c = sdk.count;
  console.log(
    `floor:    a minimal Go net/http server (own process) answering count_rows with a constant: ` +
      `${fmt(plan.http_floor_s)} (${fmt(plan.http_floor_best_s)}) = ${(plan.http_floor_s / c.seconds).toFixed(2)} ` +
      `(${(plan.http_floor_best_s / c.best_s).toFixed(2)}) x the SDK's embedded count_rows; lancecat's count_rows is ` +
      `${(plan.lancecat.count.seconds / plan.http_floor_s).toFixed(2)} (${(plan.lancecat.count.best_s / plan.http_floor_best_s).toFixed(2)}) x that floor`,
  );
}
fs.writeFileSync(
  path.join(dir, "dataplane-results.json"),
  JSON.stringify({ sdk: sdkVersion, reps, budget_s: budget, lancecat: plan.lancecat, lancedb: sdk, serve_server_hwm: plan.serve_server_hwm, create_server_hwm: plan.create_server_hwm, node_hwm: nodeHWM }, null, 2) + "\n",
);
if (mismatches.length) {
  console.error("answers differ:\n  " + mismatches.join("\n  "));
  process.exit(1);
}
