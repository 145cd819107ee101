// The pinned LanceDB Node SDK a script runs against: <sdk-dir> is what
// scripts/lancedb/install.sh prints. The one copy of the loading and of the
// table opening the SDK scripts (index/, query/, expr/, maintenance/, dml/,
// lancedb/) share.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

// loadSDK returns the SDK's lancedb module, its own apache-arrow (the SDK
// checks arrow objects with instanceof, so scripts must use its copy), and
// the SDK's version.
export function loadSDK(sdkDir) {
  const root = path.resolve(sdkDir);
  const require = createRequire(path.join(root, "package.json"));
  const version = JSON.parse(fs.readFileSync(path.join(root, "node_modules/@lancedb/lancedb/package.json"), "utf8")).version;
  return { lancedb: require("@lancedb/lancedb"), arrow: require("apache-arrow"), version };
}

// connectParent connects to the parent of a table given as a local path or
// a URI (path.posix handles "s3://bucket/a/t.lance" as well: dirname
// "s3://bucket/a"), with storageOptions if any, and returns the connection
// and the table's name in it.
export async function connectParent(lancedb, dir, storageOptions) {
  const isURI = /^[a-z][a-z0-9+.-]*:\/\//.test(dir);
  const parent = isURI ? path.posix.dirname(dir) : path.dirname(path.resolve(dir));
  const db = await lancedb.connect(parent, storageOptions ? { storageOptions } : undefined);
  const name = path.posix.basename(dir).replace(/\.lance$/, "");
  return { db, name };
}
