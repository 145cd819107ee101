package lance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// CreateBranch forks branch name from version of the branch from ("" for
// main; version 0 for its latest), as Lance does: the branch's first
// manifest (tree/<name>/_versions/, same version number) is a shallow clone
// whose inherited files point back at the source through a base path, and
// _refs/branches/<name>.json records the fork. The dataset's location must
// be known (NewDatasetAt): it is what the base path records.
func (d *Dataset) CreateBranch(ctx context.Context, name, from string, version uint64) (Branch, *Version, error) {
	if err := CheckBranchName(name); err != nil {
		return Branch{}, nil, invalidRef(err)
	}
	main := d.Main()
	if main.location == "" {
		return Branch{}, nil, Errorf(ErrInvalidInput, "lance: creating a branch needs the dataset's location")
	}
	src, err := main.Branch(from)
	if err != nil {
		return Branch{}, nil, err
	}
	var srcVer *Version
	if version == 0 {
		srcVer, err = src.OpenLatest(ctx)
	} else {
		srcVer, err = src.OpenVersion(ctx, version)
	}
	if err != nil {
		return Branch{}, nil, Errorf(ErrVersionNotFound, "%w", err)
	}
	if err := CheckWritable(srcVer.Manifest()); err != nil {
		return Branch{}, nil, err
	}
	// A branch of a branch extends its parent's lineage record.
	mapping := [][2]any{}
	if src.branch != "" {
		parent, err := main.GetBranch(ctx, src.branch)
		if err != nil {
			return Branch{}, nil, err
		}
		var id struct {
			VersionMapping [][2]any `json:"version_mapping"`
		}
		if json.Unmarshal(parent.Identifier, &id) == nil {
			mapping = append(mapping, id.VersionMapping...)
		}
	}
	mapping = append(mapping, [2]any{srcVer.Number(), strings.ReplaceAll(uuid.NewString(), "-", "")})
	ident, err := json.Marshal(map[string]any{"version_mapping": mapping})
	if err != nil {
		return Branch{}, nil, err
	}
	b := Branch{
		Name:          name,
		Identifier:    ident,
		ParentVersion: srcVer.Number(),
		CreateAt:      uint64(time.Now().Unix()),
		ManifestSize:  srcVer.Location.Size,
		Metadata:      map[string]string{},
	}
	if src.branch != "" {
		b.ParentBranch = &src.branch
	}
	file := b
	file.Name = "" // omitted: the file name carries it
	body, err := encodeRef(file)
	if err != nil {
		return Branch{}, nil, err
	}
	// The ref is created first, atomically: it is the lock on the name.
	if _, err := d.root.PutIfAbsent(ctx, branchKey(name), bytes.NewReader(body), int64(len(body))); err != nil {
		if errors.Is(err, storage.ErrExists) {
			return Branch{}, nil, Errorf(ErrBranchExists, "branch %q already exists", name)
		}
		return Branch{}, nil, fmt.Errorf("lance: write branch %q: %w", name, err)
	}
	dst, _ := main.Branch(name)
	v, err := dst.cloneFrom(ctx, src, srcVer)
	if err != nil {
		_ = d.root.Delete(ctx, branchKey(name))
		return Branch{}, nil, err
	}
	return b, v, nil
}

// cloneFrom writes d's first manifest: a shallow clone of srcVer.
func (d *Dataset) cloneFrom(ctx context.Context, src *Dataset, srcVer *Version) (*Version, error) {
	next := &ManifestFile{Manifest: proto.CloneOf(srcVer.File.Manifest)}
	if srcVer.File.Indices != nil {
		next.Indices = proto.CloneOf(srcVer.File.Indices)
	}
	m := next.Manifest
	// Files the source wrote itself (no base_id) are reached through a base
	// path to the source's directory; files it inherited keep theirs.
	var baseID uint32
	found := false
	for _, bp := range m.GetBasePaths() {
		if bp.GetIsDatasetRoot() && bp.GetPath() == src.location {
			baseID, found = bp.GetId(), true
		}
	}
	if !found {
		for _, bp := range m.GetBasePaths() {
			baseID = max(baseID, bp.GetId()+1)
		}
		m.BasePaths = append(m.BasePaths, &tablepb.BasePath{Id: baseID, IsDatasetRoot: true, Path: src.location})
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			if df.BaseId == nil {
				df.BaseId = proto.Uint32(baseID)
			}
		}
		if del := f.GetDeletionFile(); del != nil && del.BaseId == nil {
			del.BaseId = proto.Uint32(baseID)
		}
	}
	for _, idx := range next.Indices.GetIndices() {
		if idx.BaseId == nil {
			idx.BaseId = proto.Uint32(baseID)
		}
	}
	branch := d.branch
	m.Branch = &branch
	txn := &tablepb.Transaction{
		ReadVersion: srcVer.Number(),
		Uuid:        uuid.NewString(),
		Operation: &tablepb.Transaction_Clone_{Clone: &tablepb.Transaction_Clone{
			IsShallow:  true,
			RefVersion: srcVer.Number(),
			RefPath:    src.location,
			BranchName: &branch,
		}},
	}
	m.Timestamp = timestamppb.New(time.Now().UTC())
	m.WriterVersion = &tablepb.Manifest_WriterVersion{Library: WriterLibrary, Version: WriterVersion}
	setFeatureFlags(m, false)
	m.TransactionFile = TransactionFileName(txn)
	next.Transaction = txn
	head := &Version{Location: ManifestLocation{Scheme: srcVer.Location.Scheme}}
	return d.publish(ctx, head, next)
}

// DeleteBranch removes a branch's ref and its tree/<name>/ directory (but
// not the directories of other branches nested under that path). A branch
// that other branches were forked from is refused: their files live in it.
// So is a branch a tag points into: the tag would name a version whose
// manifest is gone (Lance keeps tagged versions through cleanup for the same
// reason); the tags are named so the caller can delete or move them first.
func (d *Dataset) DeleteBranch(ctx context.Context, name string) error {
	if err := CheckBranchName(name); err != nil {
		return invalidRef(err)
	}
	branches, err := d.ListBranches(ctx)
	if err != nil {
		return err
	}
	tags, err := d.Main().ListTags(ctx)
	if err != nil {
		return err
	}
	var pinned []string
	for _, t := range tags {
		if t.Branch != nil && *t.Branch == name {
			pinned = append(pinned, t.Name)
		}
	}
	if len(pinned) > 0 {
		slices.Sort(pinned)
		return Errorf(ErrInvalidTableState, "lance: branch %q has tags pointing into it (%s): delete or move them first", name, strings.Join(pinned, ", "))
	}
	exists := false
	var nested []string
	for _, b := range branches {
		if b.Name == name {
			exists = true
			continue
		}
		if b.ParentBranch != nil && *b.ParentBranch == name {
			return Errorf(ErrInvalidTableState, "lance: branch %q has child branch %q", name, b.Name)
		}
		if strings.HasPrefix(b.Name, name+"/") {
			nested = append(nested, TreeDir+b.Name+"/")
		}
	}
	if !exists {
		return Errorf(ErrBranchNotFound, "branch %q does not exist", name)
	}
	if err := d.root.Delete(ctx, branchKey(name)); err != nil {
		return fmt.Errorf("lance: delete branch %q: %w", name, err)
	}
	objs, err := listAll(ctx, d.root, TreeDir+name+"/")
	if err != nil {
		return err
	}
	for _, o := range objs {
		if containsPrefix(nested, o.Key) {
			continue
		}
		if err := d.root.Delete(ctx, o.Key); err != nil {
			return fmt.Errorf("lance: delete %s: %w", o.Key, err)
		}
	}
	return nil
}

func containsPrefix(prefixes []string, key string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
