package lance

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/lancecat/lancecat/storage"
)

// Refs live at the main branch's root, whichever branch they point into.
const (
	TagsDir     = "_refs/tags/"
	BranchesDir = "_refs/branches/"
	// TreeDir holds one directory per branch: tree/<name>/ (a "/" in the
	// name is a sub-directory).
	TreeDir = "tree/"
)

// maxRefSize bounds reads of tag and branch files (real ones are ~200 B).
const maxRefSize = 1 << 20

// ErrInvalidRef: a tag or branch name Lance would refuse.
var ErrInvalidRef = errors.New("lance: invalid ref name")

// Tag is one _refs/tags/<name>.json. Branch nil means main. Its JSON is the
// file's plus "name"; tagFile is the file itself.
type Tag struct {
	Name         string            `json:"name"`
	Branch       *string           `json:"branch"`
	Version      uint64            `json:"version"`
	CreatedAt    *RefTime          `json:"createdAt,omitempty"`
	UpdatedAt    *RefTime          `json:"updatedAt,omitempty"`
	ManifestSize int64             `json:"manifestSize"`
	Metadata     map[string]string `json:"metadata"`
}

// tagFile is the tag file as Lance writes it, key order included.
type tagFile struct {
	Branch       *string           `json:"branch"`
	Version      uint64            `json:"version"`
	CreatedAt    *RefTime          `json:"createdAt,omitempty"`
	UpdatedAt    *RefTime          `json:"updatedAt,omitempty"`
	ManifestSize *int64            `json:"manifestSize"`
	Metadata     map[string]string `json:"metadata"`
}

func (t Tag) file() tagFile {
	return tagFile{Branch: t.Branch, Version: t.Version, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, ManifestSize: &t.ManifestSize, Metadata: t.Metadata}
}

// RefTime is a timestamp as chrono serializes it: RFC 3339 in UTC with 0,
// 3, 6 or 9 fractional digits, whichever is the shortest exact form.
type RefTime struct{ time.Time }

func (t RefTime) MarshalJSON() ([]byte, error) {
	u := t.UTC()
	layout := "2006-01-02T15:04:05"
	switch ns := u.Nanosecond(); {
	case ns == 0:
	case ns%1_000_000 == 0:
		layout += ".000"
	case ns%1_000 == 0:
		layout += ".000000"
	default:
		layout += ".000000000"
	}
	return json.Marshal(u.Format(layout) + "Z")
}

func (t *RefTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// encodeRef writes JSON as serde_json::to_string_pretty does: two-space
// indent, no trailing newline.
func encodeRef(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func decodeTag(name string, data []byte) (Tag, error) {
	var raw tagFile
	if err := json.Unmarshal(data, &raw); err != nil {
		return Tag{}, fmt.Errorf("lance: tag %q: %w", name, err)
	}
	// Lance cannot list the tags of a dataset with a tag lacking it.
	if raw.ManifestSize == nil {
		return Tag{}, fmt.Errorf("lance: tag %q has no manifestSize", name)
	}
	return Tag{Name: name, Branch: raw.Branch, Version: raw.Version, CreatedAt: raw.CreatedAt, UpdatedAt: raw.UpdatedAt,
		ManifestSize: *raw.ManifestSize, Metadata: raw.Metadata}, nil
}

// MaxRefNameBytes bounds a tag or branch name: each is stored as one file, <name>.json, and most
// filesystems refuse a file name longer than 255 bytes (a longer name used to fail as a 500).
const MaxRefNameBytes = 255 - len(".json")

// CheckTagName applies Lance's rules: non-empty, [A-Za-z0-9._-] (Unicode
// letters and digits too), no leading or trailing ".", no "..", not ending
// in ".lock".
func CheckTagName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: tag name is empty", ErrInvalidRef)
	case len(name) > MaxRefNameBytes:
		return fmt.Errorf("%w: tag name is %d bytes long; at most %d are allowed (it names a file, %s<name>.json)", ErrInvalidRef, len(name), MaxRefNameBytes, TagsDir)
	case !refChars(name):
		return fmt.Errorf("%w: tag %q may only contain letters, digits, '.', '-' and '_'", ErrInvalidRef, name)
	case strings.HasPrefix(name, ".") || strings.HasSuffix(name, "."):
		return fmt.Errorf("%w: tag %q begins or ends with a dot", ErrInvalidRef, name)
	case strings.HasSuffix(name, ".lock"):
		return fmt.Errorf("%w: tag %q ends with .lock", ErrInvalidRef, name)
	case strings.Contains(name, ".."):
		return fmt.Errorf("%w: tag %q contains '..'", ErrInvalidRef, name)
	}
	return nil
}

// CheckBranchName applies Lance's rules: "/"-separated segments of tag
// characters, no empty segment, no "..", not ending in ".lock", not "main".
func CheckBranchName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: branch name is empty", ErrInvalidRef)
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return fmt.Errorf("%w: branch %q begins or ends with '/'", ErrInvalidRef, name)
	case strings.Contains(name, "//"), strings.Contains(name, ".."), strings.Contains(name, `\`):
		return fmt.Errorf("%w: branch %q contains '//', '..' or '\\'", ErrInvalidRef, name)
	case strings.HasSuffix(name, ".lock"):
		return fmt.Errorf("%w: branch %q ends with .lock", ErrInvalidRef, name)
	case name == "main":
		return fmt.Errorf("%w: branch name %q is reserved", ErrInvalidRef, name)
	case len(branchKey(name))-len(BranchesDir) > MaxRefNameBytes+len(".json"):
		return fmt.Errorf("%w: branch name is %d bytes long with each '/' as %%2F; at most %d are allowed (it names a file, %s<name>.json)", ErrInvalidRef, len(branchKey(name))-len(BranchesDir)-len(".json"), MaxRefNameBytes, BranchesDir)
	}
	for seg := range strings.SplitSeq(name, "/") {
		if !refChars(seg) {
			return fmt.Errorf("%w: branch segment %q may only contain letters, digits, '.', '-' and '_'", ErrInvalidRef, seg)
		}
		if seg == "." {
			return fmt.Errorf("%w: branch %q has a '.' segment", ErrInvalidRef, name)
		}
	}
	return nil
}

func refChars(s string) bool {
	for _, c := range s {
		if !(unicode.IsLetter(c) || unicode.IsDigit(c) || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func invalidRef(err error) error { return Errorf(ErrInvalidInput, "%w", err) }

func tagKey(name string) string { return TagsDir + name + ".json" }

// ListTags reads every tag, ordered by version (newest first) then name, as
// Lance lists them.
func (d *Dataset) ListTags(ctx context.Context) ([]Tag, error) {
	objs, err := listAll(ctx, d.root, TagsDir)
	if err != nil {
		return nil, err
	}
	var tags []Tag
	for _, o := range objs {
		name, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, TagsDir), ".json")
		if !ok || strings.Contains(name, "/") {
			continue
		}
		t, err := d.GetTag(ctx, name)
		if errors.Is(err, ErrTagNotFound) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		tags = append(tags, t)
	}
	slices.SortFunc(tags, func(a, b Tag) int {
		if c := cmp.Compare(b.Version, a.Version); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return tags, nil
}

// GetTag reads one tag.
func (d *Dataset) GetTag(ctx context.Context, name string) (Tag, error) {
	if err := CheckTagName(name); err != nil {
		return Tag{}, invalidRef(err)
	}
	data, err := readObject(ctx, d.root, tagKey(name), maxRefSize)
	if errors.Is(err, storage.ErrNotFound) {
		return Tag{}, Errorf(ErrTagNotFound, "tag %q does not exist", name)
	}
	if err != nil {
		return Tag{}, err
	}
	return decodeTag(name, data)
}

// TagVersion is the version a tag points to.
func (d *Dataset) TagVersion(ctx context.Context, name string) (uint64, error) {
	t, err := d.GetTag(ctx, name)
	return t.Version, err
}

// OpenTag opens the version a tag points to (on its branch).
func (d *Dataset) OpenTag(ctx context.Context, name string) (*Version, error) {
	t, err := d.GetTag(ctx, name)
	if err != nil {
		return nil, err
	}
	target, err := d.onBranch(t.Branch)
	if err != nil {
		return nil, err
	}
	return target.OpenVersion(ctx, t.Version)
}

// onBranch is the dataset of branch (nil or "" or "main": main).
func (d *Dataset) onBranch(branch *string) (*Dataset, error) {
	if branch == nil || *branch == "" || *branch == "main" {
		return d.Main(), nil
	}
	return d.Branch(*branch)
}

// CreateTag points a new tag at version of branch ("" for main). It fails
// with TableTagAlreadyExists if the tag exists; the create is atomic
// (put-if-absent), unlike Lance's check-then-put.
func (d *Dataset) CreateTag(ctx context.Context, name string, version uint64, branch string) (Tag, error) {
	return d.putTag(ctx, name, version, branch, true, time.Now())
}

// UpdateTag moves an existing tag to version of branch.
func (d *Dataset) UpdateTag(ctx context.Context, name string, version uint64, branch string) (Tag, error) {
	return d.putTag(ctx, name, version, branch, false, time.Now())
}

func (d *Dataset) putTag(ctx context.Context, name string, version uint64, branch string, create bool, now time.Time) (Tag, error) {
	if err := CheckTagName(name); err != nil {
		return Tag{}, invalidRef(err)
	}
	t := Tag{Name: name, Version: version, Metadata: map[string]string{}}
	if branch != "" && branch != "main" {
		t.Branch = &branch
	}
	if !create {
		old, err := d.GetTag(ctx, name)
		if err != nil {
			return Tag{}, err
		}
		t.CreatedAt = old.CreatedAt
		if old.Metadata != nil {
			t.Metadata = old.Metadata
		}
	}
	target, err := d.onBranch(t.Branch)
	if err != nil {
		return Tag{}, err
	}
	if t.Branch != nil {
		// A tag into a branch that does not exist is refused as such, not as a missing version.
		if _, err := d.Main().GetBranch(ctx, *t.Branch); err != nil {
			return Tag{}, err
		}
	}
	loc, err := target.ResolveVersion(ctx, version)
	if err != nil {
		return Tag{}, Errorf(ErrVersionNotFound, "%w", err)
	}
	t.ManifestSize = loc.Size
	ts := &RefTime{now.UTC()}
	if t.CreatedAt == nil {
		t.CreatedAt = ts
	}
	t.UpdatedAt = ts
	body, err := encodeRef(t.file())
	if err != nil {
		return Tag{}, err
	}
	if create {
		_, err = d.root.PutIfAbsent(ctx, tagKey(name), bytes.NewReader(body), int64(len(body)))
		if errors.Is(err, storage.ErrExists) {
			return Tag{}, Errorf(ErrTagExists, "tag %q already exists", name)
		}
	} else {
		_, err = d.root.Put(ctx, tagKey(name), bytes.NewReader(body), int64(len(body)))
	}
	if err != nil {
		return Tag{}, fmt.Errorf("lance: write tag %q: %w", name, err)
	}
	return t, nil
}

// DeleteTag removes a tag (the version stays).
func (d *Dataset) DeleteTag(ctx context.Context, name string) error {
	if err := CheckTagName(name); err != nil {
		return invalidRef(err)
	}
	if _, err := d.root.Stat(ctx, tagKey(name)); errors.Is(err, storage.ErrNotFound) {
		return Errorf(ErrTagNotFound, "tag %q does not exist", name)
	} else if err != nil {
		return err
	}
	return d.root.Delete(ctx, tagKey(name))
}

// branchKey is _refs/branches/<name with "/" as %2F>.json.
func branchKey(name string) string {
	return BranchesDir + strings.ReplaceAll(name, "/", "%2F") + ".json"
}

// Branch is one _refs/branches/<name>.json; its JSON is the file's plus
// "name" (which the file itself never holds).
type Branch struct {
	Name string `json:"name,omitempty"`
	// ParentBranch nil means the branch was forked from main.
	ParentBranch *string `json:"parentBranch"`
	// Identifier is Lance's lineage record ({"version_mapping": [[v,
	// "uuid"]]}); kept as read.
	Identifier    json.RawMessage   `json:"identifier,omitempty"`
	ParentVersion uint64            `json:"parentVersion"`
	CreateAt      uint64            `json:"createAt"` // unix seconds
	ManifestSize  int64             `json:"manifestSize"`
	Metadata      map[string]string `json:"metadata"`
}

// Main is the handle of the main branch of d's dataset.
func (d *Dataset) Main() *Dataset {
	if d.branch == "" {
		return d
	}
	return &Dataset{store: d.root, root: d.root, location: d.rootLocation()}
}

func (d *Dataset) rootLocation() string {
	if d.branch == "" || d.location == "" {
		return d.location
	}
	return strings.TrimSuffix(d.location, "/"+TreeDir+d.branch)
}

// Branch is the handle of a branch: a dataset under tree/<name>/ sharing
// the root's refs. It does not check that the branch exists.
func (d *Dataset) Branch(name string) (*Dataset, error) {
	if name == "" || name == "main" {
		return d.Main(), nil
	}
	if err := CheckBranchName(name); err != nil {
		return nil, invalidRef(err)
	}
	loc := ""
	if root := d.rootLocation(); root != "" {
		loc = root + "/" + TreeDir + name
	}
	return &Dataset{store: storage.Sub(d.root, TreeDir+name+"/"), root: d.root, location: loc, branch: name}, nil
}

// ListBranches reads every branch file, sorted by name.
func (d *Dataset) ListBranches(ctx context.Context) ([]Branch, error) {
	objs, err := listAll(ctx, d.root, BranchesDir)
	if err != nil {
		return nil, err
	}
	var out []Branch
	for _, o := range objs {
		enc, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, BranchesDir), ".json")
		if !ok || strings.Contains(enc, "/") {
			continue
		}
		name, err := url.PathUnescape(enc)
		if err != nil {
			return nil, fmt.Errorf("lance: branch file %s: %w", o.Key, err)
		}
		b, err := d.GetBranch(ctx, name)
		if errors.Is(err, ErrBranchNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Branch) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// GetBranch reads one branch file.
func (d *Dataset) GetBranch(ctx context.Context, name string) (Branch, error) {
	if err := CheckBranchName(name); err != nil {
		return Branch{}, invalidRef(err)
	}
	data, err := readObject(ctx, d.root, branchKey(name), maxRefSize)
	if errors.Is(err, storage.ErrNotFound) {
		return Branch{}, Errorf(ErrBranchNotFound, "branch %q does not exist", name)
	}
	if err != nil {
		return Branch{}, err
	}
	var b Branch
	if err := json.Unmarshal(data, &b); err != nil {
		return Branch{}, fmt.Errorf("lance: branch %q: %w", name, err)
	}
	b.Name = name
	return b, nil
}
