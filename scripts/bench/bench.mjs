// Times the official LanceDB SDK writing and scanning the benchmark tables
// that lancebench generated (<dir>/wide.arrow, <dir>/narrow.arrow), then,
// given lancebench's results, prints both side by side with the ratios.
//
// usage: node bench.mjs <sdk-dir> <dir> [reps] [go-results.json]
//
// Write: the Arrow IPC bytes (already in memory) go to the SDK's native
// createTable (storage version 2.1), which decodes them and writes a
// dataset; lancecat's figure is the Go writer over the same records.
// Scans materialize the selected columns of every row as Arrow (for the SDK
// that includes handing the batches to JavaScript).
// Dataset layer: "take" reads the 1,000 rows of <dir>/take-<table>.json by
// offset (takeOffsets) from the table createTable wrote; "append" adds the
// same rows to it (tbl.add of the decoded Arrow table; lancecat's figure is
// lance.Dataset.Append over the same records); "ds_write" is lancecat's
// dataset create (the SDK's is its write figure).

import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, dirArg, repsArg, goResults] = process.argv.slice(2);
if (!sdkDir || !dirArg) {
  console.error("usage: node bench.mjs <sdk-dir> <dir> [reps] [go-results.json]");
  process.exit(2);
}
const { lancedb, arrow: A, version: sdkVersion } = loadSDK(sdkDir);
const dir = path.resolve(dirArg);
const reps = Number(repsArg ?? 3);

const tables = {
  wide: { rows: 200000, scanCols: ["id", "vector"] },
  narrow: { rows: 1000000, scanCols: ["id", "value"] },
};

// best runs setup (untimed), then f, reps times and returns the fastest f.
async function best(f, setup = async () => {}) {
  let b = Infinity;
  for (let i = 0; i < reps; i++) {
    await setup();
    const start = process.hrtime.bigint();
    await f();
    b = Math.min(b, Number(process.hrtime.bigint() - start) / 1e9);
  }
  return b;
}

function dirBytes(p) {
  let n = 0;
  for (const e of fs.readdirSync(p, { withFileTypes: true })) {
    const q = path.join(p, e.name);
    n += e.isDirectory() ? dirBytes(q) : fs.statSync(q).size;
  }
  return n;
}

const db = await lancedb.connect(path.join(dir, "sdk"));
const sdk = {};
for (const [name, t] of Object.entries(tables)) {
  const ipc = fs.readFileSync(path.join(dir, `${name}.arrow`));
  const res = { rows: t.rows, scan_cols: String(t.scanCols) };
  // Each write starts from no table, so the data size is one version's.
  res.write_s = await best(
    () => db.inner.createTable(name, ipc, "create", [], { new_table_data_storage_version: "2.1" }),
    async () => {
      if ((await db.tableNames()).includes(name)) await db.dropTable(name);
    },
  );
  res.bytes = dirBytes(path.join(dir, "sdk", `${name}.lance`, "data"));
  const tbl = await db.openTable(name);
  const scan = (cols) => async () => {
    let q = tbl.query();
    if (cols) q = q.select(cols);
    const out = await q.toArrow();
    if (out.numRows !== t.rows) throw new Error(`${name}: scanned ${out.numRows} rows, want ${t.rows}`);
  };
  res.scan2_s = await best(scan(t.scanCols));
  res.scan_all_s = await best(scan(null));
  const offs = JSON.parse(fs.readFileSync(path.join(dir, `take-${name}.json`), "utf8"));
  if (typeof tbl.takeOffsets === "function") {
    res.take_s = await best(async () => {
      const out = await tbl.takeOffsets(offs).toArrow();
      if (out.numRows !== offs.length) throw new Error(`${name}: took ${out.numRows} rows, want ${offs.length}`);
    });
  }
  const decoded = A.tableFromIPC(ipc);
  res.append_s = await best(() => tbl.add(decoded));
  sdk[name] = res;
}

if (!goResults) {
  process.stdout.write(JSON.stringify({ sdk: sdkVersion, results: sdk }) + "\n");
  process.exit(0);
}

const go = JSON.parse(fs.readFileSync(goResults, "utf8"));
const fmt = (x) => (x < 1 ? `${(x * 1000).toFixed(1)} ms` : `${x.toFixed(2)} s`);
const mb = (x) => `${(x / 1048576).toFixed(1)} MiB`;
console.log(`lancecat vs @lancedb/lancedb ${sdkVersion} (best of ${reps}; ratio = lancecat / SDK, < 1 is faster)`);
console.log("");
const rows = [["table", "measure", "lancecat", "SDK", "ratio"]];
for (const name of Object.keys(tables)) {
  const g = go[name];
  const s = sdk[name];
  rows.push([`${name} (${s.rows} rows)`, "write", fmt(g.write_s), fmt(s.write_s), (g.write_s / s.write_s).toFixed(2)]);
  rows.push(["", `scan ${s.scan_cols}`, fmt(g.scan2_s), fmt(s.scan2_s), (g.scan2_s / s.scan2_s).toFixed(2)]);
  rows.push(["", "scan all columns", fmt(g.scan_all_s), fmt(s.scan_all_s), (g.scan_all_s / s.scan_all_s).toFixed(2)]);
  rows.push(["", "data bytes", mb(g.bytes), mb(s.bytes), (g.bytes / s.bytes).toFixed(2)]);
  rows.push(["", "dataset create", fmt(g.ds_write_s), fmt(s.write_s), (g.ds_write_s / s.write_s).toFixed(2)]);
  rows.push(["", "dataset append", fmt(g.append_s), fmt(s.append_s), (g.append_s / s.append_s).toFixed(2)]);
  if (s.take_s !== undefined) {
    rows.push(["", "take 1,000 random rows", fmt(g.take_s), fmt(s.take_s), (g.take_s / s.take_s).toFixed(2)]);
  }
}
const widths = rows[0].map((_, k) => Math.max(...rows.map((r) => r[k].length)));
for (const r of rows) console.log(r.map((c, k) => c.padEnd(widths[k])).join("  "));
fs.writeFileSync(path.join(dir, "results.json"), JSON.stringify({ sdk: sdkVersion, lancecat: go, lancedb: sdk }, null, 2) + "\n");
