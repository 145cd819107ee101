// Vended credentials through the official LanceDB Node SDK: against a lancecat serving an S3 root
// with --vend-credentials and authorization on, the SDK process has no S3 credentials of its
// own, so every byte it reads or writes goes through the storage_options describe/declare
// answered. A writer creates a table (the SDK writes it with the read-write credential declare
// vended); a reader opens and reads it with its read-only credential, and its write is refused
// by the store. Exits non-zero on the first failure.
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-vend.mjs <catalog url> <table name>
// env:   LANCECAT_E2E_WRITER_HEADERS, LANCECAT_E2E_READER_HEADERS  JSON headers (x-api-key) of a
//        caller who may write namespace ns and of one granted reader on it
import { createRequire } from "node:module";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");

const [uri, name] = process.argv.slice(2);
const writerHeaders = JSON.parse(process.env.LANCECAT_E2E_WRITER_HEADERS);
const readerHeaders = JSON.parse(process.env.LANCECAT_E2E_READER_HEADERS);
for (const k of Object.keys(process.env)) {
  if (k.startsWith("AWS_")) throw new Error(`the SDK process must have no S3 credentials of its own: ${k} is set`);
}

const rows = [{ id: 1, name: "a" }, { id: 2, name: "b" }, { id: 3, name: "c" }];
const writer = await lancedb.connectNamespace("rest", { uri, headers: writerHeaders });
const t = await writer.createTable(name, rows, ["ns"]);
if ((await t.countRows()) !== 3) throw new Error("writer: count after create");
await t.add([{ id: 4, name: "d" }]);
if ((await t.countRows()) !== 4) throw new Error("writer: count after add");
console.log("-- the writer created and appended through its vended credential");

const reader = await lancedb.connectNamespace("rest", { uri, headers: readerHeaders });
const rt = await reader.openTable(name, ["ns"]);
if ((await rt.countRows()) !== 4) throw new Error("reader: count");
const got = (await rt.query().where("id > 2").toArray()).map((r) => r.name).sort();
if (JSON.stringify(got) !== JSON.stringify(["c", "d"])) throw new Error(`reader: query answered ${JSON.stringify(got)}`);
console.log("-- the reader read through its vended credential");
let refused = "";
try {
  await rt.add([{ id: 5, name: "e" }]);
} catch (e) {
  refused = String(e && e.message ? e.message : e);
}
if (!refused) throw new Error("reader: a write through the read-only credential succeeded");
if (!/AccessDenied|Access Denied|403|Forbidden|denied/i.test(refused)) throw new Error(`reader: write refused for another reason: ${refused}`);
console.log("-- the reader's write was refused by the store: " + refused.slice(0, 200));
if ((await t.countRows()) !== 4) throw new Error("writer: count after the refused write");
console.log("ok");
