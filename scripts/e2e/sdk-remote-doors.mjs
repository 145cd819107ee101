// The doors the LanceDB remote client calls beyond the Lance Namespace spec (issue 34), driven
// through the official Node SDK in remote mode against lancecat, value-checked: the LSM doors
// answer as a table without an LSM write spec (permutationBuilder works), ... Methods an SDK
// version does not have are skipped (0.31.0 has none of the LSM methods).
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-remote-doors.mjs <catalog url> <part>...
// env:   LANCECAT_E2E_API_KEY   the API key remote mode sends (an estate admin's with authorization on)
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");
const sdkVersion = JSON.parse(readFileSync(process.env.LANCEDB_DIR + "/node_modules/@lancedb/lancedb/package.json", "utf8")).version;

const [uri, ...parts] = process.argv.slice(2);
const apiKey = process.env.LANCECAT_E2E_API_KEY || "remote-e2e";
let checks = 0;
function ok(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
  checks++;
}
async function fails(fn, want, what) {
  try {
    await fn();
  } catch (e) {
    const msg = String(e && e.message ? e.message : e);
    if (want && !msg.includes(want)) throw new Error(`${what}: want an error with "${want}", got: ${msg}`);
    checks++;
    return msg;
  }
  throw new Error(`${what}: succeeded, want an error${want ? ` with "${want}"` : ""}`);
}
const step = (name) => console.log(`-- ${name} (${checks} checks so far)`);
const db = await lancedb.connect("db://lancecat", { apiKey, hostOverride: uri, clientConfig: { retryConfig: { retries: 1 } } });

const DIM = 8;
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("name", new arrow.Utf8(), true),
  new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), true),
]);
function rows(n, from = 0) {
  const out = [];
  for (let i = from; i < from + n; i++) {
    out.push({ id: i, name: `row ${i} ${i % 3 === 0 ? "glacier" : "river"}`, vector: Array.from({ length: DIM }, (_, d) => Math.sin(i * (d + 1))) });
  }
  return lancedb.makeArrowTable(out, { schema });
}
const has = (obj, m) => typeof obj[m] === "function";

async function lsm() {
  step("lsm");
  const t = await db.createTable("lsm_t", rows(64), { mode: "overwrite" });
  if (!has(t, "getLsmWriteSpec")) {
    console.log(`SDK ${sdkVersion} has no LSM methods: skipped`);
    return;
  }
  const spec = await t.getLsmWriteSpec();
  ok(spec === null || spec === undefined, `getLsmWriteSpec() is null on a table without a spec (${spec})`);
  const stats = await t.getLsmStats();
  ok(stats === null || stats === undefined, `getLsmStats() is null on a table without an LSM write path (${JSON.stringify(stats)})`);
  await fails(() => t.setLsmWriteSpec({ specType: "bucket", column: "id", numBuckets: 4 }), "MemWAL", "setLsmWriteSpec is refused, saying why");
  await fails(() => t.unsetLsmWriteSpec(), "no LSM write spec is set", "unsetLsmWriteSpec without a spec");
  await fails(() => t.flushLsm(), "no LSM write spec is set", "flushLsm without a spec");
  await fails(() => t.compactLsm(), "no LSM write spec is set", "compactLsm without a spec");
  const missing = await db.openTable("lsm_t");
  await db.dropTable("lsm_t");
  await fails(() => missing.getLsmWriteSpec(), "not found", "getLsmWriteSpec of a dropped table");
  // permutationBuilder asks get_lsm_write_spec first (0.39): it works on a plain table.
  if (typeof lancedb.permutationBuilder === "function") {
    const src = await db.createTable("perm_src", rows(100), { mode: "overwrite" });
    const perm = await lancedb.permutationBuilder(src).splitSequential({ counts: [80, 20] }).execute();
    const n = await perm.countRows();
    ok(n === 100, `permutation table has a row per source row (${n})`);
  }
}

const all = { lsm };
for (const p of parts.length ? parts : Object.keys(all)) {
  await all[p]();
}
console.log(`OK ${checks} checks (SDK ${sdkVersion})`);
