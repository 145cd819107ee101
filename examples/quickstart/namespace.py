# Namespace mode from Python (lancedb, same calls as namespace.mjs).
import lancedb

db = lancedb.connect_namespace("rest", {"uri": "http://127.0.0.1:2333"})
db.create_namespace(["garden"])
plants = db.create_table(
    "plants",
    [{"id": 1, "name": "fern", "vector": [0.1, 0.9]}, {"id": 2, "name": "moss", "vector": [0.8, 0.2]}],
    namespace_path=["garden"],
)
print("rows:", plants.count_rows())
print("nearest:", plants.search([0.1, 0.8]).limit(1).to_list()[0]["name"])
