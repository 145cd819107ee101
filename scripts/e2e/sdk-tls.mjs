// The official LanceDB Node SDK in remote mode against lancecat over HTTPS: the CA given in
// clientConfig.tlsConfig.sslCaCert (and, with a client certificate, certFile/keyFile for mTLS).
// A table is created, written, counted and read back; then a client without the CA (or without
// the client certificate) must fail. Exits non-zero on the first failure.
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-tls.mjs <https url> <ca file> [<client cert> <client key>]
import { createRequire } from "node:module";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");

const [url, caFile, certFile, keyFile] = process.argv.slice(2);
const retryConfig = { retries: 0, connectRetries: 0, readRetries: 0 };
const connect = (tlsConfig) =>
  lancedb.connect("db://lancecat", { apiKey: "tls-e2e", hostOverride: url, clientConfig: { tlsConfig, retryConfig } });

const tls = { sslCaCert: caFile };
if (certFile) Object.assign(tls, { certFile, keyFile });
const db = await connect(tls);
const tbl = await db.createTable("over_tls", [{ id: 1, name: "a" }, { id: 2, name: "b" }]);
await tbl.add([{ id: 3, name: "c" }]);
const n = await tbl.countRows();
if (n !== 3) throw new Error(`countRows over TLS: ${n}, want 3`);
const rows = await tbl.query().where("id = 3").toArray();
if (rows.length !== 1 || rows[0].name !== "c") throw new Error(`query over TLS: ${JSON.stringify(rows)}`);
const names = await db.tableNames();
if (!names.includes("over_tls")) throw new Error(`tableNames over TLS: ${names}`);

async function refused(tlsConfig, what) {
  try {
    const other = await connect(tlsConfig);
    await other.tableNames();
  } catch (e) {
    console.log(`${what}: refused (${String(e.message || e).split("\n")[0].slice(0, 160)})`);
    return;
  }
  throw new Error(`${what}: the connection was accepted`);
}
await refused({}, "no CA");
if (certFile) await refused({ sslCaCert: caFile }, "no client certificate");
console.log(`sdk-tls ok: ${n} rows over ${certFile ? "mTLS" : "TLS"}`);
