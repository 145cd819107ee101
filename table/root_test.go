package table

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// soloRoot is a Root of one table's dataset in memory that coordinates no transactions: what a
// table does on its own (a directory namespace's root is package namespace's, tested there).
type soloRoot struct {
	ds     *lance.Dataset
	builds *Builds
}

func (r *soloRoot) Dataset(*catalog.Entry) *lance.Dataset { return r.ds }

func (r *soloRoot) SettleOpened(_ context.Context, _ *catalog.Entry, _ *lance.Dataset, v *lance.Version, err error) (*lance.Version, error) {
	return v, err
}

func (r *soloRoot) SettledLatest(ctx context.Context, e *catalog.Entry, branch string) (uint64, error) {
	ds, err := OnBranch(r.ds, e, branch)
	if err != nil {
		return 0, err
	}
	v, err := ds.OpenLatest(ctx)
	if errors.Is(err, lance.ErrDatasetNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return v.Number(), nil
}

func (r *soloRoot) Declared(context.Context, *catalog.Entry) error { return nil }

func (r *soloRoot) CommitTableVersions(context.Context, string, []catalog.VersionEntry, ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error) {
	return catalog.Transaction{}, nil, nserr.Unsupportedf("a solo root commits no table versions")
}

func (r *soloRoot) IndexBuilds() *Builds { return r.builds }

// oneRowTable is table t of a solo root holding one row, x = 7 (int64).
func oneRowTable(t *testing.T) *Table {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(testenv.CheckedAllocator(t))
	b.Append(7)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 1)
	col.Release()
	t.Cleanup(rec.Release)
	rs, err := catalog.Records(schema, rec)()
	assert.NilError(t, err)
	ds := lance.NewDataset(storage.NewMemory())
	_, err = ds.Write(context.Background(), rs, lance.WriteOptions{})
	assert.NilError(t, err)
	rs.(interface{ Release() }).Release()
	root := &soloRoot{ds: ds, builds: NewBuilds(IndexBuildOptions{})}
	return New(root, &catalog.Entry{ID: ident.ID{"ns", "t"}, Location: "t"})
}
