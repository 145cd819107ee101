package handlers

// unbackedOperations are the spec operations this server does not back, each with why: the one
// list both the doors (unbacked answers their 406 with this reason) and GET /v1/capabilities
// (package control) read. Backing an operation is removing it here; the route sweep
// (app.TestUnbackedRegistryMatchesTheDoors) checks that exactly these answer 406.
var unbackedOperations = map[string]string{}

// UnbackedOperations is a copy of the registry: operation id → why it is not backed.
func UnbackedOperations() map[string]string {
	out := make(map[string]string, len(unbackedOperations))
	for k, v := range unbackedOperations {
		out[k] = v
	}
	return out
}
