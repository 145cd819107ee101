// Branch interop between lancecat's branch routes and the official LanceDB Node SDK: branches made
// over REST (list/create/delete_table_branch) are seen, checked out, written and deleted by the
// SDK, and branches the SDK makes (Table.branches(), which writes Lance's refs itself: the
// namespace client sends no branch request) are listed, read, written and deleted over REST.
// Exits non-zero on the first failure.
//
// usage: LANCEDB_DIR=<sdk install dir> node sdk-branches.mjs <catalog url>
// env:   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY   the client's own S3 credentials (an S3 root)
import { createRequire } from "node:module";
const require = createRequire(process.env.LANCEDB_DIR + "/node_modules/");
const lancedb = require("@lancedb/lancedb");

const [uri] = process.argv.slice(2);
let checks = 0;
function ok(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
  checks++;
}
async function fails(fn, what) {
  try {
    await fn();
  } catch {
    checks++;
    return;
  }
  throw new Error(`${what}: succeeded, want an error`);
}
const step = (name) => console.log(`-- ${name} (${checks} checks so far)`);

async function rest(route, body, query = "") {
  const r = await fetch(`${uri}${route}?delimiter=%24${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body === undefined ? null : body),
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${route}: status ${r.status}, body is not JSON: ${text}`);
  }
  return { status: r.status, json };
}
async function restOK(route, body, what, query) {
  const r = await rest(route, body, query);
  if (r.status !== 200) throw new Error(`${what}: status ${r.status}: ${JSON.stringify(r.json)}`);
  checks++;
  return r.json;
}
async function restCode(route, body, code, what) {
  const r = await rest(route, body);
  if (r.json.code !== code) throw new Error(`${what}: want code ${code}, got status ${r.status}: ${JSON.stringify(r.json)}`);
  checks++;
  return r.json;
}
const p = "/v1/table/br%24items";
const branchesOverREST = async () => (await restOK(`${p}/branches/list`, null, "branches/list")).branches;
const countOverREST = async (branch) => restOK(`${p}/count_rows`, branch ? { branch } : {}, `count_rows on ${branch || "main"}`);

const db = await lancedb.connectNamespace("rest", { uri });
await db.createNamespace(["br"]);
const rows = [0, 1, 2, 3].map((i) => ({ id: i, name: "n" + i, vector: [i, i] }));
const t = await db.createTable("items", rows, ["br"]); // v1
await t.add([{ id: 4, name: "n4", vector: [4, 4] }]); // v2

step("REST-made branches, seen by the SDK");
{
  await restOK(`${p}/branches/create`, { name: "rest-dev" }, "branches/create from main's latest");
  await restCode(`${p}/branches/create`, { name: "rest-dev" }, 23, "a taken branch name");
  await restOK(`${p}/branches/create`, { name: "rest-old", from_version: 1 }, "branches/create at version 1");
  const br = await t.branches();
  const listed = await br.list();
  ok(listed["rest-dev"] && listed["rest-dev"].parentVersion === 2, "the SDK lists the REST branch: " + JSON.stringify(listed));
  ok(listed["rest-old"] && listed["rest-old"].parentVersion === 1, "the SDK lists the REST branch at v1: " + JSON.stringify(listed));
  const dev = await br.checkout("rest-dev");
  ok((await dev.countRows()) === 5, "the SDK reads the REST branch");
  ok((await (await br.checkout("rest-old")).countRows()) === 4, "the SDK reads the REST branch at version 1");
  await dev.add([{ id: 10, name: "dev", vector: [9, 9] }]);
  ok((await dev.countRows()) === 6, "the SDK writes the REST branch");
  ok((await t.countRows()) === 5, "main does not see it");
  ok((await countOverREST("rest-dev")) === 6, "REST counts the SDK's write on the branch");
  ok((await countOverREST()) === 5, "REST main is untouched");
  const opened = await db.openTable("items", ["br"], { branch: "rest-dev" });
  ok((await opened.countRows()) === 6, "openTable({branch}) opens the REST branch");

  // A branch of the REST branch, from REST; the SDK sees its parent.
  await restOK(`${p}/branches/create`, { name: "rest-dev/child", from_branch: "rest-dev" }, "branch of a branch");
  const child = (await br.list())["rest-dev/child"];
  ok(child && child.parentBranch === "rest-dev" && child.parentVersion === 3, "the SDK sees the child's parent: " + JSON.stringify(child));
  ok((await (await br.checkout("rest-dev/child")).countRows()) === 6, "the SDK reads the child branch");
  // REST deletes; the SDK no longer sees the branch.
  await restCode(`${p}/branches/delete`, { name: "rest-dev" }, 19, "delete a branch with a child");
  await restOK(`${p}/branches/delete`, { name: "rest-dev/child" }, "branches/delete");
  ok(!("rest-dev/child" in (await br.list())), "the SDK no longer lists the deleted branch");
  await fails(() => br.checkout("rest-dev/child"), "the SDK checks out a deleted branch");
}

step("SDK-made branches, seen over REST");
{
  const br = await t.branches();
  const sdkDev = await br.create("sdk-dev");
  await sdkDev.add([{ id: 20, name: "sdk", vector: [7, 7] }]);
  const listed = await branchesOverREST();
  ok(listed["sdk-dev"] && listed["sdk-dev"].parentVersion === 2 && listed["sdk-dev"].manifestSize > 0, "REST lists the SDK's branch: " + JSON.stringify(listed));
  ok((await countOverREST("sdk-dev")) === 6, "REST reads the SDK's branch");
  const d = await restOK(`${p}/describe`, { branch: "sdk-dev" }, "describe on the SDK's branch");
  ok(d.version === 3, "describe reads the branch's latest: " + JSON.stringify(d.version));
  // A REST write on the SDK's branch, read back by the SDK.
  await restOK(`${p}/update`, { branch: "sdk-dev", predicate: "id = 20", updates: [["name", "'rest'"]] }, "update on the SDK's branch");
  const back = await (await br.checkout("sdk-dev")).query().where("id = 20").toArray();
  ok(back.length === 1 && back[0].name === "rest", "the SDK reads REST's write on its branch: " + JSON.stringify(back));
  ok((await t.query().where("id = 20").toArray()).length === 0, "main does not see it");
  const vl = await restOK(`${p}/version/list`, null, "version/list on the SDK's branch", "&branch=sdk-dev&descending=true&limit=1");
  ok(vl.versions[0].version === 4, "the branch's versions over REST: " + JSON.stringify(vl.versions));

  // A tag into the branch holds it; once the tag is gone, REST deletes the SDK's branch.
  await restOK(`${p}/tags/create`, { tag: "on-sdk-dev", version: 4, branch: "sdk-dev" }, "tag into the branch");
  await restCode(`${p}/branches/delete`, { name: "sdk-dev" }, 19, "delete a tagged branch");
  await restOK(`${p}/tags/delete`, { tag: "on-sdk-dev" }, "tags/delete");
  await restOK(`${p}/branches/delete`, { name: "sdk-dev" }, "delete the SDK's branch over REST");
  ok(!("sdk-dev" in (await br.list())), "the SDK no longer lists it");
  // The SDK deletes a REST branch; REST no longer lists it, and refuses to write it.
  await br.delete("rest-old");
  ok(!("rest-old" in (await branchesOverREST())), "REST no longer lists the branch the SDK deleted");
  await restCode(`${p}/update`, { branch: "rest-old", predicate: "id = 1", updates: [["name", "'x'"]] }, 22, "write a deleted branch");
  ok((await countOverREST()) === 5, "main holds its 5 rows throughout");
}
console.log(`ok: ${checks} checks`);
