// Command genmodel compiles authz/model.fga (the OpenFGA DSL we edit) into authz/model.json (the
// form the OpenFGA API takes), so the server needs no DSL parser at run time. The output is
// deterministic: run it twice on one input and nothing changes.
//
//	go run ./authz/internal/genmodel authz/model.fga authz/model.json
package main

import (
	"fmt"
	"os"

	"github.com/lancecat/lancecat/authz/internal/fgadsl"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genmodel <model.fga> <model.json>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "genmodel:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	dsl, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	js, err := fgadsl.Compile(string(dsl))
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, js, 0o644)
}
