// The SDK side of scripts/query/bench.sh: creates the benchmark table with the official LanceDB SDK
// (if <dir>/db/t.lance does not exist yet) — 200,000 rows of (id int64, s utf8, v float32[128]) — and
// times the five reads of issue 15 on it, embedded (no server): count_rows, count_rows with a
// filter, a filtered query, a two-column full scan, brute-force top-10 kNN. Given querybench's
// results it prints both side by side with the ratios (lancecat / SDK).
//
// usage: node bench.mjs <sdk-dir> <dir> <reps> create|run [go-results.json]
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const [sdkDir, dirArg, repsArg, mode, goResults] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const lancedb = require("@lancedb/lancedb");
const A = require("apache-arrow");
const sdkVersion = JSON.parse(fs.readFileSync(
  path.join(path.resolve(sdkDir), "node_modules/@lancedb/lancedb/package.json"), "utf8")).version;
const dir = path.resolve(dirArg);
const reps = Number(repsArg ?? 5);
const ROWS = 200000, DIM = 128;

// The same ops as querybench (scripts/query/querybench/main.go): keep the two in step.
export const FILTER = "id > 150000 AND s LIKE '%red'";
const COUNT_FILTER = "id % 3 = 0 AND s LIKE '%blue'";
const queryVector = () => Array.from({ length: DIM }, (_, k) => Math.sin(k * 0.37) * 0.5);

const db = await lancedb.connect(path.join(dir, "db"));
if (mode === "create") {
  if (!fs.existsSync(path.join(dir, "db", "t.lance"))) {
    const F = (n, t, nullable = true) => new A.Field(n, t, nullable);
    const schema = new A.Schema([F("id", new A.Int64(), false), F("s", new A.Utf8()),
      F("v", new A.FixedSizeList(DIM, F("item", new A.Float32())))]);
    const colors = ["red", "green", "blue", "cyan"];
    let seed = 7;
    const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
    async function* batches() {
      for (let lo = 0; lo < ROWS; lo += 10000) {
        const rows = [];
        for (let i = lo; i < lo + 10000; i++) {
          rows.push({ id: BigInt(i), s: `row-${i}-${colors[i % 4]}`, v: Array.from({ length: DIM }, () => Math.fround(rnd() * 2 - 1)) });
        }
        yield lancedb.makeArrowTable(rows, { schema });
      }
    }
    let tbl;
    for await (const b of batches()) {
      if (!tbl) tbl = await db.createTable("t", b);
      else await tbl.add(b);
    }
    await tbl.optimize(); // one fragment per 1M rows, as a single write would leave it
  }
  process.exit(0);
}

const tbl = await db.openTable("t");
async function best(f) {
  let b = Infinity;
  for (let i = 0; i < reps; i++) {
    const start = process.hrtime.bigint();
    await f();
    b = Math.min(b, Number(process.hrtime.bigint() - start) / 1e9);
  }
  return b;
}
const sdk = {
  count: await best(async () => { if ((await tbl.countRows()) !== ROWS) throw new Error("count"); }),
  count_filter: await best(() => tbl.countRows(COUNT_FILTER)),
  filtered_query: await best(async () => { const t = await tbl.query().where(FILTER).select(["id", "s"]).toArrow(); if (t.numRows !== 12499) throw new Error(`filtered ${t.numRows}`); }),
  scan_2col: await best(async () => { const t = await tbl.query().select(["id", "s"]).toArrow(); if (t.numRows !== ROWS) throw new Error("scan"); }),
  knn_top10: await best(async () => { const t = await tbl.vectorSearch(queryVector()).column("v").limit(10).select(["id"]).toArrow(); if (t.numRows !== 10) throw new Error("knn"); }),
};
const sdkRSS = process.resourceUsage().maxRSS * 1024;
if (!goResults) {
  process.stdout.write(JSON.stringify({ sdk: sdkVersion, seconds: sdk, peak_rss: sdkRSS }));
  process.exit(0);
}
const go = JSON.parse(fs.readFileSync(goResults, "utf8"));
const ms = (s) => (s * 1000).toFixed(2).padStart(10);
console.log(`200,000 rows (id int64, s utf8, v float32[128]), best of ${reps}; SDK ${sdkVersion} embedded vs package query (engine, no HTTP)`);
console.log(`${"op".padEnd(16)}${"sdk ms".padStart(10)}${"lancecat ms".padStart(12)}${"ratio".padStart(8)}`);
for (const k of Object.keys(sdk)) {
  console.log(`${k.padEnd(16)}${ms(sdk[k])}  ${ms(go.seconds[k])}${(go.seconds[k] / sdk[k]).toFixed(2).padStart(8)}`);
}
console.log(`peak RSS: sdk ${(sdkRSS / 2 ** 20).toFixed(0)} MiB (node process), lancecat ${(go.peak_rss / 2 ** 20).toFixed(0)} MiB`);
fs.writeFileSync(path.join(dir, "results.json"), JSON.stringify({ sdk: { version: sdkVersion, seconds: sdk, peak_rss: sdkRSS }, lancecat: go }, null, 1));
