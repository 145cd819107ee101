package query

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/lance"
)

// TODO(h-query): the engine; these stubs keep the API compiling.
var errTODO = errors.New("query: not implemented yet")

type planned struct{}

type stats struct{}

func plan(ctx context.Context, ds *lance.Dataset, req Request) (*planned, error) {
	return nil, errTODO
}

func (p *planned) run(ctx context.Context, st *stats) (array.RecordReader, error) {
	return nil, errTODO
}

func (p *planned) explain(verbose bool, st *stats) string { return "" }

func count(ctx context.Context, ds *lance.Dataset, at *lance.Version, filter string) (uint64, error) {
	return 0, errTODO
}

func analyze(ctx context.Context, ds *lance.Dataset, req Request) (string, error) {
	return "", errTODO
}
