// Package spec holds what the generated code is made from: the pin of the Lance Namespace spec
// (kept outside the repo, in ../shared/lance-namespace/; the pin names the file) and the generator
// configurations.
package spec

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
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
	File   string `json:"file,omitempty"`
	SHA256 string `json:"sha256"`
	// DocumentSHA256 is the sha256 of the spec as the generator sees it (Document): the same for
	// the YAML file and for the copy the generated code embeds, so the generated code can be
	// checked against the pin without the file beside the repo.
	DocumentSHA256 string `json:"document_sha256,omitempty"`
	Operations     int    `json:"operations"`
}

// Document is a loaded spec in canonical form: its JSON encoding (map keys sorted). The YAML file
// and the spec gen/nsapi embeds (oapi-codegen stores the same encoding) give the same bytes.
func Document(doc *openapi3.T) ([]byte, error) {
	return json.Marshal(doc)
}

// DocumentSHA256 is the hex sha256 of Document(doc).
func DocumentSHA256(doc *openapi3.T) (string, error) {
	b, err := Document(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// LanceNamespace is the pinned Lance Namespace spec.
func LanceNamespace() Pin {
	var p Pin
	if err := json.Unmarshal(lanceNamespacePin, &p); err != nil {
		panic(fmt.Sprintf("spec/lance-namespace.pin.json is malformed: %v", err))
	}
	return p
}
