// Command specdiff prints, in Markdown, what moving from one Lance Namespace spec to another
// changes: operations added, removed and changed (routes, parameters, request and response
// schemas), component schemas added, removed and changed (fields, types, required lists, enums),
// and the handler file each changed operation lives in. It is the first step of a spec bump:
//
//	make spec-diff SPEC=../shared/lance-namespace/spec-new.yaml
//	go run ./spec/specdiff [-handlers handlers] [-old-label L] [-new-label L] OLD.yaml NEW.yaml
//
// Descriptions and examples are not compared: the report is about the wire.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"
)

func main() {
	handlers := flag.String("handlers", "handlers", "the directory of the spec handlers (methods of handlers.Server)")
	oldLabel := flag.String("old-label", "", "what to call OLD in the report (default: its file name)")
	newLabel := flag.String("new-label", "", "what to call NEW in the report (default: its file name)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: specdiff [-handlers DIR] [-old-label L] [-new-label L] OLD.yaml NEW.yaml")
		os.Exit(2)
	}
	report, err := run(flag.Arg(0), flag.Arg(1), *oldLabel, *newLabel, *handlers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "specdiff:", err)
		os.Exit(1)
	}
	fmt.Print(report)
}

func run(oldPath, newPath, oldLabel, newLabel, handlersDir string) (string, error) {
	old, err := load(oldPath)
	if err != nil {
		return "", err
	}
	new, err := load(newPath)
	if err != nil {
		return "", err
	}
	index, err := handlerIndex(handlersDir)
	if err != nil {
		return "", err
	}
	if oldLabel == "" {
		oldLabel = filepath.Base(oldPath)
	}
	if newLabel == "" {
		newLabel = filepath.Base(newPath)
	}
	return Report(oldLabel, newLabel, old, new, func(op string) string {
		return index[op]
	}), nil
}

func load(path string) (*openapi3.T, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return doc, nil
}

var handlerMethod = regexp.MustCompile(`(?m)^func \(\w+ \*Server\) (\w+)\(`)

// handlerIndex maps each method of handlers.Server to the file defining it (as handlers/file.go,
// whatever the path to the directory);
// a spec operation's handler is the method named after its operationId.
func handlerIndex(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	index := map[string]string{}
	for _, f := range files {
		if filepath.Ext(f) != ".go" || len(f) > 8 && f[len(f)-8:] == "_test.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range handlerMethod.FindAllSubmatch(src, -1) {
			if _, seen := index[string(m[1])]; !seen {
				index[string(m[1])] = filepath.ToSlash(filepath.Join(filepath.Base(filepath.Clean(dir)), filepath.Base(f)))
			}
		}
	}
	return index, nil
}
