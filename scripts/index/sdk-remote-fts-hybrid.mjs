// The official SDK in remote mode against a running lancecat: creates the
// FTS index on text, then runs a hybrid search (nearestTo + fullTextSearch,
// the default RRF reranker). The client sends two queries (full-text and
// vector, both with_row_id) and merges them itself. Prints
// {"ids": [...], "relevance": [...]} for the Go side to check.
//
// usage: node sdk-remote-fts-hybrid.mjs <sdk-dir> <url> <table> <job.json>
// job: {"vector": [..], "text": "...", "limit": n}
import fs from "node:fs";
import { remoteTable } from "../lib/checks.mjs";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, url, table, jobPath] = process.argv.slice(2);
const { lancedb } = loadSDK(sdkDir);
const job = JSON.parse(fs.readFileSync(jobPath, "utf8"));

const { t } = await remoteTable(lancedb, url, table);
await t.createIndex("text", { config: lancedb.Index.fts() });
const rows = await t.query().nearestTo(job.vector).fullTextSearch(job.text).select(["id"]).limit(job.limit).toArray();
console.log(JSON.stringify({
  ids: rows.map((r) => Number(r.id)),
  relevance: rows.map((r) => r._relevance_score),
  columns: rows.length ? Object.keys(rows[0]) : [],
}));
