package namespace

// delete_table_versions inside a batch (batch_commit_tables), all or none with the batch's other
// entries. The deletion joins the batch's one commit point:
//
//   - prepare: the versions the entry deletes are decided from the table as read (those in its
//     ranges, less the latest, tagged versions and branch fork points, as the plain door keeps
//     them); nothing is deleted. The record lists them (txnRecord.Deletes).
//   - claim: a deletes claim _lancecat/claims/<table dir>/<branch>/deletes naming the
//     transaction is taken like a version claim, in the same global order: a Running holder is a
//     conflict (the batch fails whole), a Failed or Canceled one is taken over, a Succeeded one
//     is finished first (its deletions applied) and then taken over.
//   - after the commit point the owner deletes the manifests and marks the claim done
//     (put-if-match). A crash before the commit point deleted nothing; after it, the next
//     reader of that table's versions (settledLatest: the version doors, checkNext) finds the
//     claim of a Succeeded transaction not done yet and applies the deletions itself before it
//     answers, so no reader that starts after any part of the batch is visible sees the
//     deletions undone. Applying is idempotent: a manifest already gone is skipped, and the
//     latest and tagged versions are re-checked at that moment (lance.Dataset.DeleteVersions),
//     so a tag made meanwhile still protects its version.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/table"
)

// txnDelete is the versions a transaction deletes from one table's branch.
type txnDelete struct {
	Table    []string `json:"table"`
	Location string   `json:"location"`
	Branch   string   `json:"branch,omitempty"`
	Versions []uint64 `json:"versions"`
}

// preparedDelete is a checked deletion entry.
type preparedDelete struct {
	t        *entry
	branch   string
	versions []uint64
}

func (d *preparedDelete) key() string { return deletesKey(d.t.Location, branchName(d.branch)) }

func (d *preparedDelete) record() txnDelete {
	return txnDelete{Table: d.t.ID, Location: d.t.Location, Branch: branchName(d.branch), Versions: d.versions}
}

func deletesKey(location, branch string) string {
	if branch == "" {
		branch = "main"
	}
	return claimsDir + location + "/" + branch + "/deletes"
}

// prepareDelete decides which versions entry del deletes from t: those in its ranges that exist,
// less the latest (after settling committed batches), tagged versions and branch fork points.
func (n *Namespace) prepareDelete(ctx context.Context, t *entry, del catalog.VersionDeletion) (*preparedDelete, error) {
	for i, r := range del.Ranges {
		if r.End >= 0 && uint64(r.End) < r.Start {
			return nil, nserr.InvalidInputf("ranges[%d]: end_version %d is before start_version %d", i, r.End, r.Start)
		}
	}
	ds, err := table.BranchDataset(ctx, n.Dataset(t.Entry), t.Entry, del.Branch)
	if err != nil {
		return nil, err
	}
	latest, err := n.settledLatest(ctx, t, del.Branch)
	if err != nil {
		return nil, err
	}
	d := &preparedDelete{t: t, branch: del.Branch}
	if latest == 0 {
		return d, nil
	}
	infos, err := ds.ListVersions(ctx, lance.ListVersionsOptions{})
	if errors.Is(err, lance.ErrDatasetNotFound) {
		return d, nil
	}
	if err != nil {
		return nil, tableErr(t, err)
	}
	kept, err := keptVersions(ctx, ds, del.Branch)
	if err != nil {
		return nil, tableErr(t, err)
	}
	for _, info := range infos {
		v := info.Version
		if v >= latest || kept[v] {
			continue
		}
		if slices.ContainsFunc(del.Ranges, func(r lance.VersionRange) bool {
			return v >= r.Start && (r.End < 0 || v < uint64(r.End))
		}) {
			d.versions = append(d.versions, v)
		}
	}
	return d, nil
}

// keptVersions are the versions of branch a tag points at or a branch was forked from (the
// plain door keeps them too; lance.Dataset.DeleteVersions re-checks them when applying).
func keptVersions(ctx context.Context, ds *lance.Dataset, branch string) (map[uint64]bool, error) {
	same := func(ref *string) bool {
		if ref == nil || *ref == "" || *ref == "main" {
			return branchName(branch) == ""
		}
		return *ref == branch
	}
	out := map[uint64]bool{}
	main := ds.Main()
	tags, err := main.ListTags(ctx)
	if err != nil {
		return nil, err
	}
	for _, tg := range tags {
		if same(tg.Branch) {
			out[tg.Version] = true
		}
	}
	branches, err := main.ListBranches(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range branches {
		if same(b.ParentBranch) {
			out[b.ParentVersion] = true
		}
	}
	return out, nil
}

// claimDeletes takes d's deletes claim for transaction name (step 3 for a deletion).
func (n *Namespace) claimDeletes(ctx context.Context, d *preparedDelete, name string) error {
	key := d.key()
	body, _ := json.Marshal(claim{Txn: name})
	_, err := n.root.PutIfAbsent(ctx, key, bytes.NewReader(body), int64(len(body)))
	if err == nil {
		return nil
	}
	if !errors.Is(err, storage.ErrExists) {
		return fmt.Errorf("namespace: claim %s: %w", key, err)
	}
	held, etag, err := n.readClaim(ctx, key)
	if err != nil {
		return err
	}
	if held.Txn == name {
		return nil
	}
	if !held.Done {
		rec, _, err := n.readRecord(ctx, held.Txn)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return err
		default:
			if rec, err = n.abandon(ctx, rec); err != nil {
				return err
			}
			switch rec.Status {
			case catalog.TxnFailed, catalog.TxnCanceled:
			case catalog.TxnSucceeded:
				// Finish the committed deletions before taking the claim over.
				if err := n.applyDeletes(ctx, d.t, d.branch, rec); err != nil {
					return err
				}
			default:
				return nserr.ConcurrentModificationf("versions of table %s are being deleted by transaction %s; try again",
					quoteID(d.t.ID), quoteID(rec.transaction().ID))
			}
		}
	}
	if _, err := n.root.PutIfMatch(ctx, key, bytes.NewReader(body), int64(len(body)), etag); err != nil {
		if lostSwap(err) {
			return nserr.ConcurrentModificationf("versions of table %s are being deleted by another transaction; try again", quoteID(d.t.ID))
		}
		return fmt.Errorf("namespace: claim %s: %w", key, err)
	}
	return nil
}

// abandon fails rec when it is undecided and made no progress for AbandonAfter (its process
// died before its commit point); it answers the record as it stands then.
func (n *Namespace) abandon(ctx context.Context, rec *txnRecord) (*txnRecord, error) {
	if (rec.Status == catalog.TxnRunning || rec.Status == catalog.TxnQueued) && time.Since(time.UnixMilli(rec.UpdatedMillis)) > AbandonAfter {
		return n.decide(ctx, rec.Name, catalog.TxnFailed, "abandoned: no progress for "+AbandonAfter.String())
	}
	return rec, nil
}

// applyDeletes deletes the manifests committed transaction rec deletes from t's branch. It is
// idempotent (a manifest already gone is skipped) and keeps the latest and tagged versions as
// they are now.
func (n *Namespace) applyDeletes(ctx context.Context, t *entry, branch string, rec *txnRecord) error {
	for _, e := range rec.Deletes {
		if e.Location != t.Location || e.Branch != branchName(branch) || len(e.Versions) == 0 {
			continue
		}
		ds, err := n.dataset(t, branch)
		if err != nil {
			return err
		}
		ranges := make([]lance.VersionRange, len(e.Versions))
		for i, v := range e.Versions {
			ranges[i] = lance.VersionRange{Start: v, End: int64(v) + 1}
		}
		if _, _, err := ds.DeleteVersions(ctx, ranges); err != nil && !errors.Is(err, lance.ErrDatasetNotFound) {
			return tableErr(t, err)
		}
	}
	return nil
}

// finishDeletes applies the deletions of committed transaction rec to d's table and marks its
// claim done (so readers stop applying them). A lost mark is someone else's progress.
func (n *Namespace) finishDeletes(ctx context.Context, d *preparedDelete, rec *txnRecord) error {
	if err := n.applyDeletes(ctx, d.t, d.branch, rec); err != nil {
		return err
	}
	return n.markDone(ctx, d.key(), rec.Name)
}

func (n *Namespace) markDone(ctx context.Context, key, name string) error {
	held, etag, err := n.readClaim(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if held.Txn != name || held.Done {
		return nil
	}
	body, _ := json.Marshal(claim{Txn: name, Done: true})
	if _, err := n.root.PutIfMatch(ctx, key, bytes.NewReader(body), int64(len(body)), etag); err != nil && !lostSwap(err) {
		return fmt.Errorf("namespace: mark %s done: %w", key, err)
	}
	return nil
}

// settleDeletes applies the deletions a committed transaction holds on t's branch and has not
// finished (its owner died after the commit point). One small read when there are none.
func (n *Namespace) settleDeletes(ctx context.Context, t *entry, branch string) error {
	key := deletesKey(t.Location, branchName(branch))
	held, _, err := n.readClaim(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if held.Done {
		return nil
	}
	rec, _, err := n.readRecord(ctx, held.Txn)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if rec.Status != catalog.TxnSucceeded {
		return nil
	}
	if err := n.settleManifest(ctx, rec); err != nil { // the batch's catalog rows first
		return err
	}
	d := &preparedDelete{t: t, branch: branch}
	return n.finishDeletes(context.WithoutCancel(ctx), d, rec)
}

// deletesProperty lists a record's deletions for describe_transaction: table@version|version...
func deletesProperty(ds []txnDelete) string {
	parts := make([]string, 0, len(ds))
	for _, d := range ds {
		vs := make([]string, len(d.Versions))
		for i, v := range d.Versions {
			vs[i] = strconv.FormatUint(v, 10)
		}
		name := strings.Join(d.Table, Delimiter) + "@"
		if d.Branch != "" {
			name += d.Branch + ":"
		}
		parts = append(parts, name+strings.Join(vs, "|"))
	}
	return strings.Join(parts, ",")
}
