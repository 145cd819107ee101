// Command checkpin verifies that a Lance Namespace spec file is the pinned one before code is
// generated from it, or, with -update, re-pins to a new spec (the spec bump workflow).
//
//	go run ./spec/checkpin ../shared/lance-namespace/spec.yaml
//	go run ./spec/checkpin -update -version 0.12.0 path/to/new/spec.yaml
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lancecat/lancecat/spec"
)

const pinFile = "spec/lance-namespace.pin.json"

func main() {
	update := flag.Bool("update", false, "re-pin to the given spec instead of checking it")
	version := flag.String("version", "", "with -update: the Lance Namespace release the spec comes from")
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
	got := spec.Pin{Name: "Lance Namespace REST spec", SHA256: hex.EncodeToString(sum[:]), Operations: ops}
	if update {
		if version == "" {
			return fmt.Errorf("-update needs -version (the Lance Namespace release of the new spec)")
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
	if got.Operations != want.Operations {
		problems = append(problems, fmt.Sprintf("it lists %d operations, pinned %d", got.Operations, want.Operations))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s is not the pinned spec %s: %s.\nTo move to a new spec: make pin-spec SPEC=%s VERSION=<release>, then make generate (see README, \"Bumping the spec\")",
			path, want.Version, strings.Join(problems, "; "), path)
	}
	return nil
}
