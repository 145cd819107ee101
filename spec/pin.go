// Package spec holds what the generated code is made from: the pin of the Lance Namespace spec
// (kept outside the repo, in ../shared/lance-namespace/spec.yaml) and the generator configurations.
package spec

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed lance-namespace.pin.json
var lanceNamespacePin []byte

// Pin records which spec the generated code was made from.
type Pin struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	SHA256     string `json:"sha256"`
	Operations int    `json:"operations"`
}

// LanceNamespace is the pinned Lance Namespace spec.
func LanceNamespace() Pin {
	var p Pin
	if err := json.Unmarshal(lanceNamespacePin, &p); err != nil {
		panic(fmt.Sprintf("spec/lance-namespace.pin.json is malformed: %v", err))
	}
	return p
}
