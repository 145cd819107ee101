package server

import (
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/gen/nsapi"
)

// Operation is one operation of the Lance Namespace spec as it is routed.
type Operation struct {
	ID     string // the spec's operationId, e.g. "CreateNamespace"
	Method string
	Path   string // the spec's path template, e.g. "/v1/table/{id}/create"
	// ArrowBody: the spec's request body is an Arrow IPC stream (CreateTable, InsertIntoTable, …);
	// such bodies get --max-body-bytes, every other body the JSON cap (body.go).
	ArrowBody bool
}

// EchoPath is the operation's path in Echo's syntax ("{id}" → ":id").
func (o Operation) EchoPath() string {
	var b strings.Builder
	for seg := range strings.SplitSeq(o.Path, "/") {
		if b.Len() > 0 || seg == "" {
			b.WriteString("/")
		}
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			seg = ":" + seg[1:len(seg)-1]
		}
		b.WriteString(seg)
	}
	return strings.TrimPrefix(b.String(), "/")
}

// SpecOperations lists the operations of the embedded Lance Namespace spec, sorted by path then
// method.
func SpecOperations() ([]Operation, error) {
	spec, err := nsapi.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("loading the embedded Lance Namespace spec: %w", err)
	}
	return operationsOf(spec), nil
}

// ControlOperations lists the operations of our own control-plane API (spec/control.yaml).
func ControlOperations() ([]Operation, error) {
	spec, err := controlapi.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("loading the embedded control-plane spec: %w", err)
	}
	return operationsOf(spec), nil
}

func operationsOf(spec *openapi3.T) []Operation {
	var ops []Operation
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			o := Operation{ID: op.OperationID, Method: strings.ToUpper(method), Path: path}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for ct := range op.RequestBody.Value.Content {
					o.ArrowBody = o.ArrowBody || strings.HasPrefix(ct, "application/vnd.apache.arrow")
				}
			}
			ops = append(ops, o)
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return ops[i].Method < ops[j].Method
	})
	return ops
}

// arrowRoutes are the Echo routes ("POST /v1/table/:id/insert") of the operations with Arrow bodies.
func arrowRoutes(ops []Operation) map[string]bool {
	out := map[string]bool{}
	for _, op := range ops {
		if op.ArrowBody {
			out[op.Method+" "+op.EchoPath()] = true
		}
	}
	return out
}

// operationIndex names the operation behind an Echo route, for logs and metrics.
type operationIndex map[string]string

func newOperationIndex(ops []Operation) operationIndex {
	idx := operationIndex{}
	for _, op := range ops {
		idx[op.Method+" "+op.EchoPath()] = op.ID
	}
	return idx
}
