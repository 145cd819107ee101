// Appends to a Lance dataset with the official LanceDB SDK: the first <n>
// rows the SDK reads from the table are added again at its end. Interop
// tests use it on Go-written datasets (the SDK's append over our commits)
// and then read the mixed result from both sides.
//
// usage: node append-dataset.mjs <sdk-dir> <dataset-dir> <n>
// Prints {"sdk", "version", "count_rows"} after the append.

import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, datasetArg, nArg] = process.argv.slice(2);
if (!sdkDir || !datasetArg || !nArg) {
  console.error("usage: node append-dataset.mjs <sdk-dir> <dataset-dir> <n>");
  process.exit(2);
}
const { lancedb, version: sdkVersion } = loadSDK(sdkDir);

const datasetDir = path.resolve(datasetArg);
const name = path.basename(datasetDir).replace(/\.lance$/, "");
const db = await lancedb.connect(path.dirname(datasetDir));
const tbl = await db.openTable(name);
const rows = await tbl.query().limit(Number(nArg)).toArrow();
await tbl.add(rows);
process.stdout.write(JSON.stringify({ sdk: sdkVersion, version: await tbl.version(), count_rows: await tbl.countRows() }) + "\n");
