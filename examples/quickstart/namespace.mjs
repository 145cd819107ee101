// Namespace mode: metadata through lancecat, data read and written by the client itself.
import * as lancedb from "@lancedb/lancedb";

const db = await lancedb.connectNamespace("rest", { uri: "http://127.0.0.1:2333" });
await db.createNamespace(["shop"]);
const items = await db.createTable("items", [
  { id: 1, name: "apple", vector: [0.1, 0.9] },
  { id: 2, name: "pear", vector: [0.8, 0.2] },
  { id: 3, name: "plum", vector: [0.5, 0.5] },
], ["shop"]);
await items.add([{ id: 4, name: "fig", vector: [0.2, 0.7] }]);
console.log("tables:", (await db.tableNames(["shop"])).join(","));
console.log("rows:", await items.countRows());
const [nearest] = await items.search([0.1, 0.8]).limit(1).toArray();
console.log("nearest:", nearest.name);
