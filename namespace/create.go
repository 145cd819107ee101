package namespace

// CreateTable: a table created from Arrow records the catalog writes itself (the spec's
// create_table with an Arrow IPC body). The rows become one Lance 2.1 data file and one
// fragment; version 1 (or, on Overwrite of an existing table, the next version) is published
// with put-if-absent like any Lance commit.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	lancefile "github.com/lancecat/lancecat/lance/file"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// NewTable is a create_table request: the table's rows (possibly none) and where it goes.
type NewTable struct {
	Mode       string // Create (""), ExistOk or Overwrite
	Location   string // "" picks one
	Properties map[string]string
	Schema     *arrow.Schema
	Records    []arrow.RecordBatch
}

// CreateTable creates table id holding nt's rows and returns it with the version written.
// ExistOk returns an existing table untouched; Overwrite replaces an existing table's content
// (schema included) with a new version.
func (n *Namespace) CreateTable(ctx context.Context, id ident.ID, nt NewTable) (*Table, uint64, error) {
	if nt.Schema == nil || nt.Schema.NumFields() == 0 {
		return nil, 0, nserr.InvalidInputf("the table's schema has no columns")
	}
	fields, err := lancefile.LanceFields(nt.Schema, 0)
	if err != nil {
		return nil, 0, nserr.InvalidInputf("the table's schema: %v", err)
	}
	if nt.Mode == ModeExistOk || nt.Mode == ModeOverwrite {
		t, err := n.DescribeTable(ctx, id)
		switch {
		case err == nil && nt.Mode == ModeExistOk:
			st, err := n.State(ctx, t, DescribeOptions{})
			if err != nil || st == nil {
				return t, 0, err
			}
			return t, st.Version, nil
		case err == nil:
			ver, err := n.overwrite(ctx, t, fields, nt)
			return t, ver, err
		case !nserr.Is(err, nserr.ErrTableNotFound):
			return nil, 0, err
		}
	}
	t, err := n.DeclareTable(ctx, id, nt.Location, nt.Properties)
	if err != nil {
		return nil, 0, err
	}
	ds := n.Dataset(t)
	frag, err := n.writeData(ctx, ds, fields, nt, 0)
	if err == nil {
		m := newManifest(fields, nt.Schema, 1, frag, 0)
		txn := &tablepb.Transaction{Uuid: uuid.NewString(), Operation: &tablepb.Transaction_Overwrite_{
			Overwrite: &tablepb.Transaction_Overwrite{Schema: fields, SchemaMetadata: m.GetSchemaMetadata(), Fragments: fragments(frag)},
		}}
		_, err = ds.PutManifest(ctx, lance.NamingV2, &lance.ManifestFile{Manifest: m, Transaction: txn})
	}
	if err != nil {
		// Nothing was published: take the declaration back, so the name can be used again.
		cleanup := context.WithoutCancel(ctx)
		if _, uerr := n.unlink(cleanup, id); uerr == nil {
			_ = n.deleteDir(cleanup, t.Location)
		}
		if errors.Is(err, lance.ErrVersionExists) {
			return nil, 0, nserr.TableAlreadyExistsf("table %s was created concurrently", quoteID(id))
		}
		return nil, 0, err
	}
	_ = lance.WriteVersionHint(ctx, ds.Store(), 1)
	_ = n.root.Delete(ctx, t.Location+"/"+ReservedMarker)
	return t, 1, nil
}

// overwrite publishes nt's content as the version after t's latest (version 1 for a table
// that was only declared).
func (n *Namespace) overwrite(ctx context.Context, t *Table, fields []*filepb.Field, nt NewTable) (uint64, error) {
	ds := n.Dataset(t)
	for attempt := 0; attempt < lance.DefaultCommitRetries; attempt++ {
		head, err := ds.OpenLatest(ctx)
		version, scheme, maxFrag := uint64(1), lance.NamingV2, uint64(0)
		switch {
		case err == nil:
			version, scheme = head.Number()+1, head.Location.Scheme
			maxFrag = uint64(head.Manifest().GetMaxFragmentId())
			for _, f := range head.Manifest().GetFragments() {
				maxFrag = max(maxFrag, f.GetId())
			}
			if head.Manifest().MaxFragmentId != nil || len(head.Manifest().GetFragments()) > 0 {
				maxFrag++
			}
		case !errors.Is(err, lance.ErrDatasetNotFound):
			return 0, tableErr(t, err)
		}
		frag, err := n.writeData(ctx, ds, fields, nt, maxFrag)
		if err != nil {
			return 0, err
		}
		m := newManifest(fields, nt.Schema, version, frag, maxFrag)
		if head != nil {
			m.Config = head.Manifest().GetConfig()
			m.NextRowId = head.Manifest().GetNextRowId()
		}
		txn := &tablepb.Transaction{ReadVersion: version - 1, Uuid: uuid.NewString(), Operation: &tablepb.Transaction_Overwrite_{
			Overwrite: &tablepb.Transaction_Overwrite{Schema: fields, SchemaMetadata: m.GetSchemaMetadata(), Fragments: fragments(frag)},
		}}
		_, err = ds.PutManifest(ctx, scheme, &lance.ManifestFile{Manifest: m, Transaction: txn})
		if err == nil {
			_ = lance.WriteVersionHint(ctx, ds.Store(), version)
			_ = n.root.Delete(ctx, t.Location+"/"+ReservedMarker)
			return version, nil
		}
		if !errors.Is(err, lance.ErrVersionExists) {
			return 0, err
		}
	}
	return 0, nserr.ConcurrentModificationf("table %s kept changing while it was overwritten; try again", quoteID(t.ID))
}

// writeData writes nt's records as one data file of fragment id; nil when there are no rows.
func (n *Namespace) writeData(ctx context.Context, ds *lance.Dataset, fields []*filepb.Field, nt NewTable, id uint64) (frag *tablepb.DataFragment, err error) {
	var rows int64
	for _, r := range nt.Records {
		rows += r.NumRows()
	}
	if rows == 0 {
		return nil, nil
	}
	defer func() {
		// The records are validated before they get here; a writer panic on a value it cannot
		// encode is still the request's problem, not the server's.
		if p := recover(); p != nil {
			frag, err = nil, nserr.InvalidInputf("the table's rows cannot be written: %v", p)
		}
	}()
	var buf bytes.Buffer
	w, err := lancefile.NewWriter(&buf, nt.Schema, lancefile.WriterOptions{Fields: fields})
	if err != nil {
		return nil, nserr.Unsupportedf("the table's schema cannot be written as Lance: %v", err)
	}
	for _, r := range nt.Records {
		if r.NumRows() == 0 {
			continue
		}
		if err := w.Write(r); err != nil {
			return nil, nserr.InvalidInputf("the table's rows cannot be written: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("namespace: write data file: %w", err)
	}
	return putDataFile(ctx, ds.Store(), &buf, w, id)
}

// putDataFile uploads a finished in-memory Lance 2.1 file (buf, written by w) as a new data file
// of the dataset in store, and describes it as fragment id.
func putDataFile(ctx context.Context, store lance.ObjectStore, buf *bytes.Buffer, w *lancefile.Writer, id uint64) (*tablepb.DataFragment, error) {
	name := uuid.NewString() + ".lance"
	if _, err := store.Put(ctx, lance.DataDir+name, bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
		return nil, fmt.Errorf("namespace: write %s%s: %w", lance.DataDir, name, err)
	}
	cols := w.ColumnFieldIDs()
	indices := make([]int32, len(cols))
	for i := range indices {
		indices[i] = int32(i)
	}
	return &tablepb.DataFragment{
		Id: id,
		Files: []*tablepb.DataFile{{
			Path: name, Fields: cols, ColumnIndices: indices,
			FileMajorVersion: 2, FileMinorVersion: 1, FileSizeBytes: uint64(buf.Len()),
		}},
		PhysicalRows: w.NumRows(),
	}, nil
}

func fragments(f *tablepb.DataFragment) []*tablepb.DataFragment {
	if f == nil {
		return nil
	}
	return []*tablepb.DataFragment{f}
}

// newManifest is the manifest of a version holding exactly frag (nil: no rows).
func newManifest(fields []*filepb.Field, schema *arrow.Schema, version uint64, frag *tablepb.DataFragment, maxFrag uint64) *tablepb.Manifest {
	m := &tablepb.Manifest{
		Fields:        fields,
		Fragments:     fragments(frag),
		Version:       version,
		WriterVersion: &tablepb.Manifest_WriterVersion{Library: lance.WriterLibrary, Version: lance.WriterVersion},
		Timestamp:     timestamppb.New(time.Now().UTC()),
		DataFormat:    &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.1"},
	}
	if frag != nil {
		m.MaxFragmentId = proto.Uint32(uint32(frag.GetId()))
	} else if maxFrag > 0 {
		m.MaxFragmentId = proto.Uint32(uint32(maxFrag - 1))
	}
	if md := schema.Metadata(); md.Len() > 0 {
		m.SchemaMetadata = map[string][]byte{}
		for i, k := range md.Keys() {
			m.SchemaMetadata[k] = []byte(md.Values()[i])
		}
	}
	return m
}
