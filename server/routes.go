package server

// GovernanceRoutes are the routes of ours allowed under the spec's prefixes (/v1/namespace,
// /v1/table, /v1/materialized_view, /v1/transaction), as "METHOD /echo/path". Anything else routed
// there fails the route test: a verb of ours must be added here on purpose, never slip in.
var GovernanceRoutes = map[string]bool{
	"GET /v1/table/:id/protection":           true,
	"POST /v1/table/:id/protection":          true,
	"GET /v1/namespace/:id/protection":       true,
	"POST /v1/namespace/:id/protection":      true,
	"POST /v1/table/:id/undrop":              true,
	"POST /v1/namespace/:id/undrop":          true,
	"GET /v1/table/:id/tasks":                true,
	"GET /v1/namespace/:id/tasks":            true, // issue 17: the tasks of a subtree
	"POST /v1/table/:id/policy/set":          true,
	"POST /v1/table/:id/policy/describe":     true,
	"POST /v1/table/:id/policy/delete":       true,
	"POST /v1/namespace/:id/policy/set":      true,
	"POST /v1/namespace/:id/policy/describe": true,
	"POST /v1/namespace/:id/policy/delete":   true,
	"POST /v1/table/:id/maintenance/run":     true, // issue 17: one maintenance pass now
	// Issue 34: the doors the LanceDB remote client calls beyond the spec (spec/control.yaml, Remote).
	"POST /v1/table/:id/get_lsm_write_spec":        true,
	"POST /v1/table/:id/set_lsm_write_spec":        true,
	"POST /v1/table/:id/unset_lsm_write_spec":      true,
	"POST /v1/table/:id/flush_lsm":                 true,
	"POST /v1/table/:id/compact_lsm":               true,
	"POST /v1/table/:id/get_lsm_stats":             true,
	"POST /v1/table/:id/index/:index_name/prewarm": true,
	"POST /v1/table/:id/page_cache/prewarm":        true,
	"POST /v1/table/:id/branches/diff":             true, // 406 until backed
	"POST /v1/table/:id/branches/cherry_pick":      true, // 406 until backed
	"POST /v1/table/:id/clone":                     true, // 406 until backed
}

// SpecPrefixes are the path prefixes the Lance Namespace spec owns.
var SpecPrefixes = []string{"/v1/namespace", "/v1/table", "/v1/materialized_view", "/v1/transaction"}
