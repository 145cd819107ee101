// The official LanceDB SDK's side of the index maintenance tests
// (maintenance/optimize_sdk_test.go): a table with a BTREE and an IVF_PQ
// index the SDK builds.
//
// usage: node sdk_idx.mjs <sdk-dir> <db-dir> <table> <command> [json]
//   create        the table (id int64, val int32, vec fixed_size_list<float32>[16]) with 10 rows
//   ops <ops>     [{op: "gen", from, n} | {op: "delete", where} |
//                 {op: "index", column: "id"} (BTREE) | {op: "index", column: "vec", partitions, subvectors} (IVF_PQ)]
//   optimize      table.optimize(); prints {ms, stats}
//   probe {where, vector}  prints {indices, stats, filter: {ids, plan}, ann: {ids, plan}, count, digest}
// env: LANCECAT_SDK_REST=<catalog url>: namespace mode, connectNamespace("rest") against lancecat,
//      the table in namespace ["ns"] (db-dir unused); LANCECAT_SDK_STORAGE: JSON storage options
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, dbDir, name, command, arg] = process.argv.slice(2);
const { lancedb, arrow: A, version: sdkVersion } = loadSDK(sdkDir);
const DIM = 16;

// vecOf is a deterministic pseudo-random vector of row id.
function vecOf(id) {
  const out = new Array(DIM);
  let x = (id * 2654435761) >>> 0;
  for (let j = 0; j < DIM; j++) {
    x = (x * 1664525 + 1013904223) >>> 0;
    out[j] = (x / 4294967296) * 2 - 1 + (id % 7) * 0.5;
  }
  return out;
}

function gen(from, n) {
  const rows = [];
  for (let i = 0; i < n; i++) rows.push({ id: BigInt(from + i), val: (from + i) * 7, vec: vecOf(from + i) });
  const schema = new A.Schema([
    new A.Field("id", new A.Int64(), false),
    new A.Field("val", new A.Int32(), true),
    new A.Field("vec", new A.FixedSizeList(DIM, new A.Field("item", new A.Float32(), true)), false),
  ]);
  return new A.Table(
        schema,
        A.makeData({
          type: new A.Struct(schema.fields),
          length: n,
          nullCount: 0,
          children: [
            A.makeData({ type: new A.Int64(), length: n, data: BigInt64Array.from(rows.map((r) => r.id)) }),
            A.makeData({ type: new A.Int32(), length: n, data: Int32Array.from(rows.map((r) => r.val)) }),
            A.makeData({
              type: new A.FixedSizeList(DIM, new A.Field("item", new A.Float32(), true)),
              length: n,
              nullCount: 0,
              child: A.makeData({ type: new A.Float32(), length: n * DIM, data: Float32Array.from(rows.flatMap((r) => r.vec)) }),
            }),
          ],
        }),
      );
}

const rest = process.env.LANCECAT_SDK_REST;
const storageOptions = JSON.parse(process.env.LANCECAT_SDK_STORAGE || "{}");
const db = rest ? await lancedb.connectNamespace("rest", { uri: rest }) : await lancedb.connect(dbDir, { storageOptions });
const ns = rest ? ["ns"] : undefined;
const open = () => (rest ? db.openTable(name, ns) : db.openTable(name));
if (command === "create") {
  if (rest) {
    await db.createNamespace(ns, { mode: "exist_ok" });
    await db.createTable(name, gen(0, 10), ns);
  } else {
    await db.createTable(name, gen(0, 10));
  }
} else if (command === "ops") {
  const t = await open();
  for (const o of JSON.parse(arg)) {
    switch (o.op) {
      case "gen":
        await t.add(gen(o.from, o.n));
        break;
      case "delete":
        await t.delete(o.where);
        break;
      case "index":
        if (o.column === "vec") {
          await t.createIndex("vec", { config: lancedb.Index.ivfPq({ numPartitions: o.partitions, numSubVectors: o.subvectors }) });
        } else {
          await t.createIndex(o.column, { config: lancedb.Index.btree() });
        }
        break;
      default:
        throw new Error(`unknown op ${o.op}`);
    }
  }
} else if (command === "optimize") {
  const t = await open();
  const start = process.hrtime.bigint();
  const stats = await t.optimize();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(JSON.stringify({ sdk: sdkVersion, ms, stats }, (k, v) => (typeof v === "bigint" ? Number(v) : v)));
} else if (command === "probe") {
  const t = await open();
  const o = JSON.parse(arg);
  const indices = (await t.listIndices()).map((i) => ({ name: i.name, type: i.indexType, columns: i.columns }));
  const stats = {};
  for (const i of indices) {
    const s = await t.indexStats(i.name);
    stats[i.name] = s ? { indexed: s.numIndexedRows, unindexed: s.numUnindexedRows, indices: s.numIndices } : null;
  }
  const fq = t.query().where(o.where).select(["id"]);
  const filterIds = (await fq.toArray()).map((r) => r.id.toString()).sort();
  const filterPlan = await fq.explainPlan();
  const q = t.vectorSearch(vecOf(o.vector)).column("vec").limit(5).nprobes(64).refineFactor(50).select(["id"]);
  const annIds = (await q.toArray()).map((r) => r.id.toString());
  const annPlan = await q.explainPlan();
  const at = await t.query().select(["id", "val", "vec"]).toArrow();
  let sumId = 0n, sumVal = 0n, mix = 0n, vsum = 0;
  const idc = at.getChild("id"), valc = at.getChild("val"), vc = at.getChild("vec");
  for (let i = 0; i < at.numRows; i++) {
    const id = idc.get(i), val = valc.get(i);
    sumId += id;
    sumVal += BigInt(val ?? 0);
    mix ^= (id * 1000003n) ^ BigInt(val ?? 0);
    const v = vc.get(i);
    for (let j = 0; j < DIM; j++) vsum += v.get(j) * (j + 1);
  }
  console.log(
    JSON.stringify({
      sdk: sdkVersion,
      indices,
      stats,
      filter: { ids: filterIds, plan: filterPlan },
      ann: { ids: annIds, plan: annPlan },
      count: await t.countRows(),
      digest: `${at.numRows}/${sumId}/${sumVal}/${mix}/${vsum.toFixed(3)}`,
    }),
  );
} else {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
