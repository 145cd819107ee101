// The oracle of the query package's differential test: the official LanceDB SDK (embedded, no server)
// runs every query of a corpus over one table, and prints what it answered.
//
//   node scripts/query/oracle.mjs <sdk-dir> <work-dir> <queries.json>
//
// Creates table "t" under <work-dir>/db (two fragments: created, then added to; then some rows
// deleted), so the Go side opens the very same dataset (<work-dir>/db/t.lance) and runs the same
// queries with package query. Columns: id int64, name utf8 (nulls), score float64 (nulls, NaN),
// vec float32[16] (a few null vectors), bv uint8[8] (binary vectors for hamming), v64 float64[12].
// Prints JSON: {"sdk": version, "results": [{"name", "ids": [..], "distances": [..], "query_index": [..],
// "columns": [..]} | {"name", "error": "..."}]}.
//
// A query of queries.json: {name, filter, select, limit, offset, vector (array, or array of arrays for
// several query vectors), column, metric, k, prefilter (default true), lower, upper, withRowId,
// orderBy: [{column, ascending, nullsFirst}]}. An SDK without orderBy answers {"name", "skip": why}.
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, workDir, queriesPath] = process.argv.slice(2);
if (!sdkDir || !workDir || !queriesPath) {
  console.error("usage: node oracle.mjs <sdk-dir> <work-dir> <queries.json>");
  process.exit(2);
}
const { lancedb, arrow, version: sdkVersion } = loadSDK(sdkDir);

const DIM = 16;
const F = (name, type, nullable = true) => new arrow.Field(name, type, nullable);
const schema = new arrow.Schema([
  F("id", new arrow.Int64(), false),
  F("name", new arrow.Utf8()),
  F("score", new arrow.Float64()),
  F("vec", new arrow.FixedSizeList(DIM, F("item", new arrow.Float32()))),
  F("bv", new arrow.FixedSizeList(8, F("item", new arrow.Uint8()))),
  F("v64", new arrow.FixedSizeList(12, F("item", new arrow.Float64()))),
]);
// A small deterministic generator (no ties in practice for float distances).
let seed = 12345;
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const makeRows = (lo, hi) => {
  const rows = [];
  for (let i = lo; i < hi; i++) {
    const vec = i % 53 === 0 ? null : Array.from({ length: DIM }, () => Math.fround(rnd() * 2 - 1));
    rows.push({
      id: BigInt(i),
      name: i % 7 === 0 ? null : `n${String(i % 150).padStart(3, "0")}`,
      score: i % 5 === 0 ? null : i % 13 === 0 ? NaN : Math.round(rnd() * 1000) / 10,
      vec,
      bv: Array.from({ length: 8 }, () => Math.floor(rnd() * 256)),
      v64: Array.from({ length: 12 }, () => rnd() * 4 - 2),
    });
  }
  return rows;
};

fs.mkdirSync(workDir, { recursive: true });
const db = await lancedb.connect(path.join(workDir, "db"));
const tbl = await db.createTable("t", lancedb.makeArrowTable(makeRows(0, 1200), { schema }), { mode: "overwrite" });
await tbl.add(lancedb.makeArrowTable(makeRows(1200, 2000), { schema }));
await tbl.delete("id % 10 = 3 AND id < 1500");

const queries = JSON.parse(fs.readFileSync(queriesPath, "utf8"));
const results = [];
for (const q of queries) {
  try {
    let b;
    if (q.vector) {
      const vs = Array.isArray(q.vector[0]) ? q.vector : [q.vector];
      b = tbl.vectorSearch(vs[0]);
      for (const v of vs.slice(1)) b = b.addQueryVector(v);
      if (q.column) b = b.column(q.column);
      if (q.metric) b = b.distanceType(q.metric);
      if (q.k) b = b.limit(q.k);
      if (q.prefilter === false) b = b.postfilter();
      if (q.lower !== undefined || q.upper !== undefined) b = b.distanceRange(q.lower, q.upper);
    } else {
      b = tbl.query();
      if (q.limit) b = b.limit(q.limit);
    }
    if (q.filter) b = b.where(q.filter);
    if (q.select) b = b.select(q.select);
    if (q.offset) b = b.offset(q.offset);
    if (q.withRowId) b = b.withRowId(true);
    if (q.orderBy) {
      if (typeof b.orderBy !== "function") {
        results.push({ name: q.name, skip: `order_by needs a newer SDK than ${sdkVersion}` });
        continue;
      }
      b = b.orderBy(q.orderBy.map((o) => ({ columnName: o.column, ascending: o.ascending, nullsFirst: o.nullsFirst })));
    }
    const t = await b.toArrow();
    const col = (n) => { const c = t.getChild(n); return c ? Array.from(c.toArray(), (v) => (typeof v === "bigint" ? Number(v) : v)) : undefined; };
    results.push({
      name: q.name, columns: t.schema.fields.map((f) => f.name), ids: col("id") ?? [],
      distances: col("_distance"), query_index: col("query_index"), rowids: col("_rowid"),
    });
  } catch (e) {
    results.push({ name: q.name, error: String(e.message ?? e) });
  }
}
process.stdout.write(JSON.stringify({ sdk: sdkVersion, results }));
