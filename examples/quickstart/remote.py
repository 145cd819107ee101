# Remote mode from Python: every operation is executed by lancecat (same calls as remote.mjs).
import lancedb

db = lancedb.connect("db://lancecat", api_key="local", host_override="http://127.0.0.1:2333")
orders = db.create_table("orders_py", [{"id": 1, "item": "apple", "qty": 3}, {"id": 2, "item": "pear", "qty": 1}])
orders.update(where="id = 2", values={"qty": 2})
print("rows:", orders.count_rows("qty > 1"))
