// Command checkpin verifies that a Lance Namespace spec file is the pinned one before code is
// generated from it, or, with -update, re-pins to a new spec (the spec bump workflow).
//
//	go run ./spec/checkpin ../shared/lance-namespace/spec-9a92264.yaml
//	go run ./spec/checkpin -update -version 9a92264 ../shared/lance-namespace/spec-9a92264.yaml
//
// The version label is the upstream release tag (v0.11.1) or commit (9a92264) the file comes from:
// the spec's own info.version stays 1.0.0 across releases and cannot tell two specs apart. The pin
// also records the file's path, which the Makefile uses as its SPEC default.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lancecat/lancecat/spec"
)

const pinFile = "spec/lance-namespace.pin.json"

func main() {
	update := flag.Bool("update", false, "re-pin to the given spec instead of checking it")
	version := flag.String("version", "", "with -update: the upstream release tag or commit the spec comes from (not info.version)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: checkpin [-update -version V] SPEC")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *update, *version); err != nil {
		fmt.Fprintln(os.Stderr, "checkpin:", err)
		os.Exit(1)
	}
}

func run(path string, update bool, version string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the spec: %w (is ../shared beside the repo? SPEC= overrides the path)", err)
	}
	sum := sha256.Sum256(raw)
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	ops := 0
	for _, item := range doc.Paths.Map() {
		ops += len(item.Operations())
	}
	docSum, err := spec.DocumentSHA256(doc)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	got := spec.Pin{
		Name:           "Lance Namespace REST spec",
		DocumentSHA256: docSum,
		InfoVersion:    doc.Info.Version,
		File:           filepath.ToSlash(filepath.Clean(path)),
		SHA256:         hex.EncodeToString(sum[:]),
		Operations:     ops,
	}
	if update {
		if err := checkLabel(version, got, spec.LanceNamespace()); err != nil {
			return err
		}
		got.Version = version
		out, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(pinFile, append(out, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("pinned %s: version %s, %d operations, sha256 %s\n", path, version, ops, got.SHA256)
		return nil
	}
	want := spec.LanceNamespace()
	var problems []string
	if got.SHA256 != want.SHA256 {
		problems = append(problems, fmt.Sprintf("sha256 is %s, pinned %s", got.SHA256, want.SHA256))
	}
	if want.DocumentSHA256 != "" && got.DocumentSHA256 != want.DocumentSHA256 {
		problems = append(problems, fmt.Sprintf("its document sha256 is %s, pinned %s", got.DocumentSHA256, want.DocumentSHA256))
	}
	if got.Operations != want.Operations {
		problems = append(problems, fmt.Sprintf("it lists %d operations, pinned %d", got.Operations, want.Operations))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s is not the pinned spec %s: %s.\nTo move to a new spec: make spec-diff SPEC=%s, then make pin-spec SPEC=%s VERSION=<release tag or upstream commit>, then make generate (see docs/spec-bump.md)",
			path, want.Version, strings.Join(problems, "; "), path, path)
	}
	return nil
}

// checkLabel refuses a version label that cannot identify the new spec: none at all, or the label
// of the current pin on a different file (two specs under one name is what info.version already does).
func checkLabel(label string, got, current spec.Pin) error {
	if label == "" {
		return fmt.Errorf("-update needs -version: the upstream release tag or commit of the new spec (its info.version %q does not identify it)", got.InfoVersion)
	}
	if label == current.Version && got.SHA256 != current.SHA256 {
		return fmt.Errorf("version %q already names the pinned spec (sha256 %s); name this one by its own release tag or upstream commit", label, current.SHA256)
	}
	return nil
}
