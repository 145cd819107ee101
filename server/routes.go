package server

// GovernanceRoutes are the routes of ours allowed under the spec's prefixes (/v1/namespace,
// /v1/table, /v1/materialized_view, /v1/transaction), as "METHOD /echo/path". Anything else routed
// there fails the route test: a verb of ours must be added here on purpose, never slip in.
var GovernanceRoutes = map[string]bool{}

// SpecPrefixes are the path prefixes the Lance Namespace spec owns.
var SpecPrefixes = []string{"/v1/namespace", "/v1/table", "/v1/materialized_view", "/v1/transaction"}
