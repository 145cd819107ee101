# 1. Authorization by an OpenFGA of your own (e.g. `docker run -p 8080:8080 openfga/openfga run`);
#    the store and lancecat's model are created at the first start. (`&`: or its own terminal.)
lancecat serve --authz openfga --openfga-url http://127.0.0.1:8080 --estate-admins user:ada &
until curl -sf http://127.0.0.1:2333/healthz >/dev/null; do sleep 0.2; done
# 2. An API key for the estate admin (kept hashed on the control root; printed once).
ADA=$(lancecat apikey create --principal user:ada --description "quickstart admin")
# 3. A project, 4. a warehouse in it (a directory here; a bucket on S3) with a namespace bound to it,
curl -s -H "x-api-key: $ADA" http://127.0.0.1:2333/v1/projects -d '{"id": "analytics"}'
curl -s -H "x-api-key: $ADA" http://127.0.0.1:2333/v1/warehouses -d '{"id": "lake", "project": "analytics"}'
curl -s -H "x-api-key: $ADA" http://127.0.0.1:2333/v1/warehouses/lake/namespaces -d '{"namespace": "sales"}'
# 5. and a grant: bob may read the namespace and everything in it.
curl -s -H "x-api-key: $ADA" http://127.0.0.1:2333/v1/access/grant \
  -d '{"object_type": "namespace", "object_id": "sales", "subject": "user:bob", "relation": "reader"}'
# Bob, with a key of his own, sees what he may read and nothing else:
BOB=$(lancecat apikey create --principal user:bob)
curl -s -H "x-api-key: $BOB" 'http://127.0.0.1:2333/v1/namespace/$/list'   # {"namespaces":["sales"]}
