// The check recording of the SDK scripts a Go test drives and whose output it
// reads: ok throws on the first failed check (the script exits non-zero) and
// records each passed one in steps, which the script prints.
export function checker() {
  const steps = [];
  function ok(cond, what) {
    if (!cond) throw new Error("check failed: " + what);
    steps.push(what);
  }
  return { steps, ok };
}

// remoteTable opens table through the SDK in remote mode (db:// with
// hostOverride) against the lancecat at url.
export async function remoteTable(lancedb, url, table) {
  const db = await lancedb.connect("db://lancecat", { apiKey: "none", hostOverride: url });
  return { db, t: await db.openTable(table) };
}
