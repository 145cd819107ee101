package tableindex

// The one preamble and the one commit tail every index build shares
// (scalar, vector, full-text): what is checked before any training and
// how the trained files are registered. Keeping them in one place keeps
// the three builders refusing the same bad requests the same way.

import (
	"context"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// The phases an index build reports to the IndexProgress in its context
// (a background build records them in the table's task log).
const (
	// PhaseSampling: a vector build's first scan, keeping its training sample.
	PhaseSampling = "sampling"
	// PhaseTraining: k-means (and the PQ codebooks) on the sample.
	PhaseTraining = "training"
	// PhaseAssigning: a vector build's second scan, every row to its
	// partition (and its PQ code).
	PhaseAssigning = "assigning"
	// PhaseScanning: a scalar build reading the column.
	PhaseScanning = "scanning"
	// PhaseWriting: the index files being written under _indices/<uuid>/.
	PhaseWriting = "writing"
	// PhaseCommitting: the CreateIndex transaction being committed.
	PhaseCommitting = "committing"
)

// IndexProgress receives an index build's progress: the phase it is in
// and, for the phases that read the table, the rows read so far of total
// (0, 0 otherwise). It is called from the build's goroutine, often (once
// per scanned batch): it must be cheap and must not block.
type IndexProgress func(phase string, done, total int64)

type indexProgressKey struct{}

// WithIndexProgress returns ctx carrying fn, which every index build run
// under it (scalar, vector, full-text) reports to. A context value rather
// than an option of each builder: the three builders share their preamble
// and commit (this file), so the phases are reported the same way by all
// of them without each options struct growing the same field.
func WithIndexProgress(ctx context.Context, fn IndexProgress) context.Context {
	return context.WithValue(ctx, indexProgressKey{}, fn)
}

// reportIndexProgress tells ctx's IndexProgress, if any.
func reportIndexProgress(ctx context.Context, phase string, done, total int64) {
	if fn, ok := ctx.Value(indexProgressKey{}).(IndexProgress); ok && fn != nil {
		fn(phase, done, total)
	}
}

// indexTarget is an index build resolved against the latest version:
// the version it trains on, the column, the index name and the segments
// a Replace removes.
type indexTarget struct {
	head  *lance.Version
	field *filepb.Field
	// arrow is the column's Arrow field (its type decides the builder).
	arrow arrow.Field
	name  string
	// existing are the segments of the same name (replaced on commit).
	existing []*tablepb.IndexMetadata
	// id names the new index's directory, _indices/<id>/.
	id uuid.UUID
}

// prepareIndex opens the latest version and checks what every index
// build requires before reading any data: a writable table, a top-level
// column that exists, a name that is not reserved (default
// "<column>_idx") and, unless replace, not taken.
func prepareIndex(ctx context.Context, d *lance.Dataset, column, name string, replace bool) (*indexTarget, error) {
	head, err := d.OpenLatest(ctx)
	if err != nil {
		return nil, err
	}
	if err := lance.CheckWritable(head.Manifest()); err != nil {
		return nil, err
	}
	if strings.Contains(column, ".") {
		return nil, lance.Errorf(lance.ErrInvalidInput, "lance: an index on the nested column %q is not supported", column)
	}
	field, err := lance.FieldByPath(head.Fields(), column)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = column + "_idx"
	}
	if strings.HasPrefix(name, "__lance") {
		return nil, lance.Errorf(lance.ErrInvalidInput, "lance: index name %q is reserved", name)
	}
	existing := segmentsNamed(head, name)
	if len(existing) > 0 && !replace {
		return nil, lance.Errorf(lance.ErrIndexExists, "lance: index %q already exists", name)
	}
	schema, err := head.ArrowSchema()
	if err != nil {
		return nil, err
	}
	af, ok := schema.FieldsByName(field.GetName())
	if !ok || len(af) != 1 {
		return nil, lance.Errorf(lance.ErrColumnNotFound, "lance: column %q not found", column)
	}
	return &indexTarget{head: head, field: field, arrow: af[0], name: name, existing: existing, id: uuid.New()}, nil
}

// store is where the new index's files go.
func (t *indexTarget) store(d *lance.Dataset) index.Store {
	return index.BucketStore(d.Store(), lance.IndicesDir+t.id.String()+"/")
}

// commitIndex registers the written files as one segment covering every
// fragment of the version trained on, replacing the segments of the same
// name (Lance's CreateIndex). A zero now is the current time.
func commitIndex(ctx context.Context, d *lance.Dataset, t *indexTarget, files []index.File, details *anypb.Any, indexVersion int32, now time.Time) (*lance.Version, error) {
	var frags []uint32
	for _, f := range t.head.Manifest().GetFragments() {
		frags = append(frags, uint32(f.GetId()))
	}
	bitmap, err := index.EncodeFragmentBitmap(frags)
	if err != nil {
		return nil, err
	}
	if now.IsZero() {
		now = time.Now()
	}
	meta := &tablepb.IndexMetadata{
		Uuid:           &tablepb.UUID{Uuid: t.id[:]},
		Fields:         []int32{t.field.GetId()},
		Name:           t.name,
		DatasetVersion: t.head.Number(),
		FragmentBitmap: bitmap,
		IndexDetails:   details,
		IndexVersion:   proto.Int32(indexVersion),
		CreatedAt:      proto.Uint64(uint64(now.UnixMilli())),
	}
	lance.SetIndexFiles(meta, files)
	reportIndexProgress(ctx, PhaseCommitting, 0, 0)
	return d.Commit(ctx, &lance.CreateIndex{New: []*tablepb.IndexMetadata{meta}, Removed: t.existing}, lance.CommitOptions{ReadVersion: t.head.Number()})
}
