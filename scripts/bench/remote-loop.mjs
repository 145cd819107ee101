// Replays one request of remote.mjs through the SDK's remote client in a loop, for profiling
// `lancecat serve` (curl its --metrics-addr /debug/pprof/profile meanwhile).
//
// usage: node remote-loop.mjs <sdk-dir> <url> <seconds> <kind: query|count|knn> [filter [columns,...]]
import { createRequire } from "node:module";
import path from "node:path";

const [sdkDir, url, secs, kind, filter, cols] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const lancedb = require("@lancedb/lancedb");
// A url that is a directory: the SDK embedded on that root instead.
const db = url.startsWith("/") ? await lancedb.connect(url) : await lancedb.connect("db://lancecat", { apiKey: "bench", hostOverride: url });
const tbl = await db.openTable("bench");
const columns = cols ? cols.split(",") : ["id", "name"];
const qv = Float32Array.from({ length: 128 }, (_, k) => Math.sin(k * 0.37) * 0.5);
const run = {
  query: async () => { let q = tbl.query().select(columns); if (filter) q = q.where(filter); return (await q.toArrow()).numRows; },
  count: async () => (filter ? tbl.countRows(filter) : tbl.countRows()),
  knn: async () => (await tbl.vectorSearch(qv).column("vector").distanceType("l2").select(columns).limit(10).bypassVectorIndex().toArrow()).numRows,
}[kind];
const end = Date.now() + Number(secs) * 1000;
let n = 0, rows;
const t0 = Date.now();
while (Date.now() < end) { rows = await run(); n++; }
console.log(`${n} requests in ${(Date.now() - t0) / 1000} s: ${((Date.now() - t0) / n).toFixed(2)} ms each, ${rows} rows`);
