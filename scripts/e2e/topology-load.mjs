// A client of the deployment topology test (e2e/topology_test.go): the official Node SDK in remote
// mode through the TLS proxy in front of three replicas, writing while the replicas are restarted
// and killed. It creates its table, then until the stop file appears: inserts a batch of 20 rows
// with ids of its own (recording which batches were acknowledged), counts the rows, and reads a
// filtered slice back; the SDK's own retries (its defaults: 502/503 and connection errors) are the
// only ones. Prints one JSON line: the acknowledged and failed batches, operation counts, latencies.
//
// usage: LANCEDB_DIR=<sdk> node topology-load.mjs <https url> <ca.pem> <api key> <table> <stop file>
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");

const [url, ca, apiKey, name, stopFile] = process.argv.slice(2);
const BATCH = 20;
const db = await lancedb.connect("db://lancecat", {
  apiKey,
  hostOverride: url,
  clientConfig: { tlsConfig: { sslCaCert: ca }, retryConfig: { retries: 5, connectRetries: 5, readRetries: 5, backoffFactor: 0.2 } },
});
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("client", new arrow.Utf8(), false),
]);
const rows = (k) => Array.from({ length: BATCH }, (_, i) => ({ id: BigInt(k * BATCH + i), client: "node" }));
const tbl = await db.createEmptyTable(name, schema);

const out = { acked: [], failed: [], errors: [], ops: 0, failedOps: 0, latenciesMs: [] };
const timed = async (fn) => {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    out.latenciesMs.push(performance.now() - t0);
    out.ops++;
  }
};
for (let k = 0; !existsSync(stopFile) || k < 3; k++) {
  try {
    await timed(() => tbl.add(rows(k)));
    out.acked.push(k);
  } catch (e) {
    out.failed.push(k);
    out.failedOps++;
    out.errors.push(`insert ${k}: ${String(e.message || e).slice(0, 300)}`);
  }
  try {
    await timed(() => tbl.countRows());
    const got = await timed(() => tbl.query().where(`id >= ${k * BATCH}`).limit(5).toArray());
    if (out.acked.includes(k) && got.length === 0) out.errors.push(`read ${k}: an acknowledged batch is not read back`);
  } catch (e) {
    out.failedOps++;
    out.errors.push(`read ${k}: ${String(e.message || e).slice(0, 300)}`);
  }
}
console.log(JSON.stringify(out));
process.exit(0);
