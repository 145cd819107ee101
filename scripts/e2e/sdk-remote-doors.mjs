// The doors the LanceDB remote client calls beyond the Lance Namespace spec (issue 34), driven
// through the official Node SDK in remote mode against lancecat, value-checked: the LSM doors
// answer as a table without an LSM write spec (permutationBuilder works); the job doors answer
// the task records of the background work (refreshColumnAsync's backfill, waited on, listed);
// prewarmIndex / prewarmData answer (a missing index or column is named). Methods an SDK
// version does not have are skipped (0.31.0 has none of the LSM methods).
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-remote-doors.mjs <catalog url> <part>...
// env:   LANCECAT_E2E_API_KEY   the API key remote mode sends (an estate admin's with authorization on)
import { counter } from "../lib/checks.mjs";
import { loadSDK } from "../lib/sdk.mjs";
const { lancedb, arrow, version: sdkVersion } = loadSDK(process.env.LANCEDB_DIR);

const [uri, ...parts] = process.argv.slice(2);
const apiKey = process.env.LANCECAT_E2E_API_KEY || "remote-e2e";
const { ok, fails, step, count } = counter();
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

async function jobs() {
  step("jobs");
  if (!has(db, "listJobs")) {
    console.log(`SDK ${sdkVersion} has no job methods: skipped`);
    return;
  }
  const t = await db.createTable("jobs_t", rows(300), { mode: "overwrite" });
  await t.addColumns({ computed: [{ name: "doubled", valueSql: "id * 2" }] });
  const job = await t.refreshColumnAsync("doubled");
  ok(typeof job.id === "string" && job.id.length > 0, `refreshColumnAsync answers a job id (${job.id})`);
  await job.wait();
  ok((await job.status()) === "finished", "the refresh job finished");
  ok(job.jobType === "backfill", `job type (${job.jobType})`);
  const res = job.result || {};
  const assigned = res.rows_assigned ?? res.rowsAssigned;
  ok(assigned === 300 && (res.rows_remaining ?? res.rowsRemaining) === 0, `the result counts the rows filled: ${JSON.stringify(res)}`);
  const filled = await t.query().where("doubled = id * 2").limit(1000).toArray();
  ok(filled.length === 300, `every row has its computed value after wait() (${filled.length})`);
  const listed = await db.listJobs();
  const mine = listed.find((j) => j.jobId === job.id);
  ok(mine && mine.table === "jobs_t" && mine.state === "finished" && mine.jobType === "backfill", `listJobs lists the job: ${JSON.stringify(mine)}`);
  ok(mine.createdAtMillis > Date.now() - 3600e3 && mine.createdAtMillis <= Date.now(), "created_at_millis is when it started");
  const opened = await db.openJob(job.id);
  ok((await opened.status()) === "finished", "openJob(id).status() is finished");
  ok(opened.spec && JSON.stringify(opened.spec.table) === JSON.stringify(["jobs_t"]), `the job's spec names its table (${JSON.stringify(opened.spec)})`);
  ok((await db.cancelJob(job.id)) === true, "cancelling a finished job is a no-op that succeeds");
  ok((await db.cancelJob("00000000000000000000-000000000000")) === false, "cancelJob of an unknown job is false");
  await fails(async () => (await db.openJob("nosuch")).wait(), "was not found", "waiting on an unknown job fails");
  await db.dropTable("jobs_t");
}

async function prewarm() {
  step("prewarm");
  const t = await db.createTable("warm_t", rows(300), { mode: "overwrite" });
  await t.createIndex("id", { config: lancedb.Index.btree() });
  await t.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }) });
  if (!has(t, "prewarmIndex")) {
    console.log(`SDK ${sdkVersion} has no prewarm methods: skipped`);
    await db.dropTable("warm_t");
    return;
  }
  await t.prewarmIndex("id_idx");
  await t.prewarmIndex("vector_idx");
  await fails(() => t.prewarmIndex("nosuch_idx"), "nosuch_idx", "prewarmIndex of a missing index names it");
  const hit = await t.query().where("id = 42").toArray();
  ok(hit.length === 1 && Number(hit[0].id) === 42, "a query through the warm BTREE answers");
  const near = await t.vectorSearch(Array.from({ length: DIM }, (_, d) => Math.sin(7 * (d + 1)))).limit(3).toArray();
  ok(near.length === 3, "a vector search through the warm IVF_PQ answers");
  await t.prewarmData();
  await t.prewarmData(["id", "name"]);
  await fails(() => t.prewarmData(["nope"]), "nope", "prewarmData of an unknown column names it");
  await db.dropTable("warm_t");
}

// Not backed yet: each answers 406 saying why (never a 404 the SDK reads as a missing table or
// branch).
async function unbacked() {
  step("unbacked");
  const t = await db.createTable("unb_t", rows(10), { mode: "overwrite" });
  const br = await t.branches();
  if (has(br, "diff")) {
    await br.create("dev");
    await fails(() => br.diff("dev"), "not supported by this server", "branches.diff is refused, saying why");
    await fails(() => br.cherryPick("dev", true), "not supported by this server", "branches.cherryPick is refused, saying why");
  }
  if (has(db, "cloneTable")) {
    await fails(() => db.cloneTable("unb_clone", "file:///nowhere", { isShallow: true }), "not supported by this server", "cloneTable is refused, saying why");
    ok(!(await db.tableNames()).includes("unb_clone"), "a refused clone creates nothing");
  }
  await db.dropTable("unb_t");
}

const all = { lsm, jobs, prewarm, unbacked };
for (const p of parts.length ? parts : Object.keys(all)) {
  await all[p]();
}
console.log(`OK ${count()} checks (SDK ${sdkVersion})`);
