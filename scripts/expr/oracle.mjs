// The oracle of the expr package's differential test: the official LanceDB SDK evaluates every filter of
// a corpus over one table, and writes what it kept.
//
//   node scripts/expr/oracle.mjs <sdk-dir> <work-dir> <corpus-file>
//
// Creates table "t" (nulls, NaN, ±0, ±Inf, empty strings, unicode, extreme integers, lists, structs,
// dates, timestamps) under <work-dir>/db, writes the table as the SDK reads it back to
// <work-dir>/table.arrow (Arrow IPC file, so Go evaluates over exactly the stored values), and prints
// JSON: {"sdk": version, "results": [{"expr", "ids": [..]} | {"expr", "error": "..."}]}.
// The corpus has one expression a line; blank lines and lines starting with "#" are skipped; a
// leading "+ " or "! " is a marker for the Go test (see expr/diff_test.go), echoed as "marker".
import fs from "node:fs";
import path from "node:path";
import { loadSDK } from "../lib/sdk.mjs";

const [sdkDir, workDir, corpusPath] = process.argv.slice(2);
if (!sdkDir || !workDir || !corpusPath) {
  console.error("usage: node oracle.mjs <sdk-dir> <work-dir> <corpus-file>");
  process.exit(2);
}
const { lancedb, arrow, version: sdkVersion } = loadSDK(sdkDir);

const F = (name, type, nullable = true) => new arrow.Field(name, type, nullable);
const schema = new arrow.Schema([
  F("id", new arrow.Int32(), false),
  F("i", new arrow.Int64()),
  F("i32", new arrow.Int32()),
  F("u8", new arrow.Uint8()),
  F("f", new arrow.Float64()),
  F("f32", new arrow.Float32()),
  F("s", new arrow.Utf8()),
  F("b", new arrow.Bool()),
  F("d", new arrow.DateDay()),
  F("ts", new arrow.TimestampMicrosecond()),
  F("tags", new arrow.List(F("item", new arrow.Utf8()))),
  F("nums", new arrow.List(F("item", new arrow.Int64()))),
  F("st", new arrow.Struct([F("x", new arrow.Int32()), F("y", new arrow.Utf8())])),
  F("CamelCase", new arrow.Int32()),
  F("two words", new arrow.Utf8()),
]);

const I64MAX = 9223372036854775807n, I64MIN = -9223372036854775808n;
const ints = [0n, 1n, -1n, 42n, null, I64MAX, I64MIN, 7n, -100n, 1000000n, 3n, null, 2n, 10n, -7n, 5n, 100n, 8n, 9n, 11n, 12n, 13n, -5n, 6n];
const i32s = [0, 1, -1, 2147483647, -2147483648, null, 5, 10, 3, -3, 7, 8, null, 2, 4, 6, 9, 11, 12, 13, 14, 15, -16, 17];
const u8s = [0, 1, 255, 128, null, 7, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20];
const floats = [0, -0, 1.5, -2.5, NaN, Infinity, -Infinity, null, 3.14159, 1e300, -1e-300, 2, 0.1, 0.2, 0.30000000000000004, 100, -100, 7.5, 2.5, 3.5, -0.5, 1e-10, 42, 5];
const strings = ["abc", "", "Abc", "héllo", "日本語", null, "a%b", "a_b", "  pad  ", "ABC", "abcabc", "x", "hello world", "Straße", "emoji 😀", "123", "1e3", "-5", "true", "null", "a\\b", "it's", "zzz", "ab"];
const bools = [true, false, null, true, false, true, null, false, true, true, false, false, true, null, true, false, true, false, true, false, true, false, true, false];
const day = (y, m, d) => new Date(Date.UTC(y, m - 1, d));
const dates = [day(2024, 1, 1), day(1970, 1, 1), day(1969, 12, 31), null, day(2000, 2, 29), day(2024, 12, 31), day(1900, 1, 1), day(2099, 6, 15), day(2024, 1, 2), day(2023, 7, 4),
  day(2024, 2, 29), day(2025, 3, 1), null, day(1999, 12, 31), day(2010, 10, 10), day(2024, 6, 30), day(2024, 6, 1), day(2001, 1, 1), day(2024, 1, 1), day(1980, 5, 5), day(2030, 1, 1), day(2024, 11, 11), day(2020, 2, 2), day(2012, 12, 12)];
const tagsv = [["a", "b"], [], null, ["a"], ["b", "c", "d"], [""], ["héllo"], ["a", null], ["x", "y"], ["c"], [], null, ["a", "a"], ["z"], ["b"], ["d", "e"], ["a", "b", "c"], [null], ["q"], ["r", "s"], ["t"], [], ["u"], ["v", "w"]];
const numsv = [[1n, 2n], [], null, [3n], [1n, 2n, 3n], [0n], [-1n], [I64MAX], [5n, null], [7n], [8n, 9n], null, [], [10n], [11n, 12n], [1n], [2n], [3n], [4n], [5n], [6n], [7n], [8n], [9n]];
const rows = [];
for (let k = 0; k < 24; k++) {
  const ts = dates[k] === null ? null : new Date(dates[k].getTime() + (k * 3723 + 0.5) * 1000);
  rows.push({
    id: k, i: ints[k], i32: i32s[k], u8: u8s[k], f: floats[k], f32: floats[k] === null ? null : Math.fround(floats[k]),
    s: strings[k], b: bools[k], d: dates[k], ts, tags: tagsv[k], nums: numsv[k],
    st: k === 5 ? null : { x: k % 4 === 0 ? null : k * 3 - 20, y: k % 3 === 0 ? null : strings[(k + 3) % 24] },
    CamelCase: k % 5 === 0 ? null : k * 11 - 50,
    "two words": k % 6 === 0 ? null : `w${k % 4}`,
  });
}

fs.mkdirSync(workDir, { recursive: true });
const db = await lancedb.connect(path.join(workDir, "db"));
const tbl = await db.createTable("t", lancedb.makeArrowTable(rows, { schema }), { mode: "overwrite" });
const all = await tbl.query().limit(1000).toArrow();
fs.writeFileSync(path.join(workDir, "table.arrow"), arrow.tableToIPC(all, "file"));

const corpus = fs.readFileSync(corpusPath, "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
const results = [];
for (const line of corpus) {
  // A line may start with a marker for the Go side ("+ ", "! "): not part of the expression.
  const m = /^([+!]) (.*)$/.exec(line);
  const expr = m ? m[2] : line;
  const marker = m ? m[1] : "";
  try {
    const got = await tbl.query().where(expr).select(["id"]).limit(1000).toArray();
    const ids = got.map((r) => Number(r.id)).sort((a, b) => a - b);
    results.push({ expr, marker, ids });
  } catch (e) {
    results.push({ expr, marker, error: String(e.message ?? e).split("\n")[0] });
  }
}
process.stdout.write(JSON.stringify({ sdk: sdkVersion, results }));
