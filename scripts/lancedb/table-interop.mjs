// The official SDK's half of the Go lance package's table interop tests, on
// local disk or an object store (lance/interop_test.go, interop_s3_test.go,
// concurrency_sdk_test.go):
//
//   node table-interop.mjs verify  <sdk-dir> <plan.json>
//       After Go has committed on SDK-written tables: opens every version
//       the plan lists and checks its row count and columns, reads values,
//       checks tags, appends on top; writes <plan>.result.json.
//       plan: {"storage_options": {...},            (optional)
//              "tables": [{"dir": "/abs/t.lance" | "s3://bucket/prefix/t.lance",
//                          "versions": [{"version", "rows", "fields"}],
//                          "tags": {"name": version}, "append": true}]}
//   node table-interop.mjs append  <sdk-dir> <job.json>
//       Appends job.count times (job.rows rows each, copied from the table's
//       first rows) to job.dir, printing "ready" once the table is open and
//       then one JSON line per append: {"append": i, "version": v} or
//       {"append": i, "error": "..."}. Used to race Go's commits.
//       job: {"dir", "storage_options", "count", "rows"}
//   node table-interop.mjs history <sdk-dir> <job.json>
//       Prints {"listed": [...], "versions": [{"version", "rows", "fields",
//       "metadata"} | {"version", "error"}]}: what the SDK sees of every
//       version. job: {"dir", "storage_options"}
//
// <sdk-dir> is what scripts/lancedb/install.sh prints. A table "dir" is
// opened as table <name> of lancedb.connect(<parent>, {storageOptions}).
import fs from "node:fs";
import path from "node:path";
import { connectParent, loadSDK } from "../lib/sdk.mjs";

const [mode, sdkDir, arg] = process.argv.slice(2);
if (!["verify", "append", "history"].includes(mode) || !sdkDir || !arg) {
  console.error("usage: node table-interop.mjs verify|append|history <sdk-dir> <json>");
  process.exit(2);
}
const { lancedb, version: sdkVersion } = loadSDK(sdkDir);

// openTable opens a dataset given as a local path or a URI.
async function openTable(dir, storageOptions) {
  const { db, name } = await connectParent(lancedb, dir, storageOptions);
  return db.openTable(name);
}

async function verify(planPath) {
  const plan = JSON.parse(fs.readFileSync(planPath, "utf8"));
  const results = [];
  for (const spec of plan.tables) {
    const t = await openTable(spec.dir, plan.storage_options);
    const res = { dir: spec.dir, versions: [], errors: [] };
    res.listed = (await t.listVersions()).map((v) => v.version);
    for (const v of spec.versions) {
      try {
        await t.checkout(v.version);
        const rows = await t.countRows();
        const fields = (await t.schema()).fields.map((f) => f.name);
        const data = await t.query().limit(5).toArrow(); // reads values
        const ids = Array.from(data.getChild("id")?.toArray() ?? [], Number);
        res.versions.push({ version: v.version, rows, fields, read: data.numRows, ids });
        if (rows !== v.rows) res.errors.push(`version ${v.version}: ${rows} rows, Go says ${v.rows}`);
        if (JSON.stringify(fields) !== JSON.stringify(v.fields)) res.errors.push(`version ${v.version}: fields ${fields}, Go says ${v.fields}`);
        if (data.numRows !== Math.min(5, rows)) res.errors.push(`version ${v.version}: read ${data.numRows} rows`);
      } catch (e) {
        res.errors.push(`version ${v.version}: ${e.message}`);
      }
    }
    await t.checkoutLatest();
    res.tags = Object.fromEntries(Object.entries(await (await t.tags()).list()).map(([k, c]) => [k, c.version]));
    for (const [k, v] of Object.entries(spec.tags ?? {})) {
      if (res.tags[k] !== v) res.errors.push(`tag ${k}: ${res.tags[k]}, Go says ${v}`);
    }
    res.schema_metadata = Object.fromEntries((await t.schema()).metadata);
    if (spec.append) {
      try {
        const sample = await t.query().limit(3).toArrow();
        await t.add(sample);
        res.appended = { version: await t.version(), rows: await t.countRows() };
      } catch (e) {
        res.errors.push(`append: ${e.message}`);
      }
    }
    results.push(res);
  }
  fs.writeFileSync(planPath.replace(/\.json$/, "") + ".result.json", JSON.stringify({ sdk: sdkVersion, results }, null, 1));
  const errors = results.flatMap((r) => r.errors);
  console.log(`lancedb ${sdkVersion}: verified ${results.length} tables, ${errors.length} errors`);
  for (const e of errors) console.log("  " + e);
}

async function append(job) {
  const t = await openTable(job.dir, job.storage_options);
  const sample = await t.query().limit(job.rows ?? 2).toArrow();
  console.log("ready");
  for (let i = 0; i < job.count; i++) {
    try {
      const res = await t.add(sample);
      // Both SDK versions return {version}; the handle's version is the
      // fallback for any that does not.
      const version = typeof res?.version === "number" ? res.version : await t.version();
      console.log(JSON.stringify({ append: i, version }));
    } catch (e) {
      console.log(JSON.stringify({ append: i, error: e.message }));
    }
  }
}

async function history(job) {
  const t = await openTable(job.dir, job.storage_options);
  const listed = (await t.listVersions()).map((v) => v.version);
  const versions = [];
  for (const v of listed) {
    try {
      await t.checkout(v);
      const s = await t.schema();
      versions.push({ version: v, rows: await t.countRows(), fields: s.fields.map((f) => f.name),
        metadata: Object.fromEntries(s.metadata) });
    } catch (e) {
      versions.push({ version: v, error: e.message });
    }
  }
  console.log(JSON.stringify({ sdk: sdkVersion, listed, versions }));
}

if (mode === "verify") await verify(path.resolve(arg));
else {
  const job = JSON.parse(fs.readFileSync(arg, "utf8"));
  if (mode === "append") await append(job);
  else await history(job);
}
