package namespace

// Version commits across tables: create_table_version, batch_create_table_versions and the
// create_table_version and delete_table_versions operations of batch_commit_tables, all or
// none (the deletions join the same commit point: batch_delete.go).
//
// Each table's own arbiter is the put-if-absent of a manifest at its final name in _versions/,
// and no object store writes two objects at once, so the batch needs a commit point of its own
// that every party resolves. The protocol (claims + one decided record):
//
//  1. prepare: every staged manifest is read and checked (it decodes, holds the right version,
//     that version is the table's next one); nothing is written.
//  2. start: the transaction record is written, Running (transactions.go).
//  3. claim: for each (table, branch, version), in one global order, a claim object
//     _lancecat/claims/<table dir>/<branch>/<version> naming the transaction is written with
//     put-if-absent. A claim held by a Running transaction is a conflict (409, the batch fails
//     whole: no waiting, so concurrent batches cannot deadlock); one held by a Failed or
//     Canceled transaction is taken over with put-if-match; one held by a Succeeded transaction,
//     or a final name already there, means the version is taken (409). A Running transaction
//     that has made no progress for AbandonAfter is failed first (it crashed).
//  4. commit point: the record is swapped Running → Succeeded with put-if-match. Before this
//     swap nothing of the batch is visible (claims are not versions); after it the whole batch
//     is, because of 6. If the swap loses (alter_transaction canceled it, or a writer failed it
//     as abandoned) the batch fails whole.
//  5. publish: each staged manifest is written at its final name with put-if-absent, then the
//     staged file is deleted.
//  6. readers settle: the version doors and the table handle's latest read look for a claim on
//     the version after the latest; when its transaction is Succeeded they publish that entry
//     themselves (step 5, idempotent) before answering. So once any table of a committed batch
//     shows the batch's version, every read of another of its tables that starts later shows
//     it too, even if the committing process died between 4 and 5.
//
// A crash before 4 leaves a Running record and claims: invisible, and failed (then taken over)
// by the next writer of those versions after AbandonAfter, or at once by alter_transaction
// setting it Canceled. Claims are kept (a few bytes each): a later reader needs the claim of a
// version to be there to know that no batch holds it.
//
// What the protocol cannot stop is a writer that ignores claims: a Lance client committing to
// the table's directory by itself, bypassing the namespace (which managed versioning forbids),
// or a commit of this server's data plane racing a batch on the same table. Such a writer can
// take a batch's version between 4 and 5; publishing then fails with Internal, naming it.
//
// All tables of one transaction are in one root: the records and claims live there, and no
// atomic primitive spans two buckets (the router refuses a batch across roots).

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/table"
)

// AbandonAfter is how long a Running transaction may make no progress before a writer that
// needs one of its versions fails it as abandoned (its process died between start and commit).
var AbandonAfter = 2 * time.Minute

// claimsDir holds the claims, under the root's reserved _lancecat/ area.
const claimsDir = "_lancecat/claims/"

// batchFault, set only by tests, is called at each step of a version commit; an error from it
// stops the commit right there, as if the process died (no cleanup runs). Fault injection only.
var batchFault func(step string) error

func fault(step string) error {
	if batchFault == nil {
		return nil
	}
	return batchFault(step)
}

// prepared is a checked entry, ready to claim and publish.
type prepared struct {
	t       *entry
	nv      catalog.NewTableVersion
	branch  string
	store   storage.Bucket // the branch's directory
	staged  string
	final   string
	prefix  string
	version uint64
	data    []byte
	mf      *lance.ManifestFile
}

func (p *prepared) entry() txnEntry {
	return txnEntry{Table: p.t.ID, Location: p.t.Location, Branch: branchName(p.branch), Version: p.version, Staged: p.staged, Final: p.final}
}

func branchName(b string) string {
	if b == "main" {
		return ""
	}
	return b
}

func claimKey(location, branch string, version uint64) string {
	if branch == "" {
		branch = "main"
	}
	return fmt.Sprintf("%s%s/%s/%020d", claimsDir, location, branch, version)
}

type claim struct {
	Txn string `json:"txn"`
	// Done marks a deletes claim whose deletions are applied (batch_delete.go).
	Done bool `json:"done,omitempty"`
	// At is when a direct writer of __manifest claimed (batch_catalog.go).
	At int64 `json:"at_millis,omitempty"`
}

// CommitTableVersions publishes every entry as one transaction of kind (Txn*): all of them or
// none. Batch kinds require each entry to be its table's next version (consecutive for several
// entries on one table). An entry with Delete set (batch_commit_tables only) deletes versions
// instead (batch_delete.go). It answers the transaction and each entry's version, in order.
func (n *Namespace) CommitTableVersions(ctx context.Context, kind string, entries []catalog.VersionEntry, _ ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error) {
	if len(entries) == 0 {
		return catalog.Transaction{}, nil, nserr.InvalidInputf("a batch needs at least one entry")
	}
	// A batch with declare or deregister entries was prepared on one version of __manifest; when
	// another writer moved it on before the claim, the batch (which committed nothing) is
	// prepared again on the newer one, a few times.
	for attempt := 0; ; attempt++ {
		txn, out, err := n.commitOnce(ctx, kind, entries)
		if !errors.Is(err, errManifestMoved) || attempt >= 8 {
			return txn, out, err
		}
		select {
		case <-ctx.Done():
			return catalog.Transaction{}, nil, ctx.Err()
		case <-time.After(time.Duration(rand.IntN(8*(attempt+1))+1) * time.Millisecond):
		}
	}
}

func (n *Namespace) commitOnce(ctx context.Context, kind string, entries []catalog.VersionEntry) (_ catalog.Transaction, _ []catalog.TableVersion, err error) {
	ps := make([]*prepared, len(entries))         // the version entries (nil at a deletion)
	dels := make([]*preparedDelete, len(entries)) // the deletion entries (nil at a version)
	var versions []*prepared
	var cats []catalogEntry
	seen := map[string]int{}
	for i, e := range entries {
		if e.Declare != nil || e.Deregister {
			if kind != catalog.TxnBatchCommitTables {
				return catalog.Transaction{}, nil, nserr.InvalidInputf("entries[%d]: declare_table and deregister_table belong to batch_commit_tables only", i)
			}
			if e.Declare != nil && e.Deregister {
				return catalog.Transaction{}, nil, nserr.InvalidInputf("entries[%d] both declares and deregisters table %s", i, quoteID(e.Table))
			}
			cats = append(cats, catalogEntry{index: i, id: e.Table, declare: e.Declare, deregister: e.Deregister})
			continue
		}
		t, err := n.describeTable(ctx, e.Table)
		if err != nil {
			return catalog.Transaction{}, nil, err
		}
		if e.Delete != nil {
			if kind != catalog.TxnBatchCommitTables {
				return catalog.Transaction{}, nil, nserr.InvalidInputf("entries[%d]: a version deletion belongs to batch_commit_tables only", i)
			}
			d, err := n.prepareDelete(ctx, t, *e.Delete)
			if err != nil {
				return catalog.Transaction{}, nil, entryErr(i, err)
			}
			if j, dup := seen[d.key()]; dup {
				return catalog.Transaction{}, nil, nserr.InvalidInputf("entries %d and %d both delete versions of table %s; send one entry with both ranges", j, i, quoteID(t.ID))
			}
			seen[d.key()] = i
			dels[i] = d
			continue
		}
		p, err := n.prepare(ctx, t, e.NewTableVersion)
		if err != nil {
			if len(entries) > 1 {
				return catalog.Transaction{}, nil, entryErr(i, err)
			}
			return catalog.Transaction{}, nil, err
		}
		k := claimKey(p.t.Location, p.branch, p.version)
		if j, dup := seen[k]; dup {
			return catalog.Transaction{}, nil, nserr.InvalidInputf("entries %d and %d both create version %d of table %s", j, i, p.version, quoteID(t.ID))
		}
		seen[k] = i
		ps[i] = p
		versions = append(versions, p)
	}
	if kind != catalog.TxnCreateTableVersion {
		if err := n.checkNext(ctx, versions); err != nil {
			return catalog.Transaction{}, nil, err
		}
	}
	entriesOf := make([]txnEntry, len(versions))
	for i, p := range versions {
		entriesOf[i] = p.entry()
	}
	// The declare and deregister entries: the next version of __manifest, staged. Until the
	// commit point, a failure takes back what was staged for it; a crash leaves it unreferenced.
	var cat *preparedCatalog
	var manifestOf *txnManifest
	died, committed := false, false
	fault := func(step string) error {
		err := fault(step)
		died = died || err != nil
		return err
	}
	if len(cats) > 0 {
		if cat, err = n.prepareCatalog(ctx, cats); err != nil {
			return catalog.Transaction{}, nil, err
		}
		manifestOf = &cat.rec
		defer func() {
			switch {
			case died:
			case committed:
				cat.done()
			case err != nil:
				cat.abort(context.WithoutCancel(ctx))
			}
		}()
	}
	// Claims, in one global order (by key), so two batches meet on their first common one; a
	// conflict fails the batch at once. A deletion that deletes nothing needs no claim.
	type claimStep struct {
		key  string
		take func(name string) error
	}
	var steps []claimStep
	var deletesOf []txnDelete
	for _, p := range versions {
		steps = append(steps, claimStep{claimKey(p.t.Location, p.branch, p.version), func(name string) error { return n.claim(ctx, p, name) }})
	}
	for _, d := range dels {
		if d == nil || len(d.versions) == 0 {
			continue
		}
		deletesOf = append(deletesOf, d.record())
		steps = append(steps, claimStep{d.key(), func(name string) error { return n.claimDeletes(ctx, d, name) }})
	}
	slices.SortFunc(steps, func(a, b claimStep) int { return cmp.Compare(a.key, b.key) })
	if cat != nil {
		// First: the batch builds its __manifest version while it holds it (batch_catalog.go).
		// Conflicts fail a batch at once, so this order deadlocks nothing either.
		steps = append([]claimStep{{claimKey(ManifestTable, "", cat.rec.Version), func(name string) error {
			if err := n.claimManifestVersion(ctx, &cat.rec, name); err != nil {
				return err
			}
			return cat.stage(ctx)
		}}}, steps...)
	}

	rec, etag, err := n.newRecord(ctx, entries[0].Table.Parent(), kind, entriesOf, deletesOf, manifestOf)
	if err != nil {
		return catalog.Transaction{}, nil, err
	}
	if err := fault("started"); err != nil {
		return catalog.Transaction{}, nil, err
	}
	for i, st := range steps {
		if err := st.take(rec.Name); err != nil {
			if _, derr := n.decide(context.WithoutCancel(ctx), rec.Name, catalog.TxnFailed, err.Error()); derr != nil {
				return catalog.Transaction{}, nil, errors.Join(err, derr)
			}
			return catalog.Transaction{}, nil, err
		}
		if err := fault(fmt.Sprintf("claimed %d", i)); err != nil {
			return catalog.Transaction{}, nil, err
		}
	}

	// The commit point.
	rec.Status = catalog.TxnSucceeded
	if _, err := n.swapRecord(ctx, rec, etag); err != nil {
		if !lostSwap(err) {
			died = true // the outcome is unknown: what was staged stays for readers to settle
			return catalog.Transaction{}, nil, fmt.Errorf("namespace: commit transaction %s: %w", rec.Name, err)
		}
		now, _, rerr := n.readRecord(ctx, rec.Name)
		if rerr != nil {
			return catalog.Transaction{}, nil, fmt.Errorf("namespace: commit transaction %s: %w", rec.Name, rerr)
		}
		if now.Status != catalog.TxnSucceeded {
			return catalog.Transaction{}, nil, nserr.ConcurrentModificationf("transaction %s was %s before it could commit",
				quoteID(now.transaction().ID), now.Status)
		}
		rec = now
	}
	committed = true
	if err := fault("committed"); err != nil {
		return catalog.Transaction{}, nil, err
	}

	// Committed: publish, the catalog rows first (see batch_catalog.go). A failure here is not
	// the batch's failure (readers finish it), except a version taken by a writer that ignored
	// the claims.
	txn := rec.transaction()
	out := make([]catalog.TableVersion, len(ps))
	pctx := context.WithoutCancel(ctx)
	if cat != nil {
		if _, err := n.publishTxnEntry(pctx, n.root, cat.rec.entry(), cat.data); err != nil {
			return catalog.Transaction{}, nil, err
		}
		_ = lance.WriteVersionHint(pctx, n.manifest.Store(), cat.rec.Version)
		_ = n.root.Delete(pctx, claimKey(ManifestTable, "", cat.rec.Version-1)) // see claimManifestDirect
		if err := fault("published catalog"); err != nil {
			return catalog.Transaction{}, nil, err
		}
		for i, t := range cat.tables {
			t.inManifest = entries[i].Declare != nil
			out[i] = catalog.TableVersion{TransactionID: txn.ID, Table: t.Entry}
		}
	}
	for i, p := range ps {
		if p == nil {
			continue
		}
		info, err := n.publishTxnEntry(pctx, p.store, p.entry(), p.data)
		if err != nil {
			return catalog.Transaction{}, nil, err
		}
		if err := fault(fmt.Sprintf("published %d", i)); err != nil {
			return catalog.Transaction{}, nil, err
		}
		tv := catalog.TableVersion{
			Version: p.version, ManifestSize: int64(len(p.data)), ETag: info.ETag, Metadata: p.nv.Metadata,
			ManifestPath: table.VersionPath(p.t.Entry, p.branch, p.final), TransactionID: txn.ID,
		}
		if ts := p.mf.Manifest.GetTimestamp(); ts != nil {
			tv.Timestamp = ts.AsTime()
		}
		if p.prefix != "" {
			tv.ManifestPath = p.prefix + p.final
		}
		out[i] = tv
	}
	for i, d := range dels {
		if d == nil {
			continue
		}
		if len(d.versions) > 0 {
			if err := n.finishDeletes(pctx, d, rec); err != nil {
				return catalog.Transaction{}, nil, err
			}
			if err := fault(fmt.Sprintf("deleted %d", i)); err != nil {
				return catalog.Transaction{}, nil, err
			}
		}
		out[i] = catalog.TableVersion{TransactionID: txn.ID, Deleted: len(d.versions)}
	}
	return txn, out, nil
}

// entryErr says which entry of a batch an error is about, keeping its code.
func entryErr(i int, err error) error {
	var e *nserr.Error
	if errors.As(err, &e) {
		return nserr.Describef(err, "entries[%d]: %s", i, e.Error())
	}
	return fmt.Errorf("entries[%d]: %w", i, err)
}

// checkNext requires each table's entries to be its next versions, consecutive.
func (n *Namespace) checkNext(ctx context.Context, ps []*prepared) error {
	type key struct{ loc, branch string }
	groups := map[key][]*prepared{}
	for _, p := range ps {
		k := key{p.t.Location, branchName(p.branch)}
		groups[k] = append(groups[k], p)
	}
	for _, g := range groups {
		slices.SortFunc(g, func(a, b *prepared) int { return cmp.Compare(a.version, b.version) })
		latest, err := n.settledLatest(ctx, g[0].t, g[0].branch)
		if err != nil {
			return err
		}
		for i, p := range g {
			want := latest + 1 + uint64(i)
			switch {
			case p.version < want:
				return nserr.ConcurrentModificationf("version %d of table %s already exists", p.version, quoteID(p.t.ID))
			case p.version > want:
				return nserr.InvalidInputf("version %d of table %s is not its next version %d", p.version, quoteID(p.t.ID), want)
			}
		}
	}
	return nil
}

// claim takes version p.version of p's table for transaction name (step 3).
func (n *Namespace) claim(ctx context.Context, p *prepared, name string) error {
	key := claimKey(p.t.Location, p.branch, p.version)
	body, _ := json.Marshal(claim{Txn: name})
	taken := func() error {
		return nserr.ConcurrentModificationf("version %d of table %s already exists", p.version, quoteID(p.t.ID))
	}
	_, err := n.root.PutIfAbsent(ctx, key, bytes.NewReader(body), int64(len(body)))
	if errors.Is(err, storage.ErrExists) {
		held, etag, rerr := n.readClaim(ctx, key)
		if rerr != nil {
			return rerr
		}
		if held.Txn != name {
			if err := n.release(ctx, p, held.Txn); err != nil {
				return err
			}
			if _, err := n.root.PutIfMatch(ctx, key, bytes.NewReader(body), int64(len(body)), etag); err != nil {
				if lostSwap(err) {
					return taken()
				}
				return fmt.Errorf("namespace: claim %s: %w", key, err)
			}
		}
	} else if err != nil {
		return fmt.Errorf("namespace: claim %s: %w", key, err)
	}
	// A version published without a claim (a client committing by itself) is there already.
	if _, err := p.store.Stat(ctx, p.final); err == nil {
		return taken()
	} else if !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("namespace: stat %s: %w", p.final, err)
	}
	return nil
}

// release decides whether the claim of transaction other on p's version may be taken over: nil
// when other failed (or is failed now, as abandoned), a conflict when it committed or runs.
func (n *Namespace) release(ctx context.Context, p *prepared, other string) error {
	rec, _, err := n.readRecord(ctx, other)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // its record is gone (pruned): nothing can commit it any more
	}
	if err != nil {
		return err
	}
	if (rec.Status == catalog.TxnRunning || rec.Status == catalog.TxnQueued) && time.Since(time.UnixMilli(rec.UpdatedMillis)) > AbandonAfter {
		if rec, err = n.decide(ctx, other, catalog.TxnFailed, "abandoned: no progress for "+AbandonAfter.String()); err != nil {
			return err
		}
	}
	switch rec.Status {
	case catalog.TxnFailed, catalog.TxnCanceled:
		return nil
	case catalog.TxnSucceeded:
		if n.entryGone(ctx, p, rec) {
			return nil // a stale claim (see errEntryGone): the version it holds is no more
		}
		return nserr.ConcurrentModificationf("version %d of table %s already exists", p.version, quoteID(p.t.ID))
	default:
		return nserr.ConcurrentModificationf("version %d of table %s is being committed by transaction %s; try again",
			p.version, quoteID(p.t.ID), quoteID(rec.transaction().ID))
	}
}

// errEntryGone: an entry of a committed transaction left neither its staged manifest nor its
// final one. The owner writes the final name before it deletes the staged one, so the version
// was published and removed since: its table was dropped and made again at the same location,
// or the version was deleted. Its claim is stale: nothing to publish, and free to take.
var errEntryGone = errors.New("namespace: the committed version is gone")

// entryGone reports whether the entry of committed transaction rec on p's version is gone
// (errEntryGone); false when rec has no such entry or on any doubt.
func (n *Namespace) entryGone(ctx context.Context, p *prepared, rec *txnRecord) bool {
	i := slices.IndexFunc(rec.Entries, func(e txnEntry) bool {
		return e.Location == p.t.Location && e.Branch == branchName(p.branch) && e.Version == p.version
	})
	if i < 0 {
		return false
	}
	e := rec.Entries[i]
	_, serr := p.store.Stat(ctx, e.Staged)
	_, ferr := p.store.Stat(ctx, e.Final)
	return errors.Is(serr, storage.ErrNotFound) && errors.Is(ferr, storage.ErrNotFound)
}

func (n *Namespace) readClaim(ctx context.Context, key string) (claim, string, error) {
	rc, info, err := n.root.Get(ctx, key)
	if err != nil {
		return claim{}, "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 4096))
	if err != nil {
		return claim{}, "", fmt.Errorf("namespace: read claim %s: %w", key, err)
	}
	var c claim
	if err := json.Unmarshal(data, &c); err != nil {
		return claim{}, "", fmt.Errorf("namespace: claim %s is not JSON: %w", key, err)
	}
	return c, info.ETag, nil
}

// publishTxnEntry writes entry e of a committed transaction at its final name (step 5), from data or,
// when nil, from the staged file, then deletes the staged file. Idempotent: a final name that
// already holds these bytes is success.
func (n *Namespace) publishTxnEntry(ctx context.Context, store storage.Bucket, e txnEntry, data []byte) (storage.ObjectInfo, error) {
	if data == nil {
		staged, err := readStaged(ctx, store, e.Staged)
		if errors.Is(err, storage.ErrNotFound) {
			info, serr := store.Stat(ctx, e.Final)
			if serr == nil {
				return info, nil // published already, by its owner or another reader
			}
			// The owner writes the final name before it deletes the staged one, so neither
			// being there means the version was published and removed since (its table dropped
			// and made again at this location, or the version deleted): nothing to publish.
			return storage.ObjectInfo{}, errEntryGone
		}
		if err != nil {
			return storage.ObjectInfo{}, err
		}
		data = staged
	}
	info, err := store.PutIfAbsent(ctx, e.Final, bytes.NewReader(data), int64(len(data)))
	if errors.Is(err, storage.ErrExists) {
		there, rerr := readStaged(ctx, store, e.Final)
		if rerr != nil {
			return storage.ObjectInfo{}, rerr
		}
		if !bytes.Equal(there, data) {
			return storage.ObjectInfo{}, nserr.Internalf("version %d of table %s was committed by a transaction, but a writer that bypassed the catalog published another manifest at %s",
				e.Version, quoteID(e.Table), e.Final)
		}
		info, err = store.Stat(ctx, e.Final)
	}
	if err != nil {
		return storage.ObjectInfo{}, fmt.Errorf("namespace: publish version %d of table %s: %w", e.Version, quoteID(e.Table), err)
	}
	_ = store.Delete(ctx, e.Staged)
	return info, nil
}

// latestNumber is the latest version of ds (0: none yet).
func latestNumber(ctx context.Context, ds *lance.Dataset) (uint64, error) {
	infos, err := ds.ListVersions(ctx, lance.ListVersionsOptions{Descending: true, Limit: 1})
	if errors.Is(err, lance.ErrDatasetNotFound) || (err == nil && len(infos) == 0) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return infos[0].Version, nil
}

// settle publishes the versions after latest on t's branch that committed transactions hold
// but have not published yet (step 6). It answers the latest version after them.
func (n *Namespace) settle(ctx context.Context, t *entry, branch string, latest uint64) (uint64, error) {
	for {
		c, _, err := n.readClaim(ctx, claimKey(t.Location, branchName(branch), latest+1))
		if errors.Is(err, storage.ErrNotFound) {
			return latest, nil
		}
		if err != nil {
			return latest, err
		}
		rec, _, err := n.readRecord(ctx, c.Txn)
		if errors.Is(err, storage.ErrNotFound) {
			return latest, nil
		}
		if err != nil {
			return latest, err
		}
		if rec.Status != catalog.TxnSucceeded {
			return latest, nil
		}
		i := slices.IndexFunc(rec.Entries, func(e txnEntry) bool {
			return e.Location == t.Location && e.Branch == branchName(branch) && e.Version == latest+1
		})
		if i < 0 {
			return latest, nil
		}
		if err := n.settleManifest(ctx, rec); err != nil { // the batch's catalog rows first
			return latest, err
		}
		ds, err := n.dataset(t, branch)
		if err != nil {
			return latest, err
		}
		if _, err := n.publishTxnEntry(context.WithoutCancel(ctx), ds.Store(), rec.Entries[i], nil); errors.Is(err, errEntryGone) {
			return latest, nil // a stale claim (see errEntryGone)
		} else if err != nil {
			return latest, err
		}
		latest++
	}
}

// settledLatest is the latest version of t's branch once committed transactions are settled.
func (n *Namespace) settledLatest(ctx context.Context, t *entry, branch string) (uint64, error) {
	ds, err := n.dataset(t, branch)
	if err != nil {
		return 0, err
	}
	latest, err := latestNumber(ctx, ds)
	if err != nil {
		return 0, tableErr(t, err)
	}
	if latest, err = n.settle(ctx, t, branch, latest); err != nil {
		return latest, err
	}
	return latest, n.settleDeletes(ctx, t, branch)
}

// DescribeTransaction and AlterTransaction are in transactions.go.

// settleOpened settles the main branch after the table handle opened its latest version v (or
// failed to, err): when a committed transaction published a later version meanwhile, the
// handle reads that one. One small read (the claim after the latest, usually absent).
func (n *Namespace) settleOpened(ctx context.Context, t *entry, ds *lance.Dataset, v *lance.Version, err error) (*lance.Version, error) {
	var latest uint64
	switch {
	case err == nil:
		latest = v.Number()
	case errors.Is(err, lance.ErrDatasetNotFound):
	default:
		return v, err
	}
	now, serr := n.settle(ctx, t, "", latest)
	if serr != nil {
		return nil, serr
	}
	if now == latest {
		return v, err
	}
	return ds.OpenLatest(ctx)
}
