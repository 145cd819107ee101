// Package spec holds what the generated code is made from: the pin of the Lance Namespace spec
// (kept outside the repo, in ../shared/lance-namespace/; the pin names the file) and the generator
// configurations.
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
	Name string `json:"name"`
	// Version labels the spec by its upstream release tag or commit: the spec's own info.version
	// (recorded in InfoVersion) stays 1.0.0 across releases and cannot tell two specs apart.
	Version     string `json:"version"`
	InfoVersion string `json:"info_version,omitempty"`
	// File is where the pinned spec lives, relative to the repo root; the Makefile's SPEC default.
	File       string `json:"file,omitempty"`
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
