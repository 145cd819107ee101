package namespace

// Writing the __manifest table. Every write is one Lance commit built on the newest version:
// new rows go to a new fragment (a Lance 2.1 data file written with lancefile), deleted rows get a
// deletion vector, and the manifest of version N+1 is published with put-if-absent. The plan that
// decides the write (the primary-key check included) runs against exactly version N; losing the
// race for N+1 re-reads and re-plans, so the check and the write are atomic: two writers of one
// object_id cannot both succeed.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// maxCommitAttempts bounds the re-plans after lost races.
const maxCommitAttempts = 64

// newRow is a row to insert. Columns the manifest has beyond the known ones are copied from
// like (a renamed entry keeps them) or null.
type newRow struct {
	ObjectID    string
	Type        string
	Location    *string
	Metadata    *string
	BaseObjects []string
	like        *row
}

// change is one write to the manifest table.
type change struct {
	deletes []*row
	inserts []newRow
	// props updates the table metadata (root properties); a nil value deletes the key.
	props map[string]*string
}

func (c *change) empty() bool {
	return c == nil || (len(c.deletes) == 0 && len(c.inserts) == 0 && len(c.props) == 0)
}

// errNoChange may be returned by a plan that decided not to write.
var errNoChange = errors.New("namespace: nothing to write")

// commit plans a change on the newest snapshot and publishes it, re-planning on a lost race. It
// returns the snapshot the change produced (or the one planned on, if nothing was written).
func (n *Namespace) commit(ctx context.Context, plan func(*snapshot) (*change, error)) (*snapshot, error) {
	for attempt := 0; ; attempt++ {
		s, err := n.snapshot(ctx)
		if err != nil {
			return nil, err
		}
		ch, err := plan(s)
		if errors.Is(err, errNoChange) || (err == nil && ch.empty()) {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		if s.ver == nil {
			if err := n.createManifest(ctx); err != nil {
				return nil, err
			}
			attempt--
			continue
		}
		next, err := n.publish(ctx, s, ch)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, lance.ErrVersionExists) && !errors.Is(err, errManifestClaimed) {
			return nil, err
		}
		if attempt >= maxCommitAttempts {
			return nil, nserr.ConcurrentModificationf("the catalog manifest changed %d times while this operation was committing; try again", attempt+1)
		}
		delay := time.Duration(rand.IntN(4*(attempt+1))+1) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// createManifest writes version 1 of an empty manifest table (LanceDB's schema, object_id the
// unenforced primary key). Losing that race to another creator is fine.
func (n *Namespace) createManifest(ctx context.Context) error {
	schema := manifestSchema()
	fields, err := lancefile.LanceFields(schema, 0)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if f.GetName() == colObjectID && f.GetParentId() == -1 {
			f.UnenforcedPrimaryKey = true
			f.Metadata = map[string][]byte{"lance-schema:unenforced-primary-key:position": []byte("0")}
		}
	}
	txn := &tablepb.Transaction{Uuid: uuid.NewString(), Operation: &tablepb.Transaction_Overwrite_{
		Overwrite: &tablepb.Transaction_Overwrite{Schema: fields},
	}}
	m := &tablepb.Manifest{
		Fields:        fields,
		Version:       1,
		WriterVersion: &tablepb.Manifest_WriterVersion{Library: lance.WriterLibrary, Version: lance.WriterVersion},
		Timestamp:     timestamppb.New(time.Now().UTC()),
		DataFormat:    &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.1"},
	}
	_, err = n.manifest.PutManifest(ctx, lance.NamingV2, &lance.ManifestFile{Manifest: m, Transaction: txn})
	if err != nil && !errors.Is(err, lance.ErrVersionExists) {
		return fmt.Errorf("namespace: create __manifest: %w", err)
	}
	return nil
}

// publish builds version s+1 from ch and puts its manifest if absent, once it holds the claim on
// that version that a batch's catalog entries honour (claimManifestDirect): a version a
// committed batch holds is settled first (errManifestClaimed: re-plan on it), one a batch is
// committing is waited for.
func (n *Namespace) publish(ctx context.Context, s *snapshot, ch *change) (*snapshot, error) {
	store := n.manifest.Store()
	head := s.ver
	next, err := n.build(ctx, s, ch)
	if err != nil {
		return nil, err
	}
	m := next.Manifest
	done, err := n.claimManifestDirect(ctx, m.Version)
	if err != nil {
		return nil, err
	}
	loc, err := n.manifest.PutManifest(ctx, head.Location.Scheme, next)
	if err == nil || errors.Is(err, lance.ErrVersionExists) {
		done(err == nil) // the version stands now, whoever wrote it: claims before it did their work
	}
	if err != nil {
		return nil, err
	}
	_ = lance.WriteVersionHint(ctx, store, m.Version)
	ver := &lance.Version{Location: loc, File: next}
	out, err := loadSnapshot(ctx, store, ver, s)
	if err != nil {
		return nil, err
	}
	n.remember(out)
	return out, nil
}

// build makes version s+1 of the manifest table from ch: its new data and deletion files are
// written (fresh names no version references yet), its manifest is not.
func (n *Namespace) build(ctx context.Context, s *snapshot, ch *change) (*lance.ManifestFile, error) {
	head := s.ver
	if err := writable(head.Manifest()); err != nil {
		return nil, err
	}
	readVersion := head.Number()
	next := &lance.ManifestFile{Manifest: proto.CloneOf(head.File.Manifest)}
	if head.File.Indices != nil {
		next.Indices = proto.CloneOf(head.File.Indices)
	}
	m := next.Manifest
	txn := &tablepb.Transaction{ReadVersion: readVersion, Uuid: uuid.NewString()}

	if len(ch.props) > 0 {
		if len(ch.deletes) > 0 || len(ch.inserts) > 0 {
			return nil, fmt.Errorf("namespace: a property change cannot carry rows")
		}
		update := &tablepb.Transaction_UpdateMap{}
		if m.TableMetadata == nil {
			m.TableMetadata = map[string]string{}
		}
		for _, k := range slices.Sorted(maps.Keys(ch.props)) {
			v := ch.props[k]
			update.UpdateEntries = append(update.UpdateEntries, &tablepb.Transaction_UpdateMapEntry{Key: k, Value: v})
			if v == nil {
				delete(m.TableMetadata, k)
			} else {
				m.TableMetadata[k] = *v
			}
		}
		txn.Operation = &tablepb.Transaction_UpdateConfig_{UpdateConfig: &tablepb.Transaction_UpdateConfig{TableMetadataUpdates: update}}
	} else {
		if err := n.changeRows(ctx, s, next, txn, ch); err != nil {
			return nil, err
		}
	}

	m.Version = readVersion + 1
	m.Timestamp = timestamppb.New(time.Now().UTC())
	m.WriterVersion = &tablepb.Manifest_WriterVersion{Library: lance.WriterLibrary, Version: lance.WriterVersion}
	setFlags(m)
	m.TransactionFile = "" // the transaction travels inline, as LanceDB writes it
	if len(next.Indices.GetIndices()) == 0 {
		next.Indices = nil
	}
	next.Transaction = txn
	return next, nil
}

// changeRows applies deletes and inserts to next's fragments and records the operation in txn.
func (n *Namespace) changeRows(ctx context.Context, s *snapshot, next *lance.ManifestFile, txn *tablepb.Transaction, ch *change) error {
	store := n.manifest.Store()
	m := next.Manifest
	readVersion := s.version()

	deleted := map[uint64][]uint32{}
	for _, r := range ch.deletes {
		id := r.frag.frag.GetId()
		deleted[id] = append(deleted[id], uint32(r.index))
	}
	var removed []uint64
	var updated []*tablepb.DataFragment
	var kept []*tablepb.DataFragment
	maxID := uint64(m.GetMaxFragmentId())
	for _, f := range m.GetFragments() {
		maxID = max(maxID, f.GetId())
	}
	if m.MaxFragmentId == nil && len(m.GetFragments()) == 0 {
		maxID = 0
	}
	compact := len(m.GetFragments())+1 > n.opts.CompactAfter
	for _, f := range m.GetFragments() {
		rows := deleted[f.GetId()]
		fd := s.frags[f.GetId()]
		switch {
		case compact:
			removed = append(removed, f.GetId())
		case len(rows) == 0:
			kept = append(kept, f)
		case fd != nil && len(rows) >= len(fd.live):
			removed = append(removed, f.GetId())
		default:
			nf, _, err := lance.MergeDeletions(ctx, store, f, readVersion, rows)
			if err != nil {
				return fmt.Errorf("namespace: __manifest deletion: %w", err)
			}
			updated = append(updated, nf)
			kept = append(kept, nf)
		}
	}

	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if compact {
		// Every live row that survives, fragment by fragment: one fragment replaces them all.
		gone := map[*row]bool{}
		for _, r := range ch.deletes {
			gone[r] = true
		}
		for _, f := range m.GetFragments() {
			fd := s.frags[f.GetId()]
			if fd == nil {
				return fmt.Errorf("namespace: __manifest fragment %d was not read", f.GetId())
			}
			dels := deleted[f.GetId()]
			for _, i := range fd.live {
				if !slices.Contains(dels, uint32(i)) {
					recs = append(recs, fd.rec.NewSlice(int64(i), int64(i+1)))
				}
			}
		}
		next.Indices = nil // indices cover fragments that no longer exist; LanceDB rebuilds them
		updated = nil
		kept = nil
	}
	if len(ch.inserts) > 0 {
		rec, err := buildRows(s.schema, ch.inserts)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	var added []*tablepb.DataFragment
	if len(recs) > 0 {
		frag, err := n.writeFragment(ctx, s, m, recs, maxID+1)
		if err != nil {
			return err
		}
		maxID++
		added = append(added, frag)
		kept = append(kept, frag)
	}
	m.Fragments = kept
	m.MaxFragmentId = proto.Uint32(uint32(maxID))

	switch {
	case len(removed) == 0 && len(updated) == 0:
		txn.Operation = &tablepb.Transaction_Append_{Append: &tablepb.Transaction_Append{Fragments: added}}
	case len(added) == 0:
		ids := make([]string, 0, len(ch.deletes))
		for _, r := range ch.deletes {
			ids = append(ids, "'"+strings.ReplaceAll(r.ObjectID, "'", "''")+"'")
		}
		txn.Operation = &tablepb.Transaction_Delete_{Delete: &tablepb.Transaction_Delete{
			UpdatedFragments: updated, DeletedFragmentIds: removed,
			Predicate: "object_id IN (" + strings.Join(ids, ", ") + ")",
		}}
	default:
		txn.Operation = &tablepb.Transaction_Update_{Update: &tablepb.Transaction_Update{
			RemovedFragmentIds: removed, UpdatedFragments: updated, NewFragments: added,
		}}
	}
	return nil
}

// writeFragment writes recs (rows of the manifest schema) as one Lance 2.1 data file.
func (n *Namespace) writeFragment(ctx context.Context, s *snapshot, m *tablepb.Manifest, recs []arrow.RecordBatch, id uint64) (*tablepb.DataFragment, error) {
	var buf bytes.Buffer
	w, err := lancefile.NewWriter(&buf, s.schema, lancefile.WriterOptions{Fields: m.GetFields()})
	if err != nil {
		return nil, fmt.Errorf("namespace: __manifest writer: %w", err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			return nil, fmt.Errorf("namespace: __manifest write: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("namespace: __manifest write: %w", err)
	}
	return putDataFile(ctx, n.manifest.Store(), &buf, w, id)
}

// buildRows makes a record of schema holding rows.
func buildRows(schema *arrow.Schema, rows []newRow) (arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for ci, f := range schema.Fields() {
		var err error
		switch f.Name {
		case colObjectID, colObjectType, colLocation, colMetadata:
			b := array.NewStringBuilder(mem)
			for _, r := range rows {
				var v *string
				switch f.Name {
				case colObjectID:
					v = &r.ObjectID
				case colObjectType:
					v = &r.Type
				case colLocation:
					v = r.Location
				case colMetadata:
					v = r.Metadata
				}
				if v == nil {
					b.AppendNull()
				} else {
					b.Append(*v)
				}
			}
			cols[ci] = b.NewArray()
			b.Release()
		case colBaseObjects:
			b := array.NewBuilder(mem, f.Type)
			lb, ok := b.(*array.ListBuilder)
			if !ok {
				b.Release()
				return nil, fmt.Errorf("namespace: __manifest column base_objects is %s, not a list", f.Type)
			}
			vb, ok := lb.ValueBuilder().(*array.StringBuilder)
			if !ok {
				b.Release()
				return nil, fmt.Errorf("namespace: __manifest column base_objects is %s, not a list of strings", f.Type)
			}
			for _, r := range rows {
				if r.BaseObjects == nil {
					lb.AppendNull()
					continue
				}
				lb.Append(true)
				for _, o := range r.BaseObjects {
					vb.Append(o)
				}
			}
			cols[ci] = lb.NewArray()
			b.Release()
		default:
			cols[ci], err = otherColumn(schema, ci, rows)
			if err != nil {
				return nil, err
			}
		}
	}
	for ci, f := range schema.Fields() {
		if !f.Nullable && cols[ci].NullN() > 0 {
			return nil, nserr.Unsupportedf("the catalog manifest has a required column %q lancecat does not know how to fill", f.Name)
		}
	}
	return array.NewRecordBatch(schema, cols, int64(len(rows))), nil
}

// otherColumn is a column lancecat does not interpret: copied from each row's like, else null.
func otherColumn(schema *arrow.Schema, ci int, rows []newRow) (arrow.Array, error) {
	mem := memory.DefaultAllocator
	parts := make([]arrow.Array, 0, len(rows))
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, r := range rows {
		if r.like != nil {
			src := r.like.frag.rec.Column(ci)
			if arrow.TypeEqual(src.DataType(), schema.Field(ci).Type) {
				parts = append(parts, array.NewSlice(src, int64(r.like.index), int64(r.like.index+1)))
				continue
			}
		}
		parts = append(parts, array.MakeArrayOfNull(mem, schema.Field(ci).Type, 1))
	}
	return array.Concatenate(parts, mem)
}

// writable refuses a manifest table this package cannot write correctly.
func writable(m *tablepb.Manifest) error {
	known := lance.FlagDeletionFiles | lance.FlagUseV2FormatDeprecated | lance.FlagTableConfig | lance.FlagDisableTransactionFile
	if f := (m.GetReaderFeatureFlags() | m.GetWriterFeatureFlags()) &^ known; f != 0 {
		return nserr.Unsupportedf("the catalog manifest uses Lance features (flags %#x) lancecat cannot write", f)
	}
	if v := m.GetDataFormat().GetVersion(); v != "2.1" {
		return nserr.Unsupportedf("the catalog manifest stores Lance %s data files; lancecat writes 2.1", v)
	}
	return nil
}

// setFlags recomputes the feature flags from the manifest's content, as Lance does on every commit.
func setFlags(m *tablepb.Manifest) {
	var reader, writer uint64
	for _, f := range m.GetFragments() {
		if f.GetDeletionFile() != nil {
			reader |= lance.FlagDeletionFiles
			writer |= lance.FlagDeletionFiles
			break
		}
	}
	if len(m.GetConfig()) > 0 {
		writer |= lance.FlagTableConfig
	}
	writer |= m.GetWriterFeatureFlags() & lance.FlagDisableTransactionFile
	m.ReaderFeatureFlags, m.WriterFeatureFlags = reader, writer
}
