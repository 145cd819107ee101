package lancefile

import (
	"encoding/json"
	"testing"
)

// Exported for the external tests (sdk_test.go).

// JSONValue encodes row i of arr as write-fixtures.mjs encodes SDK values.
var JSONValue = jsonValue

// CanonicalJSON re-encodes an SDK JSON value the way Go encodes JSONValue.
func CanonicalJSON(t *testing.T, raw json.RawMessage) string { return canonicalJSON(t, raw) }
