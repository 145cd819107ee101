package namespace

// Transactions: the records the version commits of this root keep (create_table_version and the
// batch doors), read by describe_transaction and changed by alter_transaction.
//
// A record is one JSON object, _lancecat/transactions/<uuid>.json under the root, written with
// put-if-absent when the transaction starts (status Running) and changed only with ETag-guarded
// put-if-match. Because every change is a compare-and-swap on that one object, the record is the
// single place where a transaction is decided: the owner's swap Running → Succeeded is its commit
// point, and anyone else's swap Running → Failed/Canceled (alter_transaction, or a writer that
// finds the transaction abandoned) makes that commit impossible. Exactly one of them wins.
// batch.go describes how the version commits use it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// SystemPropertyPrefix marks the properties the server keeps on a transaction (its kind, when
// it was made, the tables it touches): they are answered by describe and refused by alter.
const SystemPropertyPrefix = "lancecat."

// transactionsDir holds the records, under the root's reserved _lancecat/ area.
const transactionsDir = "_lancecat/transactions/"

// maxRecord bounds a record read (a batch of thousands of entries is well below it).
const maxRecord = 16 << 20

// txnRecord is the stored record.
type txnRecord struct {
	Name          string            `json:"name"`
	Namespace     []string          `json:"namespace"`
	Kind          string            `json:"kind"`
	Status        string            `json:"status"`
	CreatedMillis int64             `json:"created_at_millis"`
	UpdatedMillis int64             `json:"updated_at_millis"`
	Properties    map[string]string `json:"properties,omitempty"`
	Entries       []txnEntry        `json:"entries"`
	// Deletes are the manifests the transaction deletes (delete_table_versions of a batch).
	Deletes []txnDelete `json:"deletes,omitempty"`
	// Manifest is the __manifest version the transaction publishes (declare_table and
	// deregister_table of a batch: batch_catalog.go).
	Manifest *txnManifest `json:"manifest,omitempty"`
}

// txnEntry is one version a transaction publishes.
type txnEntry struct {
	Table    []string `json:"table"`
	Location string   `json:"location"` // the table directory, relative to the root
	Branch   string   `json:"branch,omitempty"`
	Version  uint64   `json:"version"`
	Staged   string   `json:"staged"` // the staged manifest, relative to the branch's directory
	Final    string   `json:"final"`  // its final name there
}

func (r *txnRecord) transaction() catalog.Transaction {
	props := map[string]string{}
	maps.Copy(props, r.Properties)
	props[SystemPropertyPrefix+"kind"] = r.Kind
	props[SystemPropertyPrefix+"created_at_millis"] = strconv.FormatInt(r.CreatedMillis, 10)
	props[SystemPropertyPrefix+"updated_at_millis"] = strconv.FormatInt(r.UpdatedMillis, 10)
	tables := make([]string, len(r.Entries))
	for i, e := range r.Entries {
		tables[i] = strings.Join(e.Table, Delimiter) + "@" + strconv.FormatUint(e.Version, 10)
		if e.Branch != "" {
			tables[i] = strings.Join(e.Table, Delimiter) + "@" + e.Branch + ":" + strconv.FormatUint(e.Version, 10)
		}
	}
	props[SystemPropertyPrefix+"versions"] = strings.Join(tables, ",")
	if len(r.Deletes) > 0 {
		props[SystemPropertyPrefix+"deleted_versions"] = deletesProperty(r.Deletes)
	}
	if m := r.Manifest; m != nil {
		names := func(ts []txnTable) string {
			out := make([]string, len(ts))
			for i, t := range ts {
				out[i] = strings.Join(t.Table, Delimiter)
			}
			return strings.Join(out, ",")
		}
		if len(m.Declared) > 0 {
			props[SystemPropertyPrefix+"declared_tables"] = names(m.Declared)
		}
		if len(m.Deregistered) > 0 {
			props[SystemPropertyPrefix+"deregistered_tables"] = names(m.Deregistered)
		}
	}
	id := append(ident.ID{}, r.Namespace...)
	return catalog.Transaction{ID: append(id, r.Name), Status: r.Status, Properties: props}
}

func recordKey(name string) string { return transactionsDir + name + ".json" }

// newRecord starts a transaction (Running) with put-if-absent under a fresh name.
func (n *Namespace) newRecord(ctx context.Context, ns ident.ID, kind string, entries []txnEntry, deletes []txnDelete, manifest *txnManifest) (*txnRecord, string, error) {
	now := time.Now().UnixMilli()
	rec := &txnRecord{
		Name: "txn-" + uuid.NewString(), Namespace: append([]string{}, ns...), Kind: kind,
		Status: catalog.TxnRunning, CreatedMillis: now, UpdatedMillis: now, Entries: entries, Deletes: deletes,
		Manifest: manifest,
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, "", err
	}
	info, err := n.root.PutIfAbsent(ctx, recordKey(rec.Name), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, "", fmt.Errorf("namespace: start transaction: %w", err)
	}
	return rec, info.ETag, nil
}

// readRecord reads the record of transaction name and its ETag; storage.ErrNotFound if none.
func (n *Namespace) readRecord(ctx context.Context, name string) (*txnRecord, string, error) {
	if !validName(name) {
		// Not a name this server gives (a claim naming something else): no such record.
		return nil, "", fmt.Errorf("namespace: transaction %q: %w", name, storage.ErrNotFound)
	}
	rc, info, err := n.root.Get(ctx, recordKey(name))
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxRecord+1))
	if err != nil {
		return nil, "", fmt.Errorf("namespace: read transaction %s: %w", name, err)
	}
	if len(data) > maxRecord {
		return nil, "", fmt.Errorf("namespace: transaction %s: record is more than %d bytes", name, maxRecord)
	}
	var rec txnRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, "", fmt.Errorf("namespace: transaction %s: record is not JSON: %w", name, err)
	}
	return &rec, info.ETag, nil
}

// swapRecord writes rec over the version whose ETag is etag; storage.ErrPreconditionFailed
// (or ErrExists, per backend) when it changed meanwhile.
func (n *Namespace) swapRecord(ctx context.Context, rec *txnRecord, etag string) (string, error) {
	rec.UpdatedMillis = time.Now().UnixMilli()
	data, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	info, err := n.root.PutIfMatch(ctx, recordKey(rec.Name), bytes.NewReader(data), int64(len(data)), etag)
	if err != nil {
		return "", err
	}
	return info.ETag, nil
}

// lostSwap is whether err is a put-if-match that lost to another writer.
func lostSwap(err error) bool {
	return errors.Is(err, storage.ErrPreconditionFailed) || errors.Is(err, storage.ErrExists) ||
		errors.Is(err, storage.ErrNotFound)
}

// decide swaps a Running record to status (Failed or Canceled: never Succeeded, which only the
// owner's commit sets), retrying while the record changes under it. It answers the record as
// decided: a transaction that committed first stays Succeeded.
func (n *Namespace) decide(ctx context.Context, name, status, reason string) (*txnRecord, error) {
	for range 16 {
		rec, etag, err := n.readRecord(ctx, name)
		if err != nil {
			return nil, err
		}
		if rec.Status != catalog.TxnRunning && rec.Status != catalog.TxnQueued {
			return rec, nil
		}
		rec.Status = status
		if reason != "" {
			if rec.Properties == nil {
				rec.Properties = map[string]string{}
			}
			rec.Properties[SystemPropertyPrefix+"reason"] = reason
		}
		if _, err := n.swapRecord(ctx, rec, etag); err == nil {
			return rec, nil
		} else if !lostSwap(err) {
			return nil, err
		}
	}
	return nil, nserr.ConcurrentModificationf("transaction %s kept changing", name)
}

// transactionName checks that id names a transaction of this server and answers its name.
func transactionName(id ident.ID) (string, error) {
	if len(id) == 0 {
		return "", nserr.InvalidInputf("a transaction id is required")
	}
	name := id[len(id)-1]
	if !validName(name) {
		return "", nserr.TransactionNotFoundf("transaction %s not found", quoteID(id))
	}
	return name, nil
}

// validName is whether name is a transaction name this server gives: "txn-" and a UUID.
func validName(name string) bool {
	rest, ok := strings.CutPrefix(name, "txn-")
	if !ok {
		return false
	}
	_, err := uuid.Parse(rest)
	return err == nil && len(rest) == 36
}

// loadTransaction reads the record of id; TransactionNotFound unless it exists in the namespace
// id names (so a caller allowed on one namespace learns nothing about another's).
func (n *Namespace) loadTransaction(ctx context.Context, id ident.ID) (*txnRecord, string, error) {
	name, err := transactionName(id)
	if err != nil {
		return nil, "", err
	}
	rec, etag, err := n.readRecord(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, "", nserr.TransactionNotFoundf("transaction %s not found", quoteID(id))
	}
	if err != nil {
		return nil, "", err
	}
	if !ident.ID(rec.Namespace).Equal(id.Parent()) {
		return nil, "", nserr.TransactionNotFoundf("transaction %s not found", quoteID(id))
	}
	return rec, etag, nil
}

// DescribeTransaction answers transaction id: its status and properties (the caller's and the
// server's, SystemPropertyPrefix).
func (n *Namespace) DescribeTransaction(ctx context.Context, id ident.ID) (catalog.Transaction, error) {
	rec, _, err := n.loadTransaction(ctx, id)
	if err != nil {
		return catalog.Transaction{}, err
	}
	// Succeeded means visible: a committed batch whose owner died before publishing its catalog
	// rows is finished here (batch_catalog.go).
	if err := n.settleManifest(ctx, rec); err != nil {
		return catalog.Transaction{}, err
	}
	return rec.transaction(), nil
}

// normalize reads a case-insensitive PascalCase or snake_case spec enum value.
func normalize(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "") }

// ParseTransactionStatus reads a status as the spec spells it (case-insensitive, PascalCase or
// snake_case).
func ParseTransactionStatus(s string) (string, error) {
	for _, st := range []string{catalog.TxnQueued, catalog.TxnRunning, catalog.TxnSucceeded, catalog.TxnFailed, catalog.TxnCanceled} {
		if normalize(s) == normalize(st) {
			return st, nil
		}
	}
	if normalize(s) == "cancelled" {
		return catalog.TxnCanceled, nil
	}
	return "", nserr.InvalidInputf("status %q is not one of Queued, Running, Succeeded, Failed, Canceled", s)
}

// apply applies actions to rec, or none: the first refused action refuses them all.
func apply(rec *txnRecord, actions []catalog.TransactionAction) error {
	if len(actions) == 0 {
		return nserr.InvalidInputf("actions must name at least one action")
	}
	props := maps.Clone(rec.Properties)
	if props == nil {
		props = map[string]string{}
	}
	status := rec.Status
	for i, a := range actions {
		set := 0
		for _, b := range []bool{a.SetStatus != nil, a.Set != nil, a.Unset != nil} {
			if b {
				set++
			}
		}
		if set != 1 {
			return nserr.InvalidInputf("actions[%d] must set exactly one of setStatusAction, setPropertyAction, unsetPropertyAction", i)
		}
		switch {
		case a.SetStatus != nil:
			to, err := ParseTransactionStatus(*a.SetStatus)
			if err != nil {
				return nserr.InvalidInputf("actions[%d]: %v", i, err)
			}
			if to == status {
				continue
			}
			// Only an undecided transaction changes status, and only to a failure: success is
			// decided by the commit itself, and a decided transaction cannot be undone.
			if (status != catalog.TxnRunning && status != catalog.TxnQueued) || (to != catalog.TxnFailed && to != catalog.TxnCanceled) {
				return nserr.InvalidInputf("actions[%d]: transaction is %s; it cannot become %s", i, status, to)
			}
			status = to
		case a.Set != nil:
			if err := userKey(i, a.Set.Key); err != nil {
				return err
			}
			_, exists := props[a.Set.Key]
			switch normalize(a.Set.Mode) {
			case "", "overwrite":
				props[a.Set.Key] = a.Set.Value
			case "fail":
				if exists {
					return nserr.InvalidInputf("actions[%d]: property %q is already set", i, a.Set.Key)
				}
				props[a.Set.Key] = a.Set.Value
			case "skip":
				if !exists {
					props[a.Set.Key] = a.Set.Value
				}
			default:
				return nserr.InvalidInputf("actions[%d]: mode %q is not Overwrite, Fail or Skip", i, a.Set.Mode)
			}
		case a.Unset != nil:
			if err := userKey(i, a.Unset.Key); err != nil {
				return err
			}
			_, exists := props[a.Unset.Key]
			switch normalize(a.Unset.Mode) {
			case "", "skip":
			case "fail":
				if !exists {
					return nserr.InvalidInputf("actions[%d]: property %q is not set", i, a.Unset.Key)
				}
			default:
				return nserr.InvalidInputf("actions[%d]: mode %q is not Skip or Fail", i, a.Unset.Mode)
			}
			delete(props, a.Unset.Key)
		}
	}
	rec.Properties, rec.Status = props, status
	return nil
}

func userKey(i int, key string) error {
	if key == "" {
		return nserr.InvalidInputf("actions[%d]: key is empty", i)
	}
	if strings.HasPrefix(key, SystemPropertyPrefix) {
		return nserr.InvalidInputf("actions[%d]: property %q is kept by the server", i, key)
	}
	return nil
}

// AlterTransaction applies actions to transaction id all together or not at all: they are
// checked against the record as read and written with one put-if-match, retried from a fresh
// read when another change came first. Canceling a running transaction makes its commit fail.
func (n *Namespace) AlterTransaction(ctx context.Context, id ident.ID, actions []catalog.TransactionAction) (catalog.Transaction, error) {
	for range 16 {
		rec, etag, err := n.loadTransaction(ctx, id)
		if err != nil {
			return catalog.Transaction{}, err
		}
		if err := apply(rec, actions); err != nil {
			return catalog.Transaction{}, err
		}
		_, err = n.swapRecord(ctx, rec, etag)
		if err == nil {
			return rec.transaction(), nil
		}
		if !lostSwap(err) {
			return catalog.Transaction{}, fmt.Errorf("namespace: alter transaction %s: %w", quoteID(id), err)
		}
	}
	return catalog.Transaction{}, nserr.ConcurrentModificationf("transaction %s kept changing; try again", quoteID(id))
}
