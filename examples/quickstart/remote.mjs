// Remote mode: every operation, data included, is executed by lancecat.
import * as lancedb from "@lancedb/lancedb";

const db = await lancedb.connect("db://lancecat", {
  apiKey: "local", // sent as x-api-key; any non-empty string while authorization is off
  hostOverride: "http://127.0.0.1:2333",
});
const orders = await db.createTable("orders", [
  { id: 1, item: "apple", qty: 3 },
  { id: 2, item: "pear", qty: 1 },
]);
await orders.add([{ id: 3, item: "plum", qty: 7 }]);
await orders.update({ where: "id = 2", values: { qty: 2 } });
await orders.delete("item = 'apple'");
console.log("rows:", await orders.countRows());
const big = await orders.query().where("qty > 1").select(["item", "qty"]).toArray();
console.log("qty > 1:", big.map((r) => `${r.item}=${r.qty}`).sort().join(","));
