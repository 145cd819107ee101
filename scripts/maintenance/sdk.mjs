// The official LanceDB SDK's side of the compaction tests (maintenance/compact_sdk_test.go).
//
// usage: node sdk.mjs <sdk-dir> <db-dir> <table> <command> [json]
//   create {stable?, storage?}   create the table (id int64, grp utf8, val int32) with 10 rows
//                                (ids 0..9); stable: new_table_enable_stable_row_ids;
//                                storage: new_table_data_storage_version
//   ops <ops>     apply writes: [{op: "gen", from, n} (append rows id from..from+n-1) |
//                 {op: "delete", where} | {op: "index", column, type: "btree"|"bitmap"}]
//   optimize      table.optimize() (compaction, index optimization, prune of nothing recent);
//                 prints the SDK's stats and the time it took
//   tag {name, version}  create a tag on a version
//   versions      print the table's version numbers (JSON array)
//   readat {version?, tag?}  print {count, digest} of the table checked out there
//   read          print {sdk, count, digest, rows}: rows with id < 100000 sorted by id (int64
//                 as strings), and a digest of every live row
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, dbDir, name, command, arg] = process.argv.slice(2);
const { lancedb, arrow: A, version: sdkVersion } = loadSDK(sdkDir);

function gen(from, n) {
  const ids = new BigInt64Array(n);
  const vals = new Int32Array(n);
  const grps = new Array(n);
  for (let i = 0; i < n; i++) {
    ids[i] = BigInt(from + i);
    vals[i] = (from + i) * 7;
    grps[i] = "g" + ((from + i) % 13);
  }
  return new A.Table({
    id: A.makeVector(ids),
    grp: A.vectorFromArray(grps, new A.Utf8()),
    val: A.makeVector(vals),
  });
}

function plain(v) {
  if (typeof v === "bigint") return v.toString();
  if (v === undefined) return null;
  return v;
}

const db = await lancedb.connect(dbDir);
if (command === "create") {
  const o = arg ? JSON.parse(arg) : {};
  const storageOptions = {};
  if (o.stable) storageOptions.new_table_enable_stable_row_ids = "true";
  if (o.storage) storageOptions.new_table_data_storage_version = o.storage;
  await db.createTable(name, gen(0, 10), { storageOptions });
} else if (command === "ops") {
  const t = await db.openTable(name);
  for (const o of JSON.parse(arg)) {
    switch (o.op) {
      case "gen":
        await t.add(gen(o.from, o.n));
        break;
      case "delete":
        await t.delete(o.where);
        break;
      case "index":
        await t.createIndex(o.column, { config: o.type === "bitmap" ? lancedb.Index.bitmap() : lancedb.Index.btree() });
        break;
      default:
        throw new Error(`unknown op ${o.op}`);
    }
  }
} else if (command === "optimize") {
  const t = await db.openTable(name);
  const start = process.hrtime.bigint();
  const stats = await t.optimize();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(JSON.stringify({ sdk: sdkVersion, ms, stats }));
} else if (command === "tag") {
  const t = await db.openTable(name);
  const o = JSON.parse(arg);
  const tags = await t.tags();
  await tags.create(o.name, o.version);
} else if (command === "versions") {
  const t = await db.openTable(name);
  console.log(JSON.stringify((await t.listVersions()).map((v) => v.version)));
} else if (command === "readat") {
  const t = await db.openTable(name);
  const o = JSON.parse(arg);
  await t.checkout(o.tag ?? o.version);
  const at = await t.query().toArrow();
  let sumId = 0n;
  const idc = at.getChild("id");
  for (let i = 0; i < at.numRows; i++) sumId += idc.get(i);
  console.log(JSON.stringify({ sdk: sdkVersion, count: at.numRows, digest: `${at.numRows}/${sumId}` }));
} else if (command === "read") {
  // Rows with id < 100000 in full; every row folded into a digest (count,
  // sums of id and val, xor of id*val) so a large table is compared whole
  // without printing a million rows.
  const t = await db.openTable(name);
  const at = await t.query().toArrow();
  const rows = [];
  let sumId = 0n, sumVal = 0n, mix = 0n;
  const idc = at.getChild("id"), valc = at.getChild("val"), grpc = at.getChild("grp");
  for (let i = 0; i < at.numRows; i++) {
    const id = idc.get(i), val = valc.get(i);
    sumId += id;
    sumVal += BigInt(val ?? 0);
    mix ^= (id * 1000003n) ^ BigInt(val ?? 0);
    if (id < 100000n) rows.push({ id: id.toString(), grp: grpc.get(i), val });
  }
  rows.sort((a, b) => {
    const d = BigInt(a.id) - BigInt(b.id);
    return d === 0n ? 0 : d < 0n ? -1 : 1;
  });
  const digest = `${at.numRows}/${sumId}/${sumVal}/${mix}`;
  console.log(JSON.stringify({ sdk: sdkVersion, count: await t.countRows(), digest, rows }));
} else {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
