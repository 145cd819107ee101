# Doors are /v1/<object>/<id>/<action>; an id's parts are joined by '$' (the root namespace is '$').
lc=http://127.0.0.1:2333/v1
curl -s "$lc/namespace/\$/list"                        # {"namespaces":["shop"]}
curl -s "$lc/namespace/shop/table/list"                # {"tables":["items"]}
curl -s "$lc/table/shop\$items/describe" -d '{}'       # location, schema, version
curl -s -w '\n' "$lc/table/shop\$items/count_rows" -d '{"predicate": "id > 2"}'   # 2
# A query answers an Arrow IPC file (read it with pyarrow.ipc.open_file or arrow-go's ipc.NewFileReader).
curl -s "$lc/table/shop\$items/query" -d '{"filter": "name = '\''pear'\''", "k": 10}' -o pear.arrow
# Errors are problem+json with the spec's numeric code (4: table not found).
curl -s "$lc/table/shop\$missing/describe" -d '{}'
