package namespace

// declare_table and deregister_table inside a batch (batch_commit_tables), all or none with the
// batch's other entries. Both change the root's __manifest table, so the batch treats __manifest
// as one more table of the transaction:
//
//   - prepare: the entries are checked as the plain doors check them, against the manifest at
//     its latest version N (ids, the parent namespace, the name free, a given location inside
//     the root, never reserved, empty and held by no other table; a deregistered table is in
//     the manifest). A declared table's directory is made ready as the plain declare does (its
//     <name>.lance directory claimed with CreatingMarker, the ReservedMarker written; neither
//     makes it a table without a row), and version N+1 of __manifest, holding the batch's rows
//     inserted and deleted, is built (its new data and deletion files are fresh names nothing
//     references) and its manifest staged at _lancecat/staged/ (nothing is published), once
//     the batch holds the claim on N+1.
//   - claim: version N+1 of __manifest is claimed like any table version
//     (_lancecat/claims/__manifest/main/<N+1>), first of the batch's claims, so that plain
//     writers wait while the batch builds that version instead of moving the manifest on under
//     it (a batch then starts again: see CommitTableVersions).
//   - after the commit point, __manifest N+1 is published first, then the table versions and
//     deletions.
//
// Every other writer of __manifest (the namespace and table doors: commit.go) claims the version
// it is about to publish too (claimManifestDirect): a claim of the batch's transaction makes it
// wait while the batch runs, and finish the batch first (publish its version, then re-plan on
// it) once it committed; a direct writer's claim makes a batch that wants that version fail with
// ConcurrentModification before its commit point (it is re-prepared on the newer version a few
// times first). So no plain create or drop can slip a version in between a batch's commit point
// and its publishing, and a batch never publishes rows checked against a manifest that changed.
//
// Readers: the plain manifest reads (listings, describe) do not look for claims; they see the
// batch's rows once __manifest N+1 is published. Every reader that settles a committed batch
// (the table handle's latest read, the version doors, describe_transaction, every manifest
// writer) publishes its __manifest version before anything else of it, and the owner publishes
// it first too, so no reader sees a table version or deletion of the batch while its catalog
// rows are not visible yet, and once they are, every later settling read sees the rest: the
// batch becomes visible at the moment its __manifest version is published, whole.
//
// Compatibility mode: a root table that is only a <name>.lance directory (no manifest row) is
// deregistered by the plain door with a marker file in its directory, which cannot join the
// commit point (it would be visible before it, or lost after a crash): inside a batch it is
// refused with InvalidInput saying so. Declares in compatibility mode get rows like any other.
// A root without __manifest yet gets its empty version 1 first (as the first plain write does).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// stagedDir holds the staged __manifest versions of batches, under the reserved _lancecat/.
const stagedDir = "_lancecat/staged/"

// directClaim is the holder a plain manifest writer puts in the claim of the version it
// publishes. Direct writers share it (their put-if-absent of the manifest decides among them).
const directClaim = "direct"

// errManifestClaimed: the manifest version a plain writer wanted is held by a batch (running,
// or committed and settled just now): re-plan.
var errManifestClaimed = errors.New("namespace: the next catalog manifest version is claimed by a batch")

// errManifestMoved: the manifest changed (or another writer holds its next version) between a
// batch's prepare and its claim: the batch re-prepares.
var errManifestMoved = errors.New("namespace: the catalog manifest moved while a batch committed")

func manifestMoved() error {
	return nserr.Wrap(nserr.ConcurrentModification, errManifestMoved,
		"the catalog manifest changed while the batch was committing its declare_table/deregister_table operations; try again")
}

// txnTable is a table a transaction declares or deregisters.
type txnTable struct {
	Table    []string `json:"table"`
	Location string   `json:"location"`
}

// txnManifest is the __manifest version a transaction publishes.
type txnManifest struct {
	Version      uint64     `json:"version"`
	Staged       string     `json:"staged"` // relative to the root
	Final        string     `json:"final"`  // relative to the root
	Declared     []txnTable `json:"declared,omitempty"`
	Deregistered []txnTable `json:"deregistered,omitempty"`
}

func (m *txnManifest) entry() txnEntry {
	return txnEntry{Table: []string{ManifestTable}, Location: ManifestTable, Version: m.Version, Staged: m.Staged, Final: m.Final}
}

// catalogEntry is a declare or deregister entry of a batch.
type catalogEntry struct {
	index      int
	id         ident.ID
	declare    *catalog.TableDeclaration
	deregister bool
}

// preparedCatalog is the batch's staged __manifest version and what was made ready for it.
type preparedCatalog struct {
	n       *Namespace
	rec     txnManifest
	data    []byte
	tables  map[int]*entry // by entry index: the declared or deregistered table
	files   []string       // new files of the staged version, relative to the root
	markers []storage.ObjectInfo
	markLoc []string
	release []func()
	s       *snapshot // the version the batch was checked on
	ch      *change   // what the batch changes in it
}

// prepareCatalog checks the declare and deregister entries against the manifest's latest version
// and stages its next version holding them.
func (n *Namespace) prepareCatalog(ctx context.Context, entries []catalogEntry) (pc *preparedCatalog, err error) {
	pc = &preparedCatalog{n: n, tables: map[int]*entry{}}
	defer func() {
		if err != nil {
			pc.abort(context.WithoutCancel(ctx))
			pc = nil
		}
	}()
	s, err := n.snapshot(ctx)
	if err != nil {
		return pc, err
	}
	if s.ver == nil {
		if err := n.createManifest(ctx); err != nil {
			return pc, err
		}
		if s, err = n.snapshot(ctx); err != nil {
			return pc, err
		}
	}
	ch := &change{}
	byOID := map[string]int{}
	type held struct {
		loc string
		i   int
	}
	var locs []held
	for _, e := range entries {
		oid, err := objectID(e.id)
		if err != nil {
			return pc, entryErr(e.index, err)
		}
		if len(e.id) == 0 {
			return pc, entryErr(e.index, nserr.InvalidInputf("a table id needs at least one part"))
		}
		if j, dup := byOID[oid]; dup {
			return pc, nserr.InvalidInputf("entries %d and %d both declare or deregister table %s; a batch changes a table's entry once", j, e.index, quoteID(e.id))
		}
		byOID[oid] = e.index
		if e.deregister {
			t, err := n.lookupTable(ctx, s, e.id)
			if err != nil {
				return pc, entryErr(e.index, err)
			}
			if !t.inManifest {
				return pc, entryErr(e.index, nserr.InvalidInputf(
					"table %s is a compatibility-mode directory of the root with no catalog entry: deregistering it writes a marker into its directory, which cannot join a batch's single commit point; deregister it with its own deregister_table", quoteID(e.id)))
			}
			ch.deletes = append(ch.deletes, t.row)
			pc.tables[e.index] = t
			pc.rec.Deregistered = append(pc.rec.Deregistered, txnTable{Table: t.ID, Location: t.Location})
			if len(e.id) == 1 && !n.opts.DisableCompatibility && t.Location == v1Location(e.id[0]) {
				// The plain door marks a root <name>.lance directory deregistered so the listing
				// does not bring it back as a directory table. Written now: while the row is
				// there the marker changes nothing (a directory backing a row is never a table
				// of its own), and it is there the moment the row goes. Kept if the batch fails
				// (still invisible; a later deregister writes it anyway, a register removes it).
				if _, err := n.root.PutIfAbsent(ctx, t.Location+"/"+DeregisteredMarker, bytes.NewReader(nil), 0); err != nil && !errors.Is(err, storage.ErrExists) {
					return pc, fmt.Errorf("namespace: write %s marker: %w", DeregisteredMarker, err)
				}
			}
			continue
		}
		loc := ""
		if e.declare.Location != "" {
			if loc, err = n.tableLocation(e.declare.Location); err != nil {
				return pc, entryErr(e.index, err)
			}
			if err := n.checkEmpty(ctx, loc); err != nil {
				return pc, entryErr(e.index, err)
			}
		}
		if err := n.checkFree(ctx, s, e.id, oid); err != nil {
			return pc, entryErr(e.index, err)
		}
		if r := s.rows[oid]; r != nil {
			ch.deletes = append(ch.deletes, r) // a ghost row of the name (checkFree): replaced
		}
		if loc != "" {
			if err := n.checkUnheld(ctx, s, loc, oid); err != nil {
				return pc, entryErr(e.index, err)
			}
		}
		got, release, err := n.claimLocation(ctx, s, e.id, oid, loc)
		if err != nil {
			return pc, entryErr(e.index, err)
		}
		pc.release = append(pc.release, release)
		for _, h := range locs {
			if overlaps(h.loc, got) {
				return pc, nserr.InvalidInputf("entries %d and %d declare tables at overlapping locations %q and %q: a location belongs to one table", h.i, e.index, h.loc, got)
			}
		}
		locs = append(locs, held{got, e.index})
		token := []byte(uuid.NewString())
		info, err := n.root.PutIfAbsent(ctx, got+"/"+ReservedMarker, bytes.NewReader(token), int64(len(token)))
		if errors.Is(err, storage.ErrExists) {
			return pc, entryErr(e.index, nserr.TableAlreadyExistsf("table %s already exists (location %s is already declared)", quoteID(e.id), got))
		} else if err != nil {
			return pc, fmt.Errorf("namespace: write %s marker: %w", ReservedMarker, err)
		}
		pc.markers = append(pc.markers, storage.ObjectInfo{Key: ReservedMarker, ETag: info.ETag})
		pc.markLoc = append(pc.markLoc, got)
		t := n.table(e.id, nil, got)
		t.Properties = clonedProps(e.declare.Properties)
		t.ManagedVersioning = s.managed()
		pc.tables[e.index] = t
		pc.rec.Declared = append(pc.rec.Declared, txnTable{Table: t.ID, Location: got})
		ch.inserts = append(ch.inserts, newRow{ObjectID: oid, Type: TypeTable, Location: &got, Metadata: encodeProps(e.declare.Properties)})
	}
	pc.s, pc.ch = s, ch
	pc.rec.Version = s.version() + 1
	pc.rec.Final = ManifestTable + "/" + s.ver.Location.Scheme.ManifestKey(pc.rec.Version)
	pc.rec.Staged = stagedDir + "manifest-" + uuid.NewString() + ".manifest"
	return pc, nil
}

// stage builds the manifest version the batch publishes and stages it. It runs once the batch
// holds the claim on that version: plain writers wait for it meanwhile instead of moving the
// manifest on under a batch that would then have to start again.
func (pc *preparedCatalog) stage(ctx context.Context) error {
	n, s := pc.n, pc.s
	next, err := n.build(ctx, s, pc.ch)
	if err != nil {
		return err
	}
	pc.files = newFiles(s.ver.File.Manifest.GetFragments(), next.Manifest.GetFragments())
	data, err := next.Encode()
	if err != nil {
		return err
	}
	pc.data = data
	if _, err := n.root.PutIfAbsent(ctx, pc.rec.Staged, bytes.NewReader(data), int64(len(data))); err != nil {
		return fmt.Errorf("namespace: stage the catalog manifest: %w", err)
	}
	return nil
}

// newFiles are the data and deletion files of after's fragments that before's do not have,
// relative to the root.
func newFiles(before, after []*tablepb.DataFragment) []string {
	had := map[string]bool{}
	for _, f := range before {
		for _, df := range f.GetFiles() {
			had[lance.DataDir+df.GetPath()] = true
		}
		if d := f.GetDeletionFile(); d != nil {
			had[lance.DeletionFileKey(f.GetId(), d)] = true
		}
	}
	var out []string
	for _, f := range after {
		for _, df := range f.GetFiles() {
			if k := lance.DataDir + df.GetPath(); !had[k] {
				out = append(out, ManifestTable+"/"+k)
			}
		}
		if d := f.GetDeletionFile(); d != nil {
			if k := lance.DeletionFileKey(f.GetId(), d); !had[k] {
				out = append(out, ManifestTable+"/"+k)
			}
		}
	}
	return out
}

// abort takes back what prepare wrote, for a batch that did not commit: the staged manifest and
// its new files (fresh names only this batch knows), the declared markers (unless another
// writer replaced them), the directory claims.
func (pc *preparedCatalog) abort(ctx context.Context) {
	n := pc.n
	if pc.rec.Staged != "" {
		_ = n.root.Delete(ctx, pc.rec.Staged)
	}
	for _, f := range pc.files {
		_ = n.root.Delete(ctx, f)
	}
	for i, m := range pc.markers {
		n.takeBack(ctx, pc.markLoc[i], m)
	}
	pc.done()
}

// done lets go of the directory claims (CreatingMarker) of the declared tables.
func (pc *preparedCatalog) done() {
	for _, r := range pc.release {
		r()
	}
	pc.release = nil
}

// claimManifestVersion takes version v of __manifest for batch transaction name. Anything else
// holding it (a direct writer, another batch), or the version being there already, means the
// manifest moved on from what the batch was prepared on: errManifestMoved.
func (n *Namespace) claimManifestVersion(ctx context.Context, m *txnManifest, name string) error {
	key := claimKey(ManifestTable, "", m.Version)
	body, _ := json.Marshal(claim{Txn: name})
	_, err := n.root.PutIfAbsent(ctx, key, bytes.NewReader(body), int64(len(body)))
	if errors.Is(err, storage.ErrExists) {
		held, etag, rerr := n.readClaim(ctx, key)
		if errors.Is(rerr, storage.ErrNotFound) {
			return manifestMoved() // deleted just now: its version was published
		}
		if rerr != nil {
			return rerr
		}
		free := false
		switch {
		case held.Txn == name:
			free = true
		case held.Txn == directClaim:
			// A direct writer is publishing this version (or died doing so).
			free = time.Since(time.UnixMilli(held.At)) > AbandonAfter
		default:
			rec, _, err := n.readRecord(ctx, held.Txn)
			switch {
			case errors.Is(err, storage.ErrNotFound):
				free = true
			case err != nil:
				return err
			default:
				if rec, err = n.abandon(ctx, rec); err != nil {
					return err
				}
				switch rec.Status {
				case catalog.TxnFailed, catalog.TxnCanceled:
					free = true
				case catalog.TxnSucceeded:
					if err := n.settleManifest(ctx, rec); err != nil {
						return err
					}
				}
			}
		}
		if !free {
			return manifestMoved()
		}
		if held.Txn != name {
			if _, err := n.root.PutIfMatch(ctx, key, bytes.NewReader(body), int64(len(body)), etag); err != nil {
				if lostSwap(err) {
					return manifestMoved()
				}
				return fmt.Errorf("namespace: claim %s: %w", key, err)
			}
		}
	} else if err != nil {
		return fmt.Errorf("namespace: claim %s: %w", key, err)
	}
	if _, err := n.root.Stat(ctx, m.Final); err == nil {
		return manifestMoved()
	} else if !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("namespace: stat %s: %w", m.Final, err)
	}
	return nil
}

// claimManifestDirect claims version v of __manifest for a plain writer about to publish it.
// done(published), called once version v stands (published by this writer, or found taken),
// deletes the claims that did their work: the one on v-1 when this writer published v (the
// claim on the latest version is kept, so that on a local root the claims directory is not
// removed and made again, with its fsyncs, on every write), the one on v when another writer
// had published it. errManifestClaimed: a batch holds v (running: wait; committed: it was
// settled just now); either way the writer re-plans.
func (n *Namespace) claimManifestDirect(ctx context.Context, v uint64) (done func(published bool), err error) {
	key := claimKey(ManifestTable, "", v)
	body, _ := json.Marshal(claim{Txn: directClaim, At: time.Now().UnixMilli()})
	done = func(published bool) {
		if published {
			_ = n.root.Delete(context.WithoutCancel(ctx), claimKey(ManifestTable, "", v-1))
			return
		}
		_ = n.root.Delete(context.WithoutCancel(ctx), key)
	}
	_, err = n.root.PutIfAbsent(ctx, key, bytes.NewReader(body), int64(len(body)))
	if err == nil {
		return done, nil
	}
	if !errors.Is(err, storage.ErrExists) {
		return nil, fmt.Errorf("namespace: claim %s: %w", key, err)
	}
	held, etag, err := n.readClaim(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errManifestClaimed // its version was published just now: re-plan
	}
	if err != nil {
		return nil, err
	}
	if held.Txn == directClaim {
		return done, nil // shared with another direct writer: the put of the version decides
	}
	rec, _, err := n.readRecord(ctx, held.Txn)
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		if rec, err = n.abandon(ctx, rec); err != nil {
			return nil, err
		}
		switch rec.Status {
		case catalog.TxnFailed, catalog.TxnCanceled:
		case catalog.TxnSucceeded:
			// Committed: publish its version (re-plan on it). Neither staged nor published is a
			// stale claim (the version removed since): free.
			if err := n.settleManifest(ctx, rec); err != nil {
				return nil, err
			}
			if rec.Manifest != nil {
				if _, serr := n.root.Stat(ctx, rec.Manifest.Final); serr == nil {
					return nil, errManifestClaimed
				}
			}
		default:
			return nil, errManifestClaimed // a batch is committing it: wait, then re-plan
		}
	}
	if _, err := n.root.PutIfMatch(ctx, key, bytes.NewReader(body), int64(len(body)), etag); err != nil {
		if lostSwap(err) {
			return nil, errManifestClaimed
		}
		return nil, fmt.Errorf("namespace: claim %s: %w", key, err)
	}
	return done, nil
}

// settleManifest publishes the __manifest version of committed transaction rec (idempotent):
// what every settling reader does first, so the batch's catalog rows are visible before any
// other part of it.
func (n *Namespace) settleManifest(ctx context.Context, rec *txnRecord) error {
	m := rec.Manifest
	if m == nil || rec.Status != catalog.TxnSucceeded {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	staged, err := readStaged(ctx, n.root, m.Staged)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // published (the owner writes the final name before it deletes the staged one)
	}
	if err != nil {
		return err
	}
	if _, err := n.publishTxnEntry(ctx, n.root, m.entry(), staged); err != nil {
		return err
	}
	_ = lance.WriteVersionHint(ctx, n.manifest.Store(), m.Version)
	_ = n.root.Delete(ctx, claimKey(ManifestTable, "", m.Version-1)) // see claimManifestDirect
	return nil
}
