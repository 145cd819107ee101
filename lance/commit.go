package lance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancecat/lancecat/internal/buildinfo"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// TransactionsDir holds one Transaction protobuf per commit attempt, named
// {read_version}-{uuid}.txn. Rust writers read them (or the inline copy) to
// rebase their own commits over ours, so every commit writes one.
const TransactionsDir = "_transactions/"

// WriterLibrary and WriterVersion are what our manifests record in
// writer_version. A library other than "lance" tells Rust writers not to
// apply their workarounds for bugs of old Lance releases. The version is this
// build's, as semver (internal/buildinfo: "0.3.0" for a release stamped by the
// Makefile, "0.0.0-dev+<commit>" for a checkout's build), so a table says which
// lancecat wrote each of its versions, as Rust Lance's say which Lance did.
const WriterLibrary = "lancecat"

// WriterVersion: see WriterLibrary.
var WriterVersion = buildinfo.Get().Semver()

// DefaultCommitRetries is how often a commit that lost a race is rebuilt
// on the new head before giving up (Rust's default is 20 as well).
const DefaultCommitRetries = 20

// Operation is one change committed as a new version. The implementations
// in this package are the metadata-only operations (UpdateConfig, Project,
// Restore) that the catalog performs without touching data files.
type Operation interface {
	// Name is the Lance operation name ("UpdateConfig", "Project", …).
	Name() string
	// build turns c.next (a deep copy of the head's manifest file) into the
	// next version's content and sets c.txn's operation. It is called once
	// per attempt, always on the newest head, so an operation rebased over
	// other commits is rebuilt from the state they left.
	build(ctx context.Context, c *buildContext) error
	// compatible reports whether other, a transaction committed after our
	// read version, leaves this operation's intent intact, so that it may
	// be rebuilt on top of it. false means ConcurrentModification.
	compatible(other *tablepb.Transaction) bool
}

type buildContext struct {
	ds   *Dataset
	head *Version
	next *ManifestFile
	txn  *tablepb.Transaction
}

// CommitOptions tune Dataset.Commit.
type CommitOptions struct {
	// ReadVersion is the version the caller based the operation on; commits
	// after it are checked for conflicts. 0 means the latest version when
	// Commit starts.
	ReadVersion uint64
	// MaxRetries caps the attempts after a lost race; 0 means
	// DefaultCommitRetries, < 0 means no retry.
	MaxRetries int
	// Now overrides the commit timestamp (tests); zero means time.Now.
	Now time.Time
}

// ErrCommitConflict is the kind of every error that means "another writer
// committed something this operation cannot be rebased over" (the catalog
// answers ConcurrentModification).
var ErrCommitConflict = errors.New("lance: commit conflict")

func conflictError(format string, args ...any) error {
	return Errorf(ErrCommitConflict, "%w: "+format, append([]any{ErrCommitConflict}, args...)...)
}

// Commit publishes op as the version after the newest one. A lost race (the
// version was published by someone else first) is retried on the new head
// when every transaction committed since ReadVersion is compatible with op;
// otherwise the error is of kind ErrCommitConflict.
//
// Nothing a reader can see changes until the manifest's put-if-absent
// succeeds: the transaction file written before it is an orphan if we crash
// or lose, and the version hint after it is only a hint.
func (d *Dataset) Commit(ctx context.Context, op Operation, opts CommitOptions) (*Version, error) {
	retries := opts.MaxRetries
	if retries == 0 {
		retries = DefaultCommitRetries
	}
	readVersion := opts.ReadVersion
	checked := uint64(0) // versions <= checked are known compatible
	for attempt := 0; ; attempt++ {
		head, err := d.OpenLatest(ctx)
		if err != nil {
			return nil, err
		}
		if readVersion == 0 {
			readVersion = head.Number()
		}
		if checked < readVersion {
			checked = readVersion
		}
		if head.Number() < readVersion {
			return nil, fmt.Errorf("%w: read version %d is newer than the latest version %d", ErrVersionNotFound, readVersion, head.Number())
		}
		for v := checked + 1; v <= head.Number(); v++ {
			other, err := d.transactionOf(ctx, v, head)
			if err != nil {
				return nil, conflictError("cannot check version %d for conflicts with %s: %v", v, op.Name(), err)
			}
			if !op.compatible(other) {
				if r, ok := op.(interface {
					retryable(*tablepb.Transaction) bool
				}); ok && r.retryable(other) {
					return nil, RetryableConflict("%s based on version %d was preempted by %s committed as version %d; retry",
						op.Name(), readVersion, operationName(other), v)
				}
				return nil, conflictError("%s based on version %d conflicts with %s committed as version %d",
					op.Name(), readVersion, operationName(other), v)
			}
			checked = v
		}
		next, err := d.buildNext(ctx, op, head, readVersion, opts.Now)
		if err != nil {
			return nil, err
		}
		v, err := d.publish(ctx, head, next)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, ErrVersionExists) {
			return nil, err
		}
		if retries < 0 || attempt >= retries {
			return nil, conflictError("%s: gave up after %d attempts: %v", op.Name(), attempt+1, err)
		}
		// Slotted, jittered backoff so racing writers spread out.
		delay := time.Duration(rand.IntN(5*(attempt+1))+1) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// transactionOf loads the transaction that produced version v (inline, or
// from _transactions/); head is reused when v is the head.
func (d *Dataset) transactionOf(ctx context.Context, v uint64, head *Version) (*tablepb.Transaction, error) {
	ver := head
	if v != head.Number() {
		var err error
		if ver, err = d.OpenVersion(ctx, v); err != nil {
			return nil, err
		}
	}
	return d.ReadTransaction(ctx, ver)
}

// ReadTransaction returns the transaction that produced ver: the inline copy
// when the manifest has one, else the file named by transaction_file.
func (d *Dataset) ReadTransaction(ctx context.Context, ver *Version) (*tablepb.Transaction, error) {
	if t := ver.Transaction(); t != nil {
		return t, nil
	}
	name := ver.Manifest().GetTransactionFile()
	if name == "" {
		return nil, fmt.Errorf("version %d has no transaction", ver.Number())
	}
	data, err := readObject(ctx, d.store, TransactionsDir+name, maxTransactionFileSize)
	if err != nil {
		return nil, fmt.Errorf("read transaction of version %d: %w", ver.Number(), err)
	}
	t := &tablepb.Transaction{}
	if err := proto.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("%w: transaction %s: %w", ErrCorruptManifest, name, err)
	}
	return t, nil
}

// buildNext makes the manifest file of head+1.
func (d *Dataset) buildNext(ctx context.Context, op Operation, head *Version, readVersion uint64, now time.Time) (*ManifestFile, error) {
	if err := CheckWritable(head.Manifest()); err != nil {
		return nil, err
	}
	next := &ManifestFile{Manifest: proto.CloneOf(head.File.Manifest)}
	if head.File.Indices != nil {
		next.Indices = proto.CloneOf(head.File.Indices)
	}
	txn := &tablepb.Transaction{ReadVersion: readVersion, Uuid: uuid.NewString()}
	c := &buildContext{ds: d, head: head, next: next, txn: txn}
	if err := op.build(ctx, c); err != nil {
		return nil, err
	}
	if now.IsZero() {
		now = time.Now()
	}
	m := next.Manifest
	m.Version = head.Number() + 1
	if IsDetachedVersion(m.Version) {
		return nil, fmt.Errorf("lance: version numbers exhausted")
	}
	m.Timestamp = timestamppb.New(now.UTC())
	m.WriterVersion = &tablepb.Manifest_WriterVersion{Library: WriterLibrary, Version: WriterVersion}
	if m.MaxFragmentId != nil || len(m.Fragments) > 0 {
		maxID := uint64(m.GetMaxFragmentId())
		for _, f := range m.Fragments {
			maxID = max(maxID, f.GetId())
		}
		m.MaxFragmentId = proto.Uint32(uint32(maxID))
	}
	setFeatureFlags(m, head.Manifest().GetWriterFeatureFlags()&FlagDisableTransactionFile != 0)
	m.TransactionFile = ""
	if m.GetWriterFeatureFlags()&FlagDisableTransactionFile == 0 {
		m.TransactionFile = TransactionFileName(txn)
	}
	if len(next.Indices.GetIndices()) == 0 {
		next.Indices = nil
	}
	next.Transaction = txn
	return next, nil
}

// TransactionFileName is the name under _transactions/ of txn.
func TransactionFileName(txn *tablepb.Transaction) string {
	return strconv.FormatUint(txn.GetReadVersion(), 10) + "-" + txn.GetUuid() + ".txn"
}

// knownFlags are the feature flags this package understands; a dataset
// with others was written by a newer Lance and must not be written.
const knownFlags = FlagDeletionFiles | FlagStableRowIDs | FlagUseV2FormatDeprecated | FlagTableConfig | FlagBasePaths | FlagDisableTransactionFile | FlagMixedFileVersions

// CheckWritable refuses a manifest whose feature flags this package does
// not know (a writer would drop what they mean).
func CheckWritable(m *tablepb.Manifest) error {
	if f := m.GetWriterFeatureFlags() &^ knownFlags; f != 0 {
		return fmt.Errorf("%w: writer feature flags %#x are not supported", ErrUnsupportedFeature, f)
	}
	if f := m.GetReaderFeatureFlags() &^ knownFlags; f != 0 {
		return fmt.Errorf("%w: reader feature flags %#x are not supported", ErrUnsupportedFeature, f)
	}
	return nil
}

// setFeatureFlags recomputes both flag words from the manifest's content,
// as Lance does on every commit.
func setFeatureFlags(m *tablepb.Manifest, disableTxnFile bool) {
	var reader, writer uint64
	hasDeletions, hasRowIDs := false, false
	for _, f := range m.GetFragments() {
		hasDeletions = hasDeletions || f.GetDeletionFile() != nil
		hasRowIDs = hasRowIDs || f.GetRowIdSequence() != nil
	}
	if hasDeletions {
		reader |= FlagDeletionFiles
		writer |= FlagDeletionFiles
	}
	if hasRowIDs || m.GetReaderFeatureFlags()&FlagStableRowIDs != 0 {
		reader |= FlagStableRowIDs
		writer |= FlagStableRowIDs
	}
	if len(m.GetConfig()) > 0 {
		writer |= FlagTableConfig
	}
	if len(m.GetBasePaths()) > 0 {
		reader |= FlagBasePaths
		writer |= FlagBasePaths
	}
	if disableTxnFile {
		writer |= FlagDisableTransactionFile
	}
	// Sticky, as Lance keeps it: a Lance 14 reader refuses data files of another version than the
	// manifest's without it.
	if m.GetReaderFeatureFlags()&FlagMixedFileVersions != 0 || mixedFileVersions(m) {
		reader |= FlagMixedFileVersions
		writer |= FlagMixedFileVersions
	}
	m.ReaderFeatureFlags, m.WriterFeatureFlags = reader, writer
}

// mixedFileVersions reports whether a fragment of m holds a data file of another version than
// m's data storage version.
func mixedFileVersions(m *tablepb.Manifest) bool {
	want := m.GetDataFormat().GetVersion()
	if want == "" {
		return false
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			if df.GetFileMajorVersion() == 0 && df.GetFileMinorVersion() == 0 {
				continue
			}
			if fmt.Sprintf("%d.%d", df.GetFileMajorVersion(), df.GetFileMinorVersion()) != want {
				return true
			}
		}
	}
	return false
}

// publish writes the transaction file, then the manifest with put-if-absent
// under head's naming scheme, then the hint. ErrVersionExists means the race
// for the version was lost.
func (d *Dataset) publish(ctx context.Context, head *Version, next *ManifestFile) (*Version, error) {
	version := next.Manifest.GetVersion()
	if name := next.Manifest.GetTransactionFile(); name != "" {
		data, err := marshalOpts.Marshal(next.Transaction)
		if err != nil {
			return nil, fmt.Errorf("lance: encode transaction: %w", err)
		}
		if _, err := d.store.Put(ctx, TransactionsDir+name, bytes.NewReader(data), int64(len(data))); err != nil {
			return nil, fmt.Errorf("lance: write transaction file: %w", err)
		}
	}
	// Like Lance, treat the version as taken if either scheme's name for it
	// exists: a writer following the other scheme (a migration, a confused
	// client) must not be able to fork the history.
	scheme := head.Location.Scheme
	for _, other := range []NamingScheme{NamingV1, NamingV2} {
		if other == scheme {
			continue
		}
		_, err := d.store.Stat(ctx, other.ManifestKey(version))
		if err == nil {
			return nil, fmt.Errorf("%w: %d (as %s)", ErrVersionExists, version, other.ManifestKey(version))
		}
		if !errors.Is(err, storage.ErrNotFound) {
			return nil, fmt.Errorf("lance: stat %s: %w", other.ManifestKey(version), err)
		}
	}
	loc, err := d.PutManifest(ctx, scheme, next)
	if err != nil {
		return nil, err
	}
	// Best effort: readers never trust the hint over a listing.
	_ = WriteVersionHint(ctx, d.store, version)
	return &Version{Location: loc, File: next}, nil
}

// operationName is the Lance name of txn's operation.
func operationName(txn *tablepb.Transaction) string {
	switch txn.GetOperation().(type) {
	case *tablepb.Transaction_Append_:
		return "Append"
	case *tablepb.Transaction_Delete_:
		return "Delete"
	case *tablepb.Transaction_Overwrite_:
		return "Overwrite"
	case *tablepb.Transaction_CreateIndex_:
		return "CreateIndex"
	case *tablepb.Transaction_Rewrite_:
		return "Rewrite"
	case *tablepb.Transaction_Merge_:
		return "Merge"
	case *tablepb.Transaction_Restore_:
		return "Restore"
	case *tablepb.Transaction_ReserveFragments_:
		return "ReserveFragments"
	case *tablepb.Transaction_Update_:
		return "Update"
	case *tablepb.Transaction_Project_:
		return "Project"
	case *tablepb.Transaction_UpdateConfig_:
		return "UpdateConfig"
	case *tablepb.Transaction_DataReplacement_:
		return "DataReplacement"
	case *tablepb.Transaction_UpdateMemWalState_:
		return "UpdateMemWalState"
	case *tablepb.Transaction_Clone_:
		return "Clone"
	case *tablepb.Transaction_UpdateBases_:
		return "UpdateBases"
	case nil:
		return "None"
	}
	return "Unknown"
}

// OperationName is the Lance name of the operation recorded in txn
// ("Append", "UpdateConfig", …; "Unknown" for operations newer than our
// protos).
func OperationName(txn *tablepb.Transaction) string { return operationName(txn) }
