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

// counter is the check counting of the e2e SDK scripts that print how many
// checks passed: ok and fails throw on a failed check and count a passed one,
// step logs progress, count() is the number so far. fails expects fn to throw
// (with want in its message, when want is given) and returns the message.
export function counter() {
  let checks = 0;
  function ok(cond, what) {
    if (!cond) throw new Error("check failed: " + what);
    checks++;
  }
  async function fails(fn, want, what) {
    try {
      await fn();
    } catch (e) {
      const msg = String(e && e.message ? e.message : e);
      if (want && !msg.includes(want)) throw new Error(`${what}: want an error with "${want}", got: ${msg}`);
      checks++;
      return msg;
    }
    throw new Error(`${what}: succeeded, want an error${want ? ` with "${want}"` : ""}`);
  }
  const step = (name) => console.log(`-- ${name} (${checks} checks so far)`);
  return { ok, fails, step, count: () => checks };
}
