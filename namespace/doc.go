// Package namespace is the Lance directory namespace V2 over one root: the __manifest Lance table,
// hashed table directories and root properties, so a LanceDB client pointed straight at the root
// sees the same namespaces and tables as lancecat's clients. It knows nothing about tenants.
package namespace
