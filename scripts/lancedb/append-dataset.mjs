// Appends to a Lance dataset with the official LanceDB SDK: the first <n>
// rows the SDK reads from the table are added again at its end. Interop
// tests use it on Go-written datasets (the SDK's append over our commits)
// and then read the mixed result from both sides.
//
// usage: node append-dataset.mjs <sdk-dir> <dataset-dir> <n>
// Prints {"sdk", "version", "count_rows"} after the append.

import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const [sdkDir, datasetArg, nArg] = process.argv.slice(2);
if (!sdkDir || !datasetArg || !nArg) {
  console.error("usage: node append-dataset.mjs <sdk-dir> <dataset-dir> <n>");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const lancedb = require("@lancedb/lancedb");
const sdkVersion = JSON.parse(
  fs.readFileSync(path.join(path.resolve(sdkDir), "node_modules/@lancedb/lancedb/package.json"), "utf8"),
).version;

const datasetDir = path.resolve(datasetArg);
const name = path.basename(datasetDir).replace(/\.lance$/, "");
const db = await lancedb.connect(path.dirname(datasetDir));
const tbl = await db.openTable(name);
const rows = await tbl.query().limit(Number(nArg)).toArrow();
await tbl.add(rows);
process.stdout.write(JSON.stringify({ sdk: sdkVersion, version: await tbl.version(), count_rows: await tbl.countRows() }) + "\n");
