// The data-plane comparison (issue 15): the official LanceDB SDK embedded (no server) runs the
// operations of <dir>/dataplane.json — which `lancebench rest` wrote after timing them against
// `lancecat serve` over REST — on the very same table (the one lancecat created through REST in
// <dir>/root), checks that both sides answered alike, and prints the ratios and peak RSS.
//
// usage: node dataplane.mjs <sdk-dir> <dir> [reps]
//
// Each operation runs once untimed (lancebench warms up the same way), then reps times; the
// best counts. The SDK's scans and queries materialize the answer as an Arrow table in
// JavaScript (toArrow); lancecat's are decoded by the Go client as they arrive.

import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const [sdkDir, dirArg, repsArg] = process.argv.slice(2);
if (!sdkDir || !dirArg) {
  console.error("usage: node dataplane.mjs <sdk-dir> <dir> [reps]");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const lancedb = require("@lancedb/lancedb");
const sdkVersion = JSON.parse(
  fs.readFileSync(path.join(path.resolve(sdkDir), "node_modules/@lancedb/lancedb/package.json"), "utf8"),
).version;
const dir = path.resolve(dirArg);
const reps = Number(repsArg ?? 3);
const plan = JSON.parse(fs.readFileSync(path.join(dir, "dataplane.json"), "utf8"));

function hwm() {
  const m = /VmHWM:\s*(\d+)\s*kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function best(f) {
  await f();
  let b = Infinity;
  for (let i = 0; i < reps; i++) {
    const start = process.hrtime.bigint();
    await f();
    b = Math.min(b, Number(process.hrtime.bigint() - start) / 1e9);
  }
  return b;
}

const db = await lancedb.connect(plan.root);
const tbl = await db.openTable(plan.table);
const vector = Float32Array.from(plan.vector);
const sdk = {};
for (const op of plan.ops) {
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
  res.seconds = await best(run);
  sdk[op.name] = res;
}
const nodeHWM = hwm();

const fmt = (x) => (x < 0.001 ? `${(x * 1e6).toFixed(0)} µs` : x < 1 ? `${(x * 1000).toFixed(1)} ms` : `${x.toFixed(2)} s`);
const mb = (x) => `${(x / 1048576).toFixed(0)} MiB`;
const goal = 1.5;
console.log("");
console.log(
  `data plane: lancecat serve over REST vs @lancedb/lancedb ${sdkVersion} embedded, same table ` +
    `(${plan.lancecat.count.rows} rows, created through REST), best of ${reps}; ratio = lancecat / SDK, goal <= ${goal}`,
);
console.log("");
const rows = [["operation", "rows", "lancecat", "SDK", "ratio", ""]];
const mismatches = [];
for (const op of plan.ops) {
  const g = plan.lancecat[op.name];
  const s = sdk[op.name];
  if (g.rows !== s.rows) mismatches.push(`${op.name}: lancecat ${g.rows} rows, SDK ${s.rows}`);
  if (op.kind === "knn" && JSON.stringify(g.ids) !== JSON.stringify(s.ids)) {
    mismatches.push(`${op.name}: lancecat ids ${g.ids}, SDK ids ${s.ids}`);
  }
  const ratio = g.seconds / s.seconds;
  rows.push([op.label, String(s.rows), fmt(g.seconds), fmt(s.seconds), ratio.toFixed(2), ratio > goal ? "over goal" : ""]);
}
const widths = rows[0].map((_, k) => Math.max(...rows.map((r) => r[k].length)));
for (const r of rows) console.log(r.map((c, k) => c.padEnd(widths[k])).join("  ").trimEnd());
console.log("");
console.log(`peak RSS: lancecat serve ${mb(plan.serve_server_hwm)} (reads; ${mb(plan.serve_server_rss)} at the end), node + SDK ${mb(nodeHWM)}`);
console.log(`          lancecat serve creating the table through REST: ${mb(plan.create_server_hwm)} in ${fmt(plan.create_s)}`);
console.log(`client:   ${plan.client}; one HTTP round trip (GET /healthz): ${fmt(plan.healthz_s)}`);
fs.writeFileSync(
  path.join(dir, "dataplane-results.json"),
  JSON.stringify({ sdk: sdkVersion, reps, lancecat: plan.lancecat, lancedb: sdk, serve_server_hwm: plan.serve_server_hwm, create_server_hwm: plan.create_server_hwm, node_hwm: nodeHWM }, null, 2) + "\n",
);
if (mismatches.length) {
  console.error("answers differ:\n  " + mismatches.join("\n  "));
  process.exit(1);
}
