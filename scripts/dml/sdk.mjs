// The official LanceDB SDK's side of the dml interop tests (dml/sdk_test.go).
//
// usage: node sdk.mjs <sdk-dir> <db-dir> <table> <command> [json]
//   create <rows>   create the table (id int64, grp utf8, val int32) from rows
//                   [{id, grp, val}] with an explicit Arrow schema
//   read            print {sdk, data_storage_version?, count, rows, versions}:
//                   every live row (all columns, sorted by id then grp; int64 as
//                   decimal strings), and per version of the history its number,
//                   total_rows and the rows a checkout of it counts
//   ops <ops>       apply writes with the SDK: [{op: "add", rows} | {op: "delete", where} |
//                   {op: "update", where, values} | {op: "merge", on, rows,
//                   matched?, matched_where?, insert?, by_source_delete?} |
//                   {op: "add_columns", columns: [{name, sql}]} |
//                   {op: "alter_type", path, type: "int64"|"float64"}]
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, dbDir, name, command, arg] = process.argv.slice(2);
const { lancedb, arrow: A, version: sdkVersion } = loadSDK(sdkDir);

function table(rows) {
  return new A.Table({
    id: A.vectorFromArray(rows.map((r) => BigInt(r.id)), new A.Int64()),
    grp: A.vectorFromArray(rows.map((r) => r.grp), new A.Utf8()),
    val: A.vectorFromArray(rows.map((r) => r.val), new A.Int32()),
  });
}

function plain(v) {
  if (typeof v === "bigint") return v.toString();
  if (v === undefined) return null;
  return v;
}

function rowsOf(t) {
  const out = [];
  for (const r of t.toArray()) {
    const o = {};
    for (const f of t.schema.fields) o[f.name] = plain(r[f.name]);
    out.push(o);
  }
  out.sort((a, b) => {
    const d = BigInt(a.id) - BigInt(b.id);
    if (d !== 0n) return d < 0n ? -1 : 1;
    return a.grp < b.grp ? -1 : a.grp > b.grp ? 1 : 0;
  });
  return out;
}

const db = await lancedb.connect(dbDir);
if (command === "create") {
  await db.createTable(name, table(JSON.parse(arg)));
} else if (command === "read") {
  const t = await db.openTable(name);
  const rows = rowsOf(await t.query().toArrow());
  const schema = (await t.schema()).fields.map((f) => `${f.name}:${f.type}`);
  const versions = [];
  for (const v of await t.listVersions()) {
    const c = await db.openTable(name);
    await c.checkout(v.version);
    versions.push({ version: v.version, total_rows: Number(v.metadata?.total_rows ?? -1), count: await c.countRows() });
  }
  console.log(JSON.stringify({ sdk: sdkVersion, count: await t.countRows(), schema, rows, versions }));
} else if (command === "ops") {
  const t = await db.openTable(name);
  for (const o of JSON.parse(arg)) {
    switch (o.op) {
      case "add":
        await t.add(table(o.rows));
        break;
      case "delete":
        await t.delete(o.where);
        break;
      case "update":
        await t.update({ where: o.where, valuesSql: o.values });
        break;
      case "merge": {
        let b = t.mergeInsert(o.on);
        if (o.matched) b = b.whenMatchedUpdateAll(o.matched_where ? { where: o.matched_where } : undefined);
        if (o.insert) b = b.whenNotMatchedInsertAll();
        if (o.by_source_delete) b = b.whenNotMatchedBySourceDelete(o.by_source_where ? { where: o.by_source_where } : undefined);
        await b.execute(table(o.rows));
        break;
      }
      case "add_columns":
        await t.addColumns(o.columns.map((c) => ({ name: c.name, valueSql: c.sql })));
        break;
      case "alter_type":
        await t.alterColumns([{ path: o.path, dataType: o.type === "int64" ? new A.Int64() : new A.Float64() }]);
        break;
      default:
        throw new Error(`unknown op ${o.op}`);
    }
  }
} else {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
