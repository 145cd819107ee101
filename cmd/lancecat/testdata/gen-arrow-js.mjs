// Writes the Arrow JS fixtures of TestDatasetImportFiles (node gen-arrow-js.mjs, with the
// apache-arrow package the LanceDB Node SDK installs: scripts/lancedb/install.sh). Arrow JS writes
// an IPC file's schema only in its footer: the stream before the footer starts with a batch.
import { Table, tableFromArrays, tableToIPC, vectorFromArray, Int64, Utf8 } from "apache-arrow";
import { writeFileSync } from "fs";

const ids = [0n, 1n, 2n, 3n, 4n];
const names = ["a", "b", null, "d", "e"];
// Plain columns: the file's first message after the magic is a record batch.
writeFileSync("js-plain.arrow", tableToIPC(new Table({
  id: vectorFromArray(ids, new Int64()), name: vectorFromArray(names, new Utf8()),
}), "file"));
// tableFromArrays dictionary-encodes strings: the first message is a dictionary batch.
writeFileSync("js-dict.arrow", tableToIPC(tableFromArrays({
  id: BigInt64Array.from(ids), name: ["a", "b", "c", "a", "b"],
}), "file"));
