// The SDK's half of the full-text differential test (e2e/fts_diff_test.go): the same table and
// queries through one connection — embedded (a local directory: the SDK's own index and query),
// remote (db:// with hostOverride: lancecat builds the index and answers the queries) or
// namespace (connectNamespace("rest"): the SDK writes the table and builds its index itself on
// lancecat's root).
//
//   node sdk-fts-diff.mjs <sdk-dir> <job.json>
//
// job: {conn: {kind: "local", dir} | {kind: "remote" | "namespace", url}, table,
//       build?: {batches: [[{id, text, title}]], indices: [{column, options}], appended?: [[doc]]},
//       queries: [{q, limit, filter}], tokenize?: [{text, column}]}
// q is {string, columns} | {match, column, boost, fuzziness, maxExpansions, prefixLength, operator}
//      | {phrase, column, slop} | {boost: {positive, negative, negativeBoost}}
//      | {multi, columns, boosts, operator} | {bool: [["MUST"|"SHOULD"|"MUST_NOT", q]]}
// Prints {results: [{ids, scores} | {error}], tokens: [[{text, position}] | {error}]}.
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, jobPath] = process.argv.slice(2);
const { lancedb, arrow } = loadSDK(sdkDir);
const job = JSON.parse(fs.readFileSync(jobPath, "utf8"));

let db;
if (job.conn.kind === "local") db = await lancedb.connect(job.conn.dir);
else if (job.conn.kind === "remote") db = await lancedb.connect("db://lancecat", { apiKey: "none", hostOverride: job.conn.url });
else db = await lancedb.connectNamespace("rest", { uri: job.conn.url });

const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("text", new arrow.Utf8(), true),
  new arrow.Field("title", new arrow.Utf8(), true),
]);
function batchOf(docs) {
  return new arrow.Table({
    id: arrow.vectorFromArray(docs.map((d) => BigInt(d.id)), new arrow.Int64()),
    text: arrow.vectorFromArray(docs.map((d) => d.text), new arrow.Utf8()),
    title: arrow.vectorFromArray(docs.map((d) => d.title), new arrow.Utf8()),
  });
}

let t;
if (job.build) {
  const [first, ...rest] = job.build.batches;
  t = await db.createTable(job.table, batchOf(first), { mode: "overwrite", schema });
  for (const b of rest) await t.add(batchOf(b));
  for (const ix of job.build.indices) {
    await t.createIndex(ix.column, { config: lancedb.Index.fts(ix.options ?? {}), replace: true });
  }
  // rows the index does not cover (searched flat)
  for (const b of job.build.appended ?? []) await t.add(batchOf(b));
} else {
  t = await db.openTable(job.table);
}

const occur = { MUST: lancedb.Occur.Must, SHOULD: lancedb.Occur.Should, MUST_NOT: lancedb.Occur.MustNot };
const operator = (o) => (o === undefined ? undefined : o === "AND" ? lancedb.Operator.And : lancedb.Operator.Or);
function ftsQuery(q) {
  if (q.match !== undefined) {
    const o = {};
    for (const k of ["boost", "fuzziness", "maxExpansions", "prefixLength"]) if (q[k] !== undefined) o[k] = q[k];
    if (q.operator) o.operator = operator(q.operator);
    return new lancedb.MatchQuery(q.match, q.column, o);
  }
  if (q.phrase !== undefined) return new lancedb.PhraseQuery(q.phrase, q.column, q.slop === undefined ? {} : { slop: q.slop });
  if (q.boost !== undefined) {
    return new lancedb.BoostQuery(ftsQuery(q.boost.positive), ftsQuery(q.boost.negative),
      q.boost.negativeBoost === undefined ? {} : { negativeBoost: q.boost.negativeBoost });
  }
  if (q.multi !== undefined) {
    const o = {};
    if (q.boosts) o.boosts = q.boosts;
    if (q.operator) o.operator = operator(q.operator);
    return new lancedb.MultiMatchQuery(q.multi, q.columns, o);
  }
  if (q.bool !== undefined) return new lancedb.BooleanQuery(q.bool.map(([o, c]) => [occur[o], ftsQuery(c)]));
  throw new Error("unknown query " + JSON.stringify(q));
}

const results = [];
for (const { q, limit, filter } of job.queries) {
  try {
    let s = q.string !== undefined ? t.search(q.string, "fts", q.columns) : t.search(ftsQuery(q), "fts");
    s = s.select(["id"]).limit(limit ?? 10);
    if (filter) s = s.where(filter);
    const rows = await s.toArray();
    results.push({ ids: rows.map((r) => Number(r.id)), scores: rows.map((r) => r._score) });
  } catch (e) {
    results.push({ error: String(e.message ?? e).slice(0, 400) });
  }
}
const tokens = [];
for (const { text, column } of job.tokenize ?? []) {
  try {
    tokens.push((await t.tokenize(text, { column })).map((x) => ({ text: x.text, position: x.position })));
  } catch (e) {
    tokens.push({ error: String(e.message ?? e).slice(0, 400) });
  }
}
console.log(JSON.stringify({ results, tokens }));
