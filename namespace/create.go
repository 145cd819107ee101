package namespace

// CreateTable: a table created from Arrow records the catalog writes itself (the spec's
// create_table with an Arrow IPC body). The rows become one Lance 2.1 data file and one
// fragment; version 1 (or, on Overwrite of an existing table, the next version) is published
// with put-if-absent like any Lance commit.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// createAttempts bounds how often CreateTable in mode ExistOk or Overwrite re-reads a name
// another writer created or dropped meanwhile.
const createAttempts = 8

// CreateTable creates table id holding nt's rows and returns it with the version written.
// ExistOk returns an existing table untouched; Overwrite replaces an existing table's content
// (schema included) with a new version. Neither ever answers that the table exists: losing a
// race to another creator of the name re-reads it and answers as if it had been there.
//
// A new table is written before it is published: its dataset (data file, version 1, version
// hint) goes to a location no entry uses, and only then is the manifest row committed. A crash
// in between leaves bytes no entry references (the orphan scan's to report), never an entry
// without a dataset, and the name stays free.
func (n *Namespace) createTable(ctx context.Context, id ident.ID, nt catalog.NewTable) (*entry, uint64, error) {
	oid, err := objectID(id)
	if err != nil {
		return nil, 0, err
	}
	if len(id) == 0 {
		return nil, 0, nserr.InvalidInputf("a table id needs at least one part")
	}
	if nt.Schema == nil || nt.Schema.NumFields() == 0 {
		return nil, 0, nserr.InvalidInputf("the table's schema has no columns")
	}
	fields, err := lancefile.LanceFields(nt.Schema, 0)
	if err != nil {
		return nil, 0, nserr.InvalidInputf("the table's schema: %v", err)
	}
	location := ""
	if nt.Location != "" {
		if location, err = n.tableLocation(nt.Location); err != nil {
			return nil, 0, err
		}
	}
	for attempt := 0; ; attempt++ {
		if nt.Mode == catalog.ModeExistOk || nt.Mode == catalog.ModeOverwrite {
			t, err := n.describeTable(ctx, id)
			if err == nil && t.inManifest {
				// A row whose location holds neither a version nor the declared marker is
				// what a crash of an older lancecat left: not a table, replaced below.
				if ok, berr := n.backed(ctx, t.Location); berr != nil {
					return nil, 0, berr
				} else if !ok {
					err = nserr.TableNotFoundf("table %s not found", quoteID(id))
				}
			}
			switch {
			case err == nil && nt.Mode == catalog.ModeExistOk:
				st, err := n.handle(t).State(ctx, catalog.DescribeOptions{})
				if err != nil || st == nil {
					return t, 0, err
				}
				return t, st.Version, nil
			case err == nil:
				ver, err := n.overwrite(ctx, t, fields, nt)
				if nserr.Is(err, nserr.ErrTableNotFound) {
					if attempt < createAttempts {
						continue // dropped while it was overwritten: create it
					}
					// A create never answers that the table is missing: it kept being dropped.
					return nil, 0, nserr.ConcurrentModificationf("table %s kept being dropped while it was overwritten (mode %s); try again", quoteID(id), nt.Mode)
				}
				return t, ver, err
			case !nserr.Is(err, nserr.ErrTableNotFound):
				return nil, 0, err
			}
		}
		t, ver, err := n.createNew(ctx, id, oid, location, fields, nt)
		if nserr.Is(err, nserr.ErrTableAlreadyExists) && (nt.Mode == catalog.ModeExistOk || nt.Mode == catalog.ModeOverwrite) {
			if attempt < createAttempts {
				continue // created concurrently: answer as the mode says for an existing table
			}
			return nil, 0, nserr.ConcurrentModificationf("table %s kept being created and dropped while it was created (mode %s); try again", quoteID(id), nt.Mode)
		}
		return t, ver, err
	}
}

// createNew writes table id's dataset at a fresh location (or the location given), then commits
// its manifest row. What it wrote is taken back when the row cannot be committed.
func (n *Namespace) createNew(ctx context.Context, id ident.ID, oid, location string, fields []*filepb.Field, nt catalog.NewTable) (*entry, uint64, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return nil, 0, err
	}
	if err := n.checkFree(ctx, s, id, oid); err != nil {
		return nil, 0, err
	}
	if location != "" {
		// Refused before anything is written into another table's directory; publishEntry
		// checks again in its commit for the racing case.
		if err := n.checkUnheld(ctx, s, location, oid); err != nil {
			return nil, 0, err
		}
	}
	loc, release, err := n.claimLocation(ctx, s, id, oid, location)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	t := n.table(id, nil, loc)
	t.Properties = clonedProps(nt.Properties)
	ds := n.Dataset(t.Entry)
	var written []storage.ObjectInfo // keys relative to the table location, taken back on failure
	takeBack := func() { n.takeBack(context.WithoutCancel(ctx), loc, written...) }
	frag, err := n.writeData(ctx, ds, fields, nt, 0)
	if err != nil {
		return nil, 0, err
	}
	if frag != nil {
		written = append(written, storage.ObjectInfo{Key: lance.DataDir + frag.GetFiles()[0].GetPath()})
	}
	m := newManifest(fields, nt.Schema, 1, frag, 0)
	txn := &tablepb.Transaction{Uuid: uuid.NewString(), Operation: &tablepb.Transaction_Overwrite_{
		Overwrite: &tablepb.Transaction_Overwrite{Schema: fields, SchemaMetadata: m.GetSchemaMetadata(), Fragments: fragments(frag)},
	}}
	ml, err := ds.PutManifest(ctx, lance.NamingV2, &lance.ManifestFile{Manifest: m, Transaction: txn})
	if err != nil {
		takeBack()
		if errors.Is(err, lance.ErrVersionExists) {
			return nil, 0, nserr.TableAlreadyExistsf("table %s was created concurrently", quoteID(id))
		}
		return nil, 0, err
	}
	written = append(written, storage.ObjectInfo{Key: ml.Key, ETag: ml.ETag})
	// The hint goes before the row: once the row is visible, a drop lists every byte.
	if lance.WriteVersionHint(ctx, ds.Store(), 1) == nil {
		written = append(written, storage.ObjectInfo{Key: lance.VersionHintKey})
	}
	n.testHook(hookBeforePublish, t)
	if err := n.publishEntry(ctx, t, oid, loc, nt.Properties); err != nil {
		takeBack()
		return nil, 0, err
	}
	// From here on the table is public: an overwrite, a rename, a drop (and a create of the name
	// after it) may already have changed its directory, legitimately. Nothing may be taken back.
	n.testHook(hookAfterPublish, t)
	return t, 1, nil
}

// checkFree refuses to create table id when its name is taken in s (a row that is backed by a
// dataset or a declaration, or a root directory table in compatibility mode) or its namespace
// is missing.
func (n *Namespace) checkFree(ctx context.Context, s *snapshot, id ident.ID, oid string) error {
	if err := s.requireNamespace(id.Parent()); err != nil {
		return err
	}
	if r := s.rows[oid]; r != nil {
		ghost, err := n.ghost(ctx, r)
		if err != nil {
			return err
		}
		if !ghost {
			return nserr.TableAlreadyExistsf("table %s already exists", quoteID(id))
		}
	}
	return n.checkNoV1(ctx, id)
}

// publishEntry commits table t's manifest row at loc, the last step of a create or a declare:
// the name must still be free (a ghost row of it is replaced) and its namespace must exist.
func (n *Namespace) publishEntry(ctx context.Context, t *entry, oid, loc string, props map[string]string) error {
	_, err := n.commit(ctx, func(s *snapshot) (*change, error) {
		if err := s.requireNamespace(t.ID.Parent()); err != nil {
			return nil, err
		}
		ch := &change{}
		if r := s.rows[oid]; r != nil {
			ghost, err := n.ghost(ctx, r)
			if err != nil {
				return nil, err
			}
			if !ghost {
				return nil, nserr.TableAlreadyExistsf("table %s already exists", quoteID(t.ID))
			}
			ch.deletes = append(ch.deletes, r)
		}
		// One holder per location, checked in the commit's plan: of two racing creates, declares
		// or registers of one location, the loser re-plans and sees the winner. A ghost row of
		// this id, replaced in this commit, lets go of its location.
		if err := n.checkUnheld(ctx, s, loc, oid); err != nil {
			return nil, err
		}
		t.ManagedVersioning = s.managed()
		ch.inserts = append(ch.inserts, newRow{ObjectID: oid, Type: TypeTable, Location: &loc, Metadata: encodeProps(props)})
		return ch, nil
	})
	if err != nil {
		return err
	}
	t.inManifest = true
	return nil
}

// takeBack deletes what a create or declare that failed wrote at loc (keys relative to it, each
// with the ETag written, or "" for a key no one else writes, such as a fresh data file), newest
// first. A key another writer replaced since (its ETag differs) is theirs and is kept. While an
// entry references loc (a rename of the directory table <name>.lance adopted it), what this
// writer published there is that entry's now and is kept whole; if nothing of it was published
// (or it is gone), only its fresh data files go.
func (n *Namespace) takeBack(ctx context.Context, loc string, written ...storage.ObjectInfo) {
	ours := func(w storage.ObjectInfo) bool {
		info, err := n.root.Stat(ctx, loc+"/"+w.Key)
		return err == nil && info.ETag == w.ETag
	}
	s, err := n.snapshot(ctx)
	if referenced := err != nil || s.locations[loc]; referenced {
		for _, w := range written {
			if w.ETag != "" && ours(w) {
				return
			}
		}
		for _, w := range written {
			if w.ETag == "" && strings.HasPrefix(w.Key, lance.DataDir) {
				_ = n.root.Delete(ctx, loc+"/"+w.Key)
			}
		}
		return
	}
	for i := len(written) - 1; i >= 0; i-- {
		if written[i].ETag != "" && !ours(written[i]) {
			continue
		}
		_ = n.root.Delete(ctx, loc+"/"+written[i].Key)
	}
}

// ghost reports whether table row r is backed by nothing: its location holds neither a Lance
// version nor the declared marker. Only an interrupted create of an older lancecat (which
// committed the row first) or bytes deleted behind the catalog's back leave one; it is not a
// table (describe and exists answer not found) and its name can be created again.
func (n *Namespace) ghost(ctx context.Context, r *row) (bool, error) {
	if r.Type != TypeTable || r.Location == nil {
		return false, nil
	}
	ok, err := n.backed(ctx, *r.Location)
	return !ok, err
}

// backed reports whether directory loc holds a Lance version or the declared marker.
func (n *Namespace) backed(ctx context.Context, loc string) (bool, error) {
	_, err := lance.NewDataset(storage.Sub(n.root, loc+"/")).LatestLocation(ctx)
	switch {
	case err == nil:
		return true, nil
	case !errors.Is(err, lance.ErrDatasetNotFound):
		return false, fmt.Errorf("namespace: list %s: %w", loc, err)
	}
	_, err = n.root.Stat(ctx, loc+"/"+ReservedMarker)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, storage.ErrNotFound):
		return false, nil
	}
	return false, fmt.Errorf("namespace: stat %s: %w", loc, err)
}

// CreatingMarker marks a root <name>.lance directory a create or declare is filling: while it is
// there the directory is no table of its own in compatibility mode (a drop or rename of that name
// cannot take the half-written dataset), and a crash leaves it hidden, never half-made.
//
// It is what makes "write, then publish" safe without any check after the commit: until the row
// is committed, no one but its writer can reach the new table's directory (a hashed directory is
// known to no one, a <name>.lance one is hidden by the marker), and once the row is committed the
// table is public, so whatever happens to its directory from then on (an overwrite deleting the
// declared marker, a drop, a create of the name after it) is another operation's, never a reason
// to take the row back.
const CreatingMarker = ".lance-creating"

// claimLocation picks the directory of a new table (location, when given, is used as it is).
// A root <name>.lance directory is claimed with CreatingMarker, put if absent, whether it was
// picked or given: when another writer holds it, a picked one is swapped for a hashed directory of
// the table's own, a given one is refused (as is a given one that is a root table of its own
// already). release drops the claim once the entry is committed (or the create failed).
func (n *Namespace) claimLocation(ctx context.Context, s *snapshot, id ident.ID, oid, location string) (loc string, release func(), err error) {
	release = func() {}
	loc = location
	if loc == "" {
		if loc, err = n.freshLocation(ctx, s, id, oid); err != nil {
			return "", release, err
		}
	}
	if !n.isV1Dir(loc) {
		return loc, release, nil
	}
	if location != "" {
		if live, err := n.v1Exists(ctx, loc); err != nil {
			return "", release, err
		} else if live {
			return "", release, nserr.Wrap(nserr.TableAlreadyExists, ErrLocationInUse,
				fmt.Sprintf("location %q is already held by another table: a location belongs to one table", loc))
		}
	}
	token := []byte(uuid.NewString())
	info, err := n.root.PutIfAbsent(ctx, loc+"/"+CreatingMarker, bytes.NewReader(token), int64(len(token)))
	switch {
	case errors.Is(err, storage.ErrExists) && location == "":
		return hashedLocation(oid), release, nil
	case errors.Is(err, storage.ErrExists):
		return "", release, nserr.Wrap(nserr.TableAlreadyExists, ErrLocationInUse,
			fmt.Sprintf("location %q is being filled by another create or declare: a location belongs to one table", loc))
	case err != nil:
		return "", release, fmt.Errorf("namespace: write %s marker: %w", CreatingMarker, err)
	}
	key := loc + "/" + CreatingMarker
	return loc, func() {
		cleanup := context.WithoutCancel(ctx)
		if cur, err := n.root.Stat(cleanup, key); err == nil && cur.ETag == info.ETag {
			_ = n.root.Delete(cleanup, key)
		}
	}, nil
}

// isV1Dir reports whether loc is a directory compatibility mode may take for a root table of its
// own (<name>.lance at the root).
func (n *Namespace) isV1Dir(loc string) bool {
	name, ok := strings.CutSuffix(loc, ".lance")
	return ok && !n.opts.DisableCompatibility && name != "" && !strings.Contains(name, "/") && !strings.Contains(name, Delimiter)
}

// hookPoint is a point of a create, declare or overwrite where a test may run another operation.
type hookPoint int

const (
	hookBeforePublish hookPoint = iota // the dataset (or marker) is written, the row not yet committed
	hookAfterPublish                   // the row is committed, the create or declare not yet answered
	hookOverwritten                    // an overwrite published its version, not yet checked for a drop
	hookUnlinked                       // a drop unlinked its entry (if any), its directory not yet deleted
)

func (n *Namespace) testHook(p hookPoint, t *entry) {
	if h := n.hooks[p]; h != nil {
		h(t)
	}
}

func hashedLocation(oid string) string { return fmt.Sprintf("%08x_%s", rand.Uint32(), oid) }

// freshLocation picks the directory of a new table: newLocation's choice, except that a root
// table's <name>.lance directory is used only while no entry references it and it holds nothing
// (a deregistered table's bytes, leftovers of a crash, a renamed table's data); otherwise a
// hashed directory of its own.
func (n *Namespace) freshLocation(ctx context.Context, s *snapshot, id ident.ID, oid string) (string, error) {
	loc := n.newLocation(id, oid)
	if len(id) != 1 || loc != v1Location(id[0]) {
		return loc, nil
	}
	// Held at, inside or around by an entry registered there under another name: not ours.
	if n.holder(s, loc, oid) == nil {
		page, err := n.root.List(ctx, loc+"/", storage.ListOptions{Limit: 1})
		if err != nil {
			return "", fmt.Errorf("namespace: list %s: %w", loc, err)
		}
		if len(page.Objects) == 0 {
			return loc, nil
		}
	}
	return hashedLocation(oid), nil
}

// declared answers State for table t whose dataset has no version: a declared table (nil), or,
// without the declared marker either, a ghost that is not a table.
func (n *Namespace) declared(ctx context.Context, t *entry) error {
	ok, err := n.backed(ctx, t.Location)
	if err != nil {
		return err
	}
	if !ok {
		return nserr.TableNotFoundf("table %s not found (its entry has neither a dataset nor a declaration: a create that did not finish; it can be created again)", quoteID(t.ID))
	}
	return nil
}

// overwrite publishes nt's content as the version after t's latest (version 1 for a table
// that was only declared).
func (n *Namespace) overwrite(ctx context.Context, t *entry, fields []*filepb.Field, nt catalog.NewTable) (uint64, error) {
	ds := n.Dataset(t.Entry)
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
		case errors.Is(err, storage.ErrNotFound):
			// A manifest listed a moment ago is gone: a drop is deleting the directory.
			return 0, nserr.TableNotFoundf("table %s was dropped while it was overwritten", quoteID(t.ID))
		case !errors.Is(err, lance.ErrDatasetNotFound):
			return 0, tableErr(t, err)
		}
		frag, err := n.writeData(ctx, ds, fields, nt, maxFrag)
		if err != nil {
			return 0, err
		}
		// What this attempt wrote, relative to the table location: a fresh data file, then its
		// version (with the ETag written: once a drop deleted it, a table created at the same
		// directory may have written a version of that number, which is not this attempt's).
		var written []storage.ObjectInfo
		if frag != nil {
			written = append(written, storage.ObjectInfo{Key: lance.DataDir + frag.GetFiles()[0].GetPath()})
		}
		takeBack := func() {
			cleanup := context.WithoutCancel(ctx)
			for _, w := range written {
				if w.ETag != "" {
					if cur, err := n.root.Stat(cleanup, t.Location+"/"+w.Key); err != nil || cur.ETag != w.ETag {
						continue
					}
				}
				_ = n.root.Delete(cleanup, t.Location+"/"+w.Key)
			}
		}
		m := newManifest(fields, nt.Schema, version, frag, maxFrag)
		if head != nil {
			m.Config = head.Manifest().GetConfig()
			m.NextRowId = head.Manifest().GetNextRowId()
		}
		txn := &tablepb.Transaction{ReadVersion: version - 1, Uuid: uuid.NewString(), Operation: &tablepb.Transaction_Overwrite_{
			Overwrite: &tablepb.Transaction_Overwrite{Schema: fields, SchemaMetadata: m.GetSchemaMetadata(), Fragments: fragments(frag)},
		}}
		ml, err := ds.PutManifest(ctx, scheme, &lance.ManifestFile{Manifest: m, Transaction: txn})
		if err == nil {
			written = append(written, storage.ObjectInfo{Key: ml.Key, ETag: ml.ETag})
			n.testHook(hookOverwritten, t)
			_ = lance.WriteVersionHint(ctx, ds.Store(), version)
			_ = n.root.Delete(ctx, t.Location+"/"+ReservedMarker)
			// A drop that deleted the directory while this version was written would leave
			// these bytes behind under no entry, and answer success for a table that is gone.
			if gone, err := n.dropped(ctx, t, ml.Key); err != nil {
				return 0, err
			} else if gone {
				takeBack()
				_ = n.root.Delete(context.WithoutCancel(ctx), t.Location+"/"+lance.VersionHintKey)
				return 0, nserr.TableNotFoundf("table %s was dropped while it was overwritten", quoteID(t.ID))
			}
			return version, nil
		}
		takeBack()
		if !errors.Is(err, lance.ErrVersionExists) {
			return 0, err
		}
	}
	return 0, nserr.ConcurrentModificationf("table %s kept changing while it was overwritten; try again", quoteID(t.ID))
}

// dropped reports whether table t was dropped after version key was written at its location:
// the version is gone (deleted with the directory), or no entry references the location any
// more. A rename keeps the location referenced: the version then belongs to the renamed table.
func (n *Namespace) dropped(ctx context.Context, t *entry, key string) (bool, error) {
	if _, err := n.root.Stat(ctx, t.Location+"/"+key); errors.Is(err, storage.ErrNotFound) {
		return true, nil
	} else if err != nil {
		return false, fmt.Errorf("namespace: stat %s/%s: %w", t.Location, key, err)
	}
	if !t.inManifest {
		return false, nil
	}
	s, err := n.snapshot(ctx)
	if err != nil {
		return false, err
	}
	return !s.locations[t.Location], nil
}

// writeData writes nt's rows as one data file of fragment id, streamed from nt.Rows into the
// store as they are read; nil when there are no rows. A create that writes again (it lost a race
// and writes at the winner's location) opens the rows again.
func (n *Namespace) writeData(ctx context.Context, ds *lance.Dataset, fields []*filepb.Field, nt catalog.NewTable, id uint64) (frag *tablepb.DataFragment, err error) {
	if nt.Rows == nil {
		return nil, nil
	}
	rs, err := nt.Rows()
	if err != nil {
		return nil, err
	}
	if r, ok := rs.(interface{ Release() }); ok {
		defer r.Release()
	}
	if !rs.Schema().Equal(nt.Schema) {
		return nil, nserr.InvalidInputf("the table's rows are of schema %v, not the table's %v", rs.Schema(), nt.Schema)
	}
	// The file streams to the store as it is written (a pipe into Put), started with the first
	// row: a create with a 100 MB body held the whole encoded file in a bytes.Buffer besides the
	// body and its records. The file is a new uuid name under data/, referenced by nothing until
	// the manifest commits, so a failure or crash midway (a body that turns out malformed or too
	// large halfway) leaves no half-made table (the upload of a failed write is aborted; the local
	// store stages and renames, S3 drops a body that ends in an error).
	name := uuid.NewString() + ".lance"
	var (
		w        *lancefile.Writer
		pw       *io.PipeWriter
		bw       *bufio.Writer
		uploaded chan error
	)
	start := func() error {
		pr, p := io.Pipe()
		pw, bw, uploaded = p, bufio.NewWriterSize(p, 1<<20), make(chan error, 1)
		go func() {
			_, err := ds.Store().Put(ctx, lance.DataDir+name, pr, -1)
			pr.CloseWithError(err) // nil: a plain close
			uploaded <- err
		}()
		var err error
		if w, err = lancefile.NewWriter(bw, nt.Schema, lancefile.WriterOptions{Fields: fields}); err != nil {
			return nserr.Unsupportedf("the table's schema cannot be written as Lance: %v", err)
		}
		return nil
	}
	fail := func(e error) (*tablepb.DataFragment, error) {
		if pw != nil {
			pw.CloseWithError(e)
			<-uploaded
		}
		return nil, e
	}
	defer func() {
		// The records are validated before they get here; a writer panic on a value it cannot
		// encode is still the request's problem, not the server's (and must not leave the upload
		// goroutine blocked).
		if p := recover(); p != nil {
			frag, err = fail(nserr.InvalidInputf("the table's rows cannot be written: %v", p))
		}
	}()
	for rs.Next() {
		r := rs.RecordBatch()
		if r.NumRows() == 0 {
			continue
		}
		if w == nil {
			if err := start(); err != nil {
				return fail(err)
			}
		}
		if err := w.Write(r); err != nil {
			return fail(nserr.InvalidInputf("the table's rows cannot be written: %v", err))
		}
	}
	if err := rs.Err(); err != nil {
		// The body's own error (malformed: InvalidInput; over a limit: 413), as it is.
		return fail(err)
	}
	if w == nil {
		return nil, nil
	}
	if err := w.Close(); err != nil {
		return fail(fmt.Errorf("namespace: write data file: %w", err))
	}
	if err := bw.Flush(); err != nil {
		return fail(fmt.Errorf("namespace: write data file: %w", err))
	}
	pw.Close()
	if err := <-uploaded; err != nil {
		return nil, fmt.Errorf("namespace: write %s%s: %w", lance.DataDir, name, err)
	}
	return dataFragment(name, w, id), nil
}

// putDataFile uploads a finished in-memory Lance 2.1 file (buf, written by w) as a new data file
// of the dataset in store, and describes it as fragment id (the namespace's own small manifest
// table; table data streams, see writeData).
func putDataFile(ctx context.Context, store storage.Writer, buf *bytes.Buffer, w *lancefile.Writer, id uint64) (*tablepb.DataFragment, error) {
	name := uuid.NewString() + ".lance"
	if _, err := store.Put(ctx, lance.DataDir+name, bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
		return nil, fmt.Errorf("namespace: write %s%s: %w", lance.DataDir, name, err)
	}
	return dataFragment(name, w, id), nil
}

// dataFragment describes the finished Lance 2.1 data file name (written by w) as fragment id.
func dataFragment(name string, w *lancefile.Writer, id uint64) *tablepb.DataFragment {
	cols := w.ColumnFieldIDs()
	indices := make([]int32, len(cols))
	for i := range indices {
		indices[i] = int32(i)
	}
	return &tablepb.DataFragment{
		Id: id,
		Files: []*tablepb.DataFile{{
			Path: name, Fields: cols, ColumnIndices: indices,
			FileMajorVersion: 2, FileMinorVersion: 1, FileSizeBytes: uint64(w.Size()),
		}},
		PhysicalRows: w.NumRows(),
	}
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
