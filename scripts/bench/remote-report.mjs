// Prints the figures of remote.mjs / remote.py (one JSON file per client) as ratios to the goals
// of issue 35: remote through lancecat serve / the same SDK embedded, medians, in one run.
//
// usage: node remote-report.mjs <result.json>...
import fs from "node:fs";

const goals = {
  write: ["write (create + add)", 1.2],
  count: ["count_rows (vs HTTP floor: see note)", 1.5],
  count_filter: ["count_rows(filter)", 1.0],
  filtered_query: ["filtered query 2,000 rows [id name]", 1.0],
  scan_id_name: ["full scan [id name]", 1.0],
  scan_id_vector: ["full scan [id vector]", 1.0],
  knn: ["top-10 kNN l2 (flat)", 1.0],
  ivf_pq_build: ["IVF_PQ build (256 part., 16 sub-vec.)", 1.0],
  ann: ["indexed kNN (nprobes 20, refine 10)", 1.0],
};
const fmt = (x) => (x < 0.001 ? `${(x * 1e6).toFixed(0)} µs` : x < 1 ? `${(x * 1000).toFixed(2)} ms` : `${x.toFixed(2)} s`);
const mb = (x) => `${(x / 1048576).toFixed(0)} MiB`;
for (const file of process.argv.slice(2)) {
  const r = JSON.parse(fs.readFileSync(file, "utf8"));
  console.log("");
  console.log(`${r.client ?? "@lancedb/lancedb"} ${r.sdk}, ${r.rows.toLocaleString("en")} rows: remote (lancecat serve) / embedded, medians of interleaved pairs`);
  const rows = [["operation", "remote", "embedded", "ratio", "goal", "", "pairs", "load avg"]];
  for (const [name, [label, goal]] of Object.entries(goals)) {
    const o = r.ops[name];
    if (!o) continue;
    let ratio = o.remote / o.embedded;
    let shown = ratio.toFixed(2);
    if (name === "count") {
      // The embedded count has no hop: judged against one HTTP round trip to the same server.
      ratio = o.remote / r.healthz;
      shown = `${(o.remote / o.embedded).toFixed(2)} (${ratio.toFixed(2)}× floor ${fmt(r.healthz)})`;
    }
    rows.push([label, fmt(o.remote), fmt(o.embedded), shown, `≤ ${goal}`, ratio > goal ? "MISSED" : "met", String(o.runs), r.load[name] ?? ""]);
  }
  if (r.ops.ann) rows.push(["  recall@10 remote / embedded", `${r.ops.ann.recall_remote.toFixed(3)}`, `${r.ops.ann.recall_embedded.toFixed(3)}`, "", "± 0.02", Math.abs(r.ops.ann.recall_remote - r.ops.ann.recall_embedded) > 0.02 ? "MISSED" : "met", "", ""]);
  const c = r.concurrency;
  if (c) {
    const tr = c.remote.qps / c.embedded.qps;
    rows.push([`${c.clients} clients, filtered query: qps`, c.remote.qps.toFixed(0), c.embedded.qps.toFixed(0), tr.toFixed(2), "≥ 1.0", tr < 1 ? "MISSED" : "met", "", c.load]);
    rows.push([`  p50 / p99`, `${fmt(c.remote.p50)} / ${fmt(c.remote.p99)}`, `${fmt(c.embedded.p50)} / ${fmt(c.embedded.p99)}`, (c.remote.p99 / c.embedded.p99).toFixed(2), "", "", "", ""]);
  }
  const widths = rows[0].map((_, k) => Math.max(...rows.map((x) => String(x[k]).length)));
  for (const x of rows) console.log(x.map((v, k) => String(v).padEnd(widths[k])).join("  ").trimEnd());
  console.log(`peak RSS: lancecat serve ${mb(r.serve_hwm)} (${mb(r.write_hwm)} after the write; ${mb(r.serve_rss)} at the end); client process (remote + embedded) ${mb(r.node_hwm)}`);
}
