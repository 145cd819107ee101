// Package fgadsl turns the OpenFGA DSL into the JSON the OpenFGA API takes, in one deterministic
// layout. It is shared by the generator and the test that proves the checked-in JSON is current,
// and is kept out of the server so the DSL parser never links into the binary.
package fgadsl

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/openfga/language/pkg/go/transformer"
)

// Compile parses dsl and returns the model as indented JSON ending in a newline.
func Compile(dsl string) ([]byte, error) {
	// protojson deliberately varies its whitespace between runs; re-indenting through
	// encoding/json pins one layout (protojson already orders fields and map keys).
	raw, err := transformer.TransformDSLToJSON(dsl)
	if err != nil {
		return nil, fmt.Errorf("compiling the OpenFGA DSL: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(raw), "", "  "); err != nil {
		return nil, fmt.Errorf("re-indenting the model JSON: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
