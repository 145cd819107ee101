// Reads a Lance dataset with the official LanceDB SDK and prints what the SDK
// returns, in the expected-JSON encoding of write-fixtures.mjs (encode.mjs),
// so Go can check that datasets it wrote read back exactly.
//
// usage: node read-dataset.mjs <sdk-dir> <dataset-dir> [queries.json] > out.json
//
// <dataset-dir> is <parent>/<name>.lance; it is opened as table <name> of
// lancedb.connect(<parent>). queries.json (optional):
//   {"filters": ["id % 7 = 3", ...],            rows matching, as their "id"
//    "take": [0, 17, ...],                        takeOffsets, if the SDK has it
//    "nearest": {"column": "vec", "query": [..], "k": 10, "distance": "l2"}}
// Output: {"sdk", "count_rows", "scan": {num_rows, schema, columns},
//          "filters": [{"where", "ids"}], "take": {columns} | null,
//          "nearest": {"ids", "distances"} | null}
// int64 ids are decimal strings, as everywhere in the encoding.

import fs from "node:fs";
import path from "node:path";

import { makeEncoder } from "./encode.mjs";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, datasetArg, queriesPath] = process.argv.slice(2);
if (!sdkDir || !datasetArg) {
  console.error("usage: node read-dataset.mjs <sdk-dir> <dataset-dir> [queries.json]");
  process.exit(2);
}
const { lancedb, arrow: A } = loadSDK(sdkDir);
const { encode, encodeTable } = makeEncoder(A);
const sdkVersion = JSON.parse(
  fs.readFileSync(path.join(path.resolve(sdkDir), "node_modules/@lancedb/lancedb/package.json"), "utf8"),
).version;

const datasetDir = path.resolve(datasetArg);
const name = path.basename(datasetDir).replace(/\.lance$/, "");
const db = await lancedb.connect(path.dirname(datasetDir));
const tbl = await db.openTable(name);
const queries = queriesPath ? JSON.parse(fs.readFileSync(queriesPath, "utf8")) : {};

function column(table, name) {
  const out = [];
  const k = table.schema.fields.findIndex((f) => f.name === name);
  if (k < 0) throw new Error(`no column ${name} in result`);
  for (const batch of table.batches) {
    const d = batch.data.children[k];
    for (let i = 0; i < d.length; i++) out.push(encode(d, i));
  }
  return out;
}

const result = { sdk: sdkVersion, count_rows: await tbl.countRows() };
result.scan = encodeTable(await tbl.query().toArrow());

result.filters = [];
for (const where of queries.filters ?? []) {
  const t = await tbl.query().where(where).select(["id"]).toArrow();
  result.filters.push({ where, ids: column(t, "id") });
}

result.take = null;
if (queries.take && typeof tbl.takeOffsets === "function") {
  const t = await tbl.takeOffsets(queries.take).toArrow();
  result.take = encodeTable(t).columns;
}

result.nearest = null;
if (queries.nearest) {
  const q = queries.nearest;
  const t = await tbl
    .query()
    .nearestTo(Float32Array.from(q.query))
    .column(q.column)
    .distanceType(q.distance ?? "l2")
    .limit(q.k ?? 10)
    .select(["id"])
    .toArrow();
  result.nearest = { ids: column(t, "id"), distances: column(t, "_distance") };
}

process.stdout.write(JSON.stringify(result) + "\n");
