// Writes Lance fixture datasets with the official LanceDB SDK, and next to
// each one the rows the SDK reads back, so Go can compare its decoder with
// the reference implementation value by value.
//
// usage: node write-fixtures.mjs <sdk-dir> <out-dir>
//
// <sdk-dir> is a directory prepared by install.sh (node_modules with
// @lancedb/lancedb and apache-arrow). Everything is deterministic (seeded
// PRNG), so two runs with the same SDK produce the same values.
//
// For every dataset <name> it writes:
//   <out-dir>/<name>.lance/                 the table (lancedb.connect(outDir))
//   <out-dir>/<name>.expected.json          table.query().toArrow() after all writes
//   <out-dir>/<name>.before-deletes.expected.json   (only for tables with deletes)
// and <out-dir>/fixtures.json, an index with what was written or skipped.
//
// Expected-JSON encoding (chosen so a Go test can compare exactly):
//   {"table", "sdk", "storage_version", "num_rows", "num_fragments",
//    "schema": [{"name","type","nullable"}], "columns": {name: [values]}}
//   null → null; bool → true/false; int8..int32, uint8..uint32, date32 → number;
//   int64, uint64, timestamps, decimal (unscaled integer) → decimal string;
//   float16/32/64 → lowercase hex of the IEEE bit pattern ("3f800000"), so
//   NaN, -0 and infinities survive; utf8 → string; binary → base64;
//   list/fixed_size_list → array; struct → object; dictionary → its value.

import fs from "node:fs";
import path from "node:path";

import { makeEncoder } from "./encode.mjs";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, outDirArg] = process.argv.slice(2);
if (!sdkDir || !outDirArg) {
  console.error("usage: node write-fixtures.mjs <sdk-dir> <out-dir>");
  process.exit(2);
}
const outDir = path.resolve(outDirArg);
fs.mkdirSync(outDir, { recursive: true });

// Resolve both packages from the SDK dir: the SDK checks arrow objects with
// instanceof, so we must use its apache-arrow instance, not another copy.
const { lancedb, arrow, version: sdkVersion } = loadSDK(sdkDir);

// ---------------------------------------------------------------- PRNG

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------- builders

const A = arrow;

function field(name, type, nullable = true) {
  return new A.Field(name, type, nullable);
}

// Builds a vector from logical JS values (null = null) with the arrow builders,
// which handle nesting; bigints for 64-bit integers.
function vec(type, values) {
  // The timestamp builders take epoch milliseconds as JS numbers and multiply,
  // which cannot express every microsecond; build those buffers directly.
  if (type.typeId === A.Type.Timestamp) return rawBigInt64(type, values);
  // The fixed-size-list builder does not pad the child for null rows, which
  // produces an invalid array; a null row still owns listSize child slots.
  if (type.typeId === A.Type.FixedSizeList) return fixedSizeList(type, values);
  const b = A.makeBuilder({ type, nullValues: [null, undefined] });
  for (const v of values) b.append(v);
  return b.finish().toVector();
}

function rawBigInt64(type, values) {
  const n = values.length;
  const data = new BigInt64Array(n);
  const validity = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  values.forEach((v, i) => {
    if (v === null || v === undefined) {
      nulls++;
      return;
    }
    data[i] = BigInt(v);
    validity[i >> 3] |= 1 << (i & 7);
  });
  return A.makeVector(
    A.makeData({ type, length: n, nullCount: nulls, nullBitmap: nulls ? validity : null, data }),
  );
}

function validityOf(values) {
  const validity = new Uint8Array((values.length + 7) >> 3);
  let nulls = 0;
  values.forEach((v, i) => {
    if (v === null || v === undefined) nulls++;
    else validity[i >> 3] |= 1 << (i & 7);
  });
  return { nulls, nullBitmap: nulls ? validity : null };
}

function fixedSizeList(type, values) {
  const size = type.listSize;
  const flat = [];
  for (const v of values) {
    if (v === null || v === undefined) for (let k = 0; k < size; k++) flat.push(null);
    else flat.push(...v);
  }
  const child = vec(type.children[0].type, flat).data[0];
  const { nulls, nullBitmap } = validityOf(values);
  return A.makeVector(
    A.makeData({ type, length: values.length, nullCount: nulls, nullBitmap, child }),
  );
}

function tableOf(fields, columns) {
  const schema = new A.Schema(fields);
  const data = fields.map((f) => vec(f.type, columns[f.name]).data[0]);
  const n = data[0].length;
  const structData = A.makeData({
    type: new A.Struct(fields),
    length: n,
    nullCount: 0,
    children: data,
  });
  return new A.Table(schema, new A.RecordBatch(schema, structData));
}

function ipc(table) {
  return Buffer.from(A.tableToIPC(table, "file"));
}

// ---------------------------------------------------------------- generators

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const U64_MAX = 2n ** 64n - 1n;

function gen(seed) {
  const r = mulberry32(seed);
  const g = {
    r,
    int(lo, hi) {
      return lo + Math.floor(r() * (hi - lo + 1));
    },
    big(lo, hi) {
      const span = hi - lo + 1n;
      const x = (BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32));
      return lo + (x % span);
    },
    nullable(p, f) {
      return r() < p ? null : f();
    },
    str(minLen, maxLen) {
      const alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_äöüß€😀";
      const chars = [...alphabet];
      const n = g.int(minLen, maxLen);
      let s = "";
      for (let i = 0; i < n; i++) s += chars[Math.floor(r() * chars.length)];
      return s;
    },
    // Compressible text, as FSST sees in practice.
    words(minLen, maxLen) {
      const words = ["lance", "catalog", "arrow", "go", "vector", "table", "file", "page", "the", "of"];
      const n = g.int(minLen, maxLen);
      let s = "";
      while (s.length < n) s += words[Math.floor(r() * words.length)] + " ";
      return s.slice(0, n);
    },
    bytes(minLen, maxLen) {
      const n = g.int(minLen, maxLen);
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
      return b;
    },
    f32() {
      return Math.fround((r() - 0.5) * 2000);
    },
  };
  return g;
}

// Edge values that must round-trip exactly; used for the first rows.
const F64_EDGES = [0, -0, 1, -1, Number.MAX_VALUE, Number.MIN_VALUE, Infinity, -Infinity, NaN, 1e-300];
const F32_EDGES = [0, -0, 1, -1, 3.4028234663852886e38, 1.401298464324817e-45, Infinity, -Infinity, NaN];

function withEdges(edges, i, f) {
  return i < edges.length ? edges[i] : f();
}

// ---------------------------------------------------------------- schemas

const TS_US_UTC = new A.TimestampMicrosecond("UTC");
const TS_US = new A.TimestampMicrosecond(null);

function typesFields() {
  return [
    field("id", new A.Int64(), false),
    field("i8", new A.Int8()),
    field("i16", new A.Int16()),
    field("i32", new A.Int32()),
    field("i64", new A.Int64()),
    field("u8", new A.Uint8()),
    field("u16", new A.Uint16()),
    field("u32", new A.Uint32()),
    field("u64", new A.Uint64()),
    field("f32", new A.Float32()),
    field("f64", new A.Float64()),
    field("b", new A.Bool()),
    field("s", new A.Utf8()),
    field("cat", new A.Utf8()),
    field("ls", new A.LargeUtf8()),
    field("bin", new A.Binary()),
    field("lbin", new A.LargeBinary()),
    field("v8", new A.FixedSizeList(8, field("item", new A.Float32()))),
    field("li", new A.List(field("item", new A.Int32()))),
    field("st", new A.Struct([field("a", new A.Int32()), field("c", new A.Utf8())])),
    field("d32", new A.DateDay()),
    field("ts_utc", TS_US_UTC),
    field("ts", TS_US),
    field("const_i32", new A.Int32(), false),
    field("runs_i64", new A.Int64(), false),
    field("allnull", new A.Int32()),
    field("long_s", new A.Utf8()),
    field("small_u8", new A.Uint8(), false),
  ];
}

// One batch of the "types" table: rows [start, start+n).
// structNulls=false for 2.0: newer Lance refuses null structs there because
// 2.0 cannot store struct validity (older Lance silently dropped it).
function typesBatch(seed, start, n, structNulls = true) {
  const g = gen(seed);
  const cats = ["red", "green", "blue", "yellow", "magenta"];
  const c = {};
  const col = (name, f) => {
    c[name] = [];
    for (let i = 0; i < n; i++) c[name].push(f(i, start + i));
  };
  const p = 0.1;
  col("id", (i, row) => BigInt(row));
  col("i8", () => g.nullable(p, () => g.int(-128, 127)));
  col("i16", () => g.nullable(p, () => g.int(-32768, 32767)));
  col("i32", (i) => g.nullable(p, () => (i === 0 ? -2147483648 : i === 1 ? 2147483647 : g.int(-1e6, 1e6))));
  col("i64", (i) => g.nullable(p, () => (i === 0 ? I64_MIN : i === 1 ? I64_MAX : g.big(-(10n ** 12n), 10n ** 12n))));
  col("u8", () => g.nullable(p, () => g.int(0, 255)));
  col("u16", () => g.nullable(p, () => g.int(0, 65535)));
  col("u32", (i) => g.nullable(p, () => (i === 1 ? 4294967295 : g.int(0, 4294967295))));
  col("u64", (i) => g.nullable(p, () => (i === 1 ? U64_MAX : g.big(0n, 10n ** 15n))));
  col("f32", (i) => (i > 1 && g.r() < p ? null : withEdges(F32_EDGES, i, () => g.f32())));
  col("f64", (i) => (i > 1 && g.r() < p ? null : withEdges(F64_EDGES, i, () => (g.r() - 0.5) * 1e9)));
  col("b", () => g.nullable(p, () => g.r() < 0.5));
  col("s", () => g.nullable(p, () => g.str(0, 40)));
  col("cat", () => g.nullable(p, () => cats[g.int(0, cats.length - 1)]));
  col("ls", () => g.nullable(p, () => g.words(0, 60)));
  col("bin", () => g.nullable(p, () => g.bytes(0, 12)));
  col("lbin", () => g.nullable(p, () => g.bytes(0, 30)));
  col("v8", () => g.nullable(p, () => Array.from({ length: 8 }, () => (g.r() < 0.05 ? null : g.f32()))));
  col("li", () =>
    g.nullable(p, () => Array.from({ length: g.int(0, 6) }, () => (g.r() < 0.1 ? null : g.int(-1000, 1000)))),
  );
  col("st", () =>
    g.nullable(structNulls ? p : 0, () => ({
      a: g.nullable(p, () => g.int(-50, 50)),
      c: g.nullable(p, () => g.str(1, 10)),
    })),
  );
  col("d32", () => g.nullable(p, () => g.int(-30000, 30000)));
  col("ts_utc", () => g.nullable(p, () => g.big(-(10n ** 15n), 10n ** 16n)));
  col("ts", () => g.nullable(p, () => g.big(0n, 2n * 10n ** 15n)));
  col("const_i32", () => 42);
  col("runs_i64", (i, row) => BigInt(Math.floor(row / 700)) * 1000000007n);
  col("allnull", () => null);
  col("long_s", () => g.nullable(p, () => g.words(300, 500)));
  col("small_u8", (i, row) => row % 7);
  // Arrow's DateDay builder takes a Date or epoch milliseconds; give it days
  // via milliseconds so the stored value is exactly the day number.
  c.d32 = c.d32.map((d) => (d === null ? null : d * 86400000));
  return c;
}

// ---------------------------------------------------------------- read-back encoding

const { encodeTable } = makeEncoder(A);

// ---------------------------------------------------------------- writing

const db = await lancedb.connect(outDir);
const index = { sdk: sdkVersion, datasets: [], skipped: [] };

async function writeExpected(name, suffix, tbl, meta) {
  const t = await tbl.query().toArrow();
  const doc = { table: name, sdk: sdkVersion, ...meta, ...encodeTable(t) };
  fs.writeFileSync(path.join(outDir, `${name}${suffix}`), JSON.stringify(doc) + "\n");
  return doc.num_rows;
}

// Creates <name> from the first batch and appends the rest, one fragment per
// batch (each add is its own fragment); then runs the optional deletes.
//
// data_files in the expected JSON lists, per fragment in fragment order, the
// data files that write created (by diffing data/), so a file-level reader can
// be checked without a manifest reader.
async function dataset(name, storageVersion, batches, opts = {}) {
  const storageOptions = { new_table_data_storage_version: storageVersion };
  const dataDir = path.join(outDir, `${name}.lance`, "data");
  const seen = new Set();
  const newFiles = () => {
    const files = fs.readdirSync(dataDir).filter((f) => !seen.has(f)).sort();
    files.forEach((f) => seen.add(f));
    return files;
  };
  fs.rmSync(path.join(outDir, `${name}.lance`), { recursive: true, force: true });
  await db.inner.createTable(name, ipc(batches[0]), "overwrite", [], storageOptions);
  const dataFiles = [newFiles()];
  const tbl = await db.openTable(name);
  for (const b of batches.slice(1)) {
    await tbl.inner.add(ipc(b), "append");
    dataFiles.push(newFiles());
  }
  const meta = {
    storage_version: storageVersion,
    num_fragments: batches.length,
    fragment_rows: batches.map((b) => b.numRows),
    data_files: dataFiles,
  };
  const entry = { name, storage_version: storageVersion, fragments: batches.length, ...opts.describe };
  if (opts.deletes) {
    await writeExpected(name, ".before-deletes.expected.json", tbl, meta);
    for (const predicate of opts.deletes) await tbl.delete(predicate);
    entry.deletes = opts.deletes;
  }
  entry.rows = await writeExpected(name, ".expected.json", tbl, meta);
  index.datasets.push(entry);
  console.log(`wrote ${name}: ${entry.rows} rows, ${batches.length} fragment(s)`);
}

// Optional types: the SDK (or arrow-js) may refuse them; record why and go on.
async function optionalDataset(name, storageVersion, build, opts) {
  try {
    await dataset(name, storageVersion, build(), opts);
  } catch (e) {
    const reason = String(e && e.message ? e.message : e).split("\n")[0];
    index.skipped.push({ name, storage_version: storageVersion, reason });
    console.log(`skipped ${name}: ${reason}`);
    fs.rmSync(path.join(outDir, `${name}.lance`), { recursive: true, force: true });
  }
}

function single(name, type, values) {
  return tableOf([field("id", new A.Int32(), false), field(name, type)], {
    id: values.map((_, i) => i),
    [name]: values,
  });
}

// Storage versions this SDK can write: 2.0 and 2.1 always; 2.2 (the default
// for new tables from Lance 12 / SDK 0.39) only where the SDK accepts it.
async function canWrite(storageVersion) {
  const name = `probe_${storageVersion.replace(".", "_")}`;
  try {
    await db.inner.createTable(name, ipc(single("x", new A.Int32(), [1])), "overwrite", [], {
      new_table_data_storage_version: storageVersion,
    });
    return true;
  } catch (e) {
    const reason = String(e && e.message ? e.message : e).split("\n")[0];
    index.skipped.push({ name: "*", storage_version: storageVersion, reason });
    console.log(`skipped storage version ${storageVersion}: ${reason}`);
    return false;
  } finally {
    fs.rmSync(path.join(outDir, `${name}.lance`), { recursive: true, force: true });
  }
}

const storageVersions = ["2.0", "2.1"];
if (await canWrite("2.2")) storageVersions.push("2.2");

for (const sv of storageVersions) {
  const tag = sv.replace(".", "_");

  // Every common type, nulls everywhere, three fragments of different sizes
  // (more than one mini-block chunk, more than 1024 values per page).
  const tf = typesFields();
  await dataset(`types_v${tag}`, sv, [
    tableOf(tf, typesBatch(1, 0, 3000, sv !== "2.0")),
    tableOf(tf, typesBatch(2, 3000, 1500, sv !== "2.0")),
    tableOf(tf, typesBatch(3, 4500, 37, sv !== "2.0")),
  ]);

  // A tiny table: Lance picks the plain (Flat/Variable) encodings here.
  await dataset(`tiny_v${tag}`, sv, [tableOf(tf, typesBatch(4, 0, 20, sv !== "2.0"))]);

  // Wide vectors (full-zip in 2.1), nullable rows.
  {
    const fields = [
      field("id", new A.Int32(), false),
      field("vec", new A.FixedSizeList(1536, field("item", new A.Float32()))),
      field("vec_nn", new A.FixedSizeList(1536, field("item", new A.Float32(), false)), false),
    ];
    const batch = (seed, start, n) => {
      const g = gen(seed);
      const c = { id: [], vec: [], vec_nn: [] };
      for (let i = 0; i < n; i++) {
        c.id.push(start + i);
        c.vec.push(i % 13 === 5 ? null : Array.from({ length: 1536 }, () => g.f32()));
        c.vec_nn.push(Array.from({ length: 1536 }, () => g.f32()));
      }
      return tableOf(fields, c);
    };
    await dataset(`vectors_v${tag}`, sv, [batch(10, 0, 150), batch(11, 150, 90)]);
  }

  // Values over 32 KiB (per-value zstd in 2.1), with nulls and small values mixed in.
  {
    const fields = [
      field("id", new A.Int32(), false),
      field("big_s", new A.Utf8()),
      field("big_b", new A.LargeBinary()),
    ];
    const batch = (seed, start, n) => {
      const g = gen(seed);
      const c = { id: [], big_s: [], big_b: [] };
      for (let i = 0; i < n; i++) {
        c.id.push(start + i);
        c.big_s.push(i % 5 === 2 ? null : i % 5 === 3 ? "short" : g.words(33 * 1024, 70 * 1024));
        c.big_b.push(i % 4 === 1 ? null : i % 4 === 2 ? g.bytes(0, 10) : g.bytes(33 * 1024, 50 * 1024));
      }
      return tableOf(fields, c);
    };
    await dataset(`big_values_v${tag}`, sv, [batch(20, 0, 12), batch(21, 12, 7)]);
  }

  // Deletes: a sparse one (deletion vector) and one that removes most of a fragment.
  {
    const fields = [field("id", new A.Int64(), false), field("s", new A.Utf8()), field("x", new A.Float64())];
    const batch = (seed, start, n) => {
      const g = gen(seed);
      const c = { id: [], s: [], x: [] };
      for (let i = 0; i < n; i++) {
        c.id.push(BigInt(start + i));
        c.s.push(g.nullable(0.1, () => g.str(0, 20)));
        c.x.push(g.nullable(0.1, () => g.r()));
      }
      return tableOf(fields, c);
    };
    await dataset(`deletes_v${tag}`, sv, [batch(30, 0, 2000), batch(31, 2000, 1000), batch(32, 3000, 500)], {
      deletes: ["id % 7 = 3", "id >= 2100 AND id < 2900"],
    });
  }

  // Optional types, one table each so one refusal does not hide the others.
  await optionalDataset(`float16_v${tag}`, sv, () => {
    const g = gen(40);
    const vals = [0, -0, 1, -1, 65504, Infinity, NaN];
    for (let i = 0; i < 300; i++) vals.push(g.r() < 0.1 ? null : (g.r() - 0.5) * 100);
    return [single("f16", new A.Float16(), vals)];
  });
  await optionalDataset(`decimal128_v${tag}`, sv, () => {
    const g = gen(41);
    const vals = [];
    for (let i = 0; i < 300; i++) {
      if (g.r() < 0.1) {
        vals.push(null);
        continue;
      }
      const x = g.big(-(10n ** 20n), 10n ** 20n);
      const u = BigInt.asUintN(128, x);
      vals.push(new Uint32Array([0, 1, 2, 3].map((k) => Number((u >> (32n * BigInt(k))) & 0xffffffffn))));
    }
    return [single("dec", new A.Decimal(4, 30, 128), vals)];
  });
  await optionalDataset(`dictionary_v${tag}`, sv, () => {
    const g = gen(42);
    const cats = ["alpha", "beta", "gamma", "delta"];
    const vals = [];
    for (let i = 0; i < 500; i++) vals.push(g.r() < 0.1 ? null : cats[g.int(0, 3)]);
    return [single("dict", new A.Dictionary(new A.Utf8(), new A.Int32()), vals)];
  });
  await optionalDataset(`nested_v${tag}`, sv, () => {
    const g = gen(43);
    const fields = [
      field("id", new A.Int32(), false),
      field("lst", new A.List(field("item", new A.Struct([field("x", new A.Int32()), field("y", new A.Utf8())])))),
      field("stl", new A.Struct([field("l", new A.List(field("item", new A.Float64())))])),
      field("ll", new A.List(field("item", new A.List(field("item", new A.Int32()))))),
    ];
    const c = { id: [], lst: [], stl: [], ll: [] };
    for (let i = 0; i < 400; i++) {
      c.id.push(i);
      c.lst.push(
        g.nullable(0.1, () =>
          Array.from({ length: g.int(0, 4) }, () =>
            g.nullable(0.1, () => ({ x: g.nullable(0.1, () => g.int(0, 99)), y: g.nullable(0.1, () => g.str(0, 8)) })),
          ),
        ),
      );
      c.stl.push(g.nullable(0.1, () => ({ l: g.nullable(0.1, () => Array.from({ length: g.int(0, 3) }, () => g.r())) })));
      c.ll.push(
        g.nullable(0.1, () =>
          Array.from({ length: g.int(0, 3) }, () =>
            g.nullable(0.1, () => Array.from({ length: g.int(0, 3) }, () => g.nullable(0.1, () => g.int(-9, 9)))),
          ),
        ),
      );
    }
    return [tableOf(fields, c)];
  });
}

index.skipped.push({
  name: "large_list",
  reason: "apache-arrow (JS) has no LargeList type, so the SDK cannot be fed one from Node",
});
fs.writeFileSync(path.join(outDir, "fixtures.json"), JSON.stringify(index, null, 2) + "\n");
console.log(`done: ${index.datasets.length} datasets, ${index.skipped.length} skipped`);
