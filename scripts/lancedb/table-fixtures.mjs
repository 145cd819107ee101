// Table-format fixtures for the Go lance package, written and checked with
// the official LanceDB SDK.
//
//   node table-fixtures.mjs write  <sdk-dir> <out-dir>
//       Writes tables with a history (appends, deletes small and large,
//       an update, a btree and an IVF_PQ index, tags, a branch, a
//       compaction) in both data storage versions, plus a V1-named table,
//       and <out-dir>/expected.json: what the SDK reports for every version.
//
// What Go commits on copies of those tables is checked by the SDK through
// table-interop.mjs verify.
//
// <sdk-dir> is what scripts/lancedb/install.sh prints.
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [mode, sdkDir, arg] = process.argv.slice(2);
if (mode !== "write" || !sdkDir || !arg) {
  console.error("usage: node table-fixtures.mjs write <sdk-dir> <out-dir>");
  process.exit(2);
}
const { lancedb, arrow, version: sdkVersion } = loadSDK(sdkDir);

// The JSON type names of the Lance Namespace spec (what Go's ToJSONSchema
// writes), computed from an arrow-js type.
function jsonType(t) {
  const T = arrow.Type;
  switch (t.typeId) {
    case T.Null: return { type: "null" };
    case T.Bool: return { type: "bool" };
    case T.Int: return { type: `${t.isSigned ? "" : "u"}int${t.bitWidth}` };
    case T.Float: return { type: ["float16", "float32", "float64"][t.precision] };
    case T.Utf8: return { type: "utf8" };
    case T.LargeUtf8: return { type: "large_utf8" };
    case T.Binary: return { type: "binary" };
    case T.LargeBinary: return { type: "large_binary" };
    case T.Date: return { type: t.unit === arrow.DateUnit.DAY ? "date32" : "date64" };
    // Lance's logical type string keeps the unit and the zone ("-" for none): timestamp:us:UTC.
    case T.Timestamp: return { type: `timestamp:${["s", "ms", "us", "ns"][t.unit]}:${t.timezone || "-"}` };
    case T.Decimal: return { type: t.bitWidth === 256 ? "decimal256" : "decimal128", length: t.precision * 1000 + t.scale };
    case T.FixedSizeBinary: return { type: "fixed_size_binary", length: t.byteWidth };
    case T.FixedSizeList: return { type: "fixed_size_list", fields: t.children.map(jsonField), length: t.listSize };
    case T.List: return { type: "list", fields: t.children.map(jsonField) };
    case T.Struct: return { type: "struct", fields: t.children.map(jsonField) };
    case T.Dictionary: return jsonType(t.dictionary);
  }
  if (String(t).startsWith("LargeList")) return { type: "large_list", fields: t.children.map(jsonField) };
  return { type: `unknown:${t}` };
}
function jsonField(f) {
  return { name: f.name, type: jsonType(f.type), nullable: f.nullable };
}

const F = (name, type, nullable = true) => new arrow.Field(name, type, nullable);
const schema = new arrow.Schema([
  F("id", new arrow.Int64(), false),
  F("name", new arrow.Utf8()),
  F("score", new arrow.Float64()),
  F("flag", new arrow.Bool()),
  F("small", new arrow.Int16()),
  F("vec", new arrow.FixedSizeList(8, F("item", new arrow.Float32()))),
  F("tags", new arrow.List(F("item", new arrow.Utf8()))),
  F("st", new arrow.Struct([F("a", new arrow.Int32()), F("b", new arrow.Utf8())])),
  F("ts", new arrow.TimestampMicrosecond("UTC")),
  F("day", new arrow.DateDay()),
  F("raw", new arrow.Binary()),
  F("big", new arrow.LargeUtf8()),
]);

function rows(start, n) {
  const out = [];
  for (let i = start; i < start + n; i++) {
    out.push({
      id: BigInt(i),
      name: i % 7 === 0 ? null : `n${i}`,
      score: i * 0.5,
      flag: i % 2 === 0,
      small: i % 30000,
      vec: Array.from({ length: 8 }, (_, k) => Math.sin(i * 8 + k)),
      tags: i % 5 === 0 ? null : [`t${i % 3}`, `u${i % 4}`],
      st: { a: i, b: i % 3 === 0 ? null : `s${i}` },
      ts: new Date(Date.UTC(2026, 0, 1) + i * 1000),
      day: new Date(Date.UTC(2026, 0, 1 + (i % 365))),
      raw: Buffer.from([i & 255, (i >> 8) & 255]),
      big: `large-${i}`,
    });
  }
  return lancedb.makeArrowTable(out, { schema });
}

async function describeVersions(t) {
  const out = [];
  for (const v of await t.listVersions()) {
    await t.checkout(v.version);
    const s = await t.schema();
    out.push({ version: v.version, timestamp_ms: v.timestamp.getTime(), rows: await t.countRows(),
      fields: s.fields.map((f) => f.name), schema: s.fields.map(jsonField) });
  }
  await t.checkoutLatest();
  return out;
}

async function describe(t, name, naming, storage) {
  const tags = Object.fromEntries(Object.entries(await (await t.tags()).list())
    .map(([k, c]) => [k, { version: c.version, manifestSize: c.manifestSize }]));
  const br = await t.branches();
  const branches = {};
  for (const [k, c] of Object.entries(await br.list())) {
    const bt = await br.checkout(k);
    branches[k] = { parentVersion: c.parentVersion, parentBranch: c.parentBranch ?? null,
      manifestSize: c.manifestSize, versions: await describeVersions(bt) };
  }
  const indices = (await t.listIndices()).map((i) => ({ name: i.name, type: i.indexType, columns: i.columns }));
  return { name, dir: `${name}.lance`, naming, storage, versions: await describeVersions(t),
    tags, branches, indices, stats: await t.stats() };
}

async function history(db, name, storage, naming) {
  const storageOptions = { new_table_data_storage_version: storage };
  if (naming === "v1") storageOptions.new_table_enable_v2_manifest_paths = "false";
  const t = await db.createTable(name, rows(0, 300), { storageOptions });
  await t.add(rows(300, 200));
  await t.add(rows(500, 12000));
  await t.delete("id % 10 = 3");                     // small deletes: .arrow files
  await t.delete("id >= 6000 AND id < 12500");       // > 5000 in one fragment: .bin
  await t.update({ where: "id = 42", values: { score: "999" } });
  const tags = await t.tags();
  await tags.create("first", 1);
  await t.createIndex("id", { config: lancedb.Index.btree() });
  await t.createIndex("vec", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }) });
  await t.add(rows(20000, 100));
  await t.addColumns([{ name: "twice", valueSql: "id * 2" }]);
  await tags.create("before-compaction", await t.version());
  await t.optimize();                                 // reserve_fragments + rewrite (+ index optimize)
  await t.alterColumns([{ path: "big", rename: "large_text" }]);
  const br = await t.branches();
  const b = await br.create("exp/one");
  await b.add(await b.query().limit(10).toArrow());
  await b.delete("id = 1");
  return describe(t, name, naming, storage);
}

async function write(outDir) {
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const db = await lancedb.connect(outDir);
  const tables = [];
  tables.push(await history(db, "hist_v2_1", "2.1", "v2"));
  tables.push(await history(db, "hist_v2_0", "2.0", "v2"));
  {
    const t = await db.createTable("v1names", rows(0, 10), { storageOptions: { new_table_enable_v2_manifest_paths: "false" } });
    await t.add(rows(10, 10));
    await t.delete("id < 3");
    await (await t.tags()).create("one", 1);
    tables.push(await describe(t, "v1names", "v1", "2.1"));
  }
  fs.writeFileSync(path.join(outDir, "expected.json"),
    JSON.stringify({ sdk: sdkVersion, sdk_dir: path.resolve(sdkDir), tables }, null, 1));
  console.log(`lancedb ${sdkVersion}: ${tables.length} tables in ${outDir}`);
}

await write(path.resolve(arg));
