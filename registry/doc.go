// Package registry keeps the control-root JSON records: projects, warehouses, namespace bindings,
// protection, trash and policies. Id-minting creates use put-if-absent (a lost race is a 409, never
// last-writer-wins) and mutations are ETag-guarded read-modify-writes with bounded retry, so any
// number of stateless replicas can share one control root. It knows nothing about HTTP.
package registry
