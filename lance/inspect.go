package lance

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// OpenURI opens the dataset at uri: an absolute local path, file:///…, or
// s3://bucket/prefix (reached with s3). The location recorded for branch
// base paths is the absolute path for local datasets and the URI for S3.
func OpenURI(ctx context.Context, uri string, s3 storage.S3Config) (*Dataset, error) {
	// storage.ResolveRoot: the one parser of a location given by a person (s3:/x is refused, not
	// taken for a local directory named "s3:").
	uri, err := storage.ResolveRoot(strings.TrimRight(uri, "/"))
	if err != nil {
		return nil, err
	}
	loc := uri
	if strings.HasPrefix(uri, "file://") {
		u, err := url.Parse(uri)
		if err != nil {
			return nil, err
		}
		loc = filepath.Clean(u.Path)
	}
	b, err := storage.Open(ctx, uri, s3)
	if err != nil {
		return nil, err
	}
	return NewDatasetAt(b, loc), nil
}

// FieldInfo is one field of the flattened schema.
type FieldInfo struct {
	ID          int32             `json:"id"`
	Path        string            `json:"path"`
	LogicalType string            `json:"logical_type"`
	Nullable    bool              `json:"nullable"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// FragmentInfo is one fragment as the manifest lists it.
type FragmentInfo struct {
	ID           uint64   `json:"id"`
	Files        []string `json:"files"`
	PhysicalRows uint64   `json:"physical_rows"`
	DeletedRows  uint64   `json:"deleted_rows"`
	DeletionFile string   `json:"deletion_file,omitempty"`
}

// IndexInfo is one logical index (all segments of one name).
type IndexInfo struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Columns  []string `json:"columns"`
	Segments []string `json:"segments"` // uuids
	// DatasetVersion is the newest version a segment was built from.
	DatasetVersion uint64 `json:"dataset_version"`
	// Fragments is how many fragments the segments cover.
	Fragments int `json:"fragments"`
	// IndexVersion is the newest segment's index format version (Lance's index_version).
	IndexVersion int32 `json:"index_version"`
	// RowAddresses: a segment records rows by address rather than by stable row id, on a
	// dataset with stable row ids (IndexStoresAddresses: Lance 14's BTREE).
	RowAddresses bool `json:"row_addresses,omitempty"`
}

// InspectReport is everything the manifest of one version says.
type InspectReport struct {
	Location      string    `json:"location"`
	Branch        string    `json:"branch,omitempty"`
	Version       uint64    `json:"version"`
	Timestamp     time.Time `json:"timestamp"`
	NamingScheme  string    `json:"naming_scheme"`
	WriterVersion string    `json:"writer_version"`
	DataFormat    string    `json:"data_format"`
	// DataFileVersions are the versions of the version's data files ("2.1", "2.2"), distinct,
	// sorted: more than the data format's when Lance 14 appended files of a newer one.
	DataFileVersions []string `json:"data_file_versions"`
	// Unreadable are the data file versions lancecat does not read (its scans of them answer 406).
	Unreadable  []string `json:"unreadable_data_file_versions,omitempty"`
	ReaderFlags uint64   `json:"reader_feature_flags"`
	WriterFlags uint64   `json:"writer_feature_flags"`
	// ReaderFlagNames and WriterFlagNames name the flags' bits (FeatureFlagNames).
	ReaderFlagNames []string          `json:"reader_feature_flag_names"`
	WriterFlagNames []string          `json:"writer_feature_flag_names"`
	Operation       string            `json:"operation"`
	ReadVersion     uint64            `json:"read_version"`
	Rows            *uint64           `json:"rows"`
	Stats           *TableStats       `json:"stats,omitempty"`
	Schema          JSONSchema        `json:"schema"`
	Fields          []FieldInfo       `json:"fields"`
	Config          map[string]string `json:"config,omitempty"`
	TableMetadata   map[string]string `json:"table_metadata,omitempty"`
	Fragments       []FragmentInfo    `json:"fragments"`
	Indices         []IndexInfo       `json:"indices"`
	Tags            []Tag             `json:"tags"`
	Branches        []Branch          `json:"branches"`
}

// Inspect describes version (0: the latest) from its manifest and the refs.
func (d *Dataset) Inspect(ctx context.Context, version uint64) (*InspectReport, error) {
	var v *Version
	var err error
	if version == 0 {
		v, err = d.OpenLatest(ctx)
	} else {
		v, err = d.OpenVersion(ctx, version)
	}
	if err != nil {
		return nil, err
	}
	m := v.Manifest()
	r := &InspectReport{
		Location: d.location, Branch: d.branch, Version: v.Number(), Timestamp: v.Timestamp(),
		NamingScheme:  v.Location.Scheme.String(),
		WriterVersion: strings.TrimSpace(m.GetWriterVersion().GetLibrary() + " " + m.GetWriterVersion().GetVersion()),
		DataFormat:    strings.TrimSpace(m.GetDataFormat().GetFileFormat() + " " + m.GetDataFormat().GetVersion()),
		ReaderFlags:   m.GetReaderFeatureFlags(), WriterFlags: m.GetWriterFeatureFlags(),
		ReaderFlagNames: FeatureFlagNames(m.GetReaderFeatureFlags()), WriterFlagNames: FeatureFlagNames(m.GetWriterFeatureFlags()),
		Config: m.GetConfig(), TableMetadata: m.GetTableMetadata(),
		Fragments: []FragmentInfo{}, Indices: []IndexInfo{}, Fields: []FieldInfo{}, DataFileVersions: []string{},
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			name := storageVersionName(df.GetFileMajorVersion(), df.GetFileMinorVersion())
			if !slices.Contains(r.DataFileVersions, name) {
				r.DataFileVersions = append(r.DataFileVersions, name)
				if checkReadableFile(f.GetId(), df) != nil {
					r.Unreadable = append(r.Unreadable, name)
				}
			}
		}
	}
	slices.Sort(r.DataFileVersions)
	slices.Sort(r.Unreadable)
	if txn, err := d.ReadTransaction(ctx, v); err == nil {
		r.Operation, r.ReadVersion = OperationName(txn), txn.GetReadVersion()
	}
	if n, err := v.CountRows(); err == nil {
		r.Rows = &n
	}
	if s, err := v.Stats(); err == nil {
		r.Stats = &s
	}
	if r.Schema, err = v.JSONSchema(); err != nil {
		return nil, err
	}
	for _, f := range v.Fields() {
		fi := FieldInfo{ID: f.GetId(), Path: FieldPath(v.Fields(), f.GetId()), LogicalType: f.GetLogicalType(), Nullable: f.GetNullable()}
		if len(f.GetMetadata()) > 0 {
			fi.Metadata = map[string]string{}
			for k, val := range f.GetMetadata() {
				fi.Metadata[k] = string(val)
			}
		}
		r.Fields = append(r.Fields, fi)
	}
	for _, f := range m.GetFragments() {
		fi := FragmentInfo{ID: f.GetId(), PhysicalRows: f.GetPhysicalRows(), Files: []string{}}
		for _, df := range f.GetFiles() {
			fi.Files = append(fi.Files, df.GetPath())
		}
		if del := f.GetDeletionFile(); del != nil {
			fi.DeletedRows = del.GetNumDeletedRows()
			fi.DeletionFile = strings.TrimPrefix(DeletionFileKey(f.GetId(), del), DeletionsDir)
		}
		r.Fragments = append(r.Fragments, fi)
	}
	r.Indices = ListIndices(v)
	if r.Tags, err = d.ListTags(ctx); err != nil {
		return nil, err
	}
	if r.Branches, err = d.ListBranches(ctx); err != nil {
		return nil, err
	}
	if r.Tags == nil {
		r.Tags = []Tag{}
	}
	if r.Branches == nil {
		r.Branches = []Branch{}
	}
	return r, nil
}

// ListIndices groups the version's index segments by name.
func ListIndices(v *Version) []IndexInfo {
	out := []IndexInfo{}
	for _, name := range IndexNames(v.Indices()) {
		info := IndexInfo{Name: name, Columns: []string{}, Segments: []string{}}
		covered := map[uint32]bool{}
		for _, idx := range v.Indices() {
			if idx.GetName() != name {
				continue
			}
			info.Segments = append(info.Segments, FormatUUID(idx.GetUuid().GetUuid()))
			if idx.GetDatasetVersion() >= info.DatasetVersion {
				info.IndexVersion = idx.GetIndexVersion()
			}
			info.DatasetVersion = max(info.DatasetVersion, idx.GetDatasetVersion())
			info.RowAddresses = info.RowAddresses || v.StableRowIDs() && IndexStoresAddresses(idx)
			if info.Type == "" {
				info.Type = IndexType(idx.GetIndexDetails().GetTypeUrl())
			}
			for _, id := range idx.GetFields() {
				if p := FieldPath(v.Fields(), id); p != "" && !slices.Contains(info.Columns, p) {
					info.Columns = append(info.Columns, p)
				}
			}
			if bm, err := decodeFragmentBitmap(idx.GetFragmentBitmap()); err == nil {
				for _, f := range bm {
					covered[f] = true
				}
			}
		}
		info.Fragments = len(covered)
		out = append(out, info)
	}
	return out
}

// IndexType names an index type from its details' type URL
// ("/lance.table.BTreeIndexDetails" → "BTree"; vector indices → "Vector").
func IndexType(typeURL string) string {
	name := typeURL[strings.LastIndexAny(typeURL, "/.")+1:]
	name = strings.TrimSuffix(name, "IndexDetails")
	if name == "" {
		return "Unknown"
	}
	return name
}

// VersionEntry is one line of a version listing.
type VersionEntry struct {
	Version   uint64    `json:"version"`
	Timestamp time.Time `json:"timestamp"`
	Operation string    `json:"operation"`
	Rows      *uint64   `json:"rows"`
	Tags      []string  `json:"tags,omitempty"`
}

// VersionHistory lists every version with its operation, row count and
// tags (one manifest read per version).
func (d *Dataset) VersionHistory(ctx context.Context) ([]VersionEntry, error) {
	locs, err := d.manifestLocations(ctx)
	if err != nil {
		return nil, err
	}
	if len(locs) == 0 {
		return nil, ErrDatasetNotFound
	}
	tags, err := d.ListTags(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]VersionEntry, len(locs))
	for i, loc := range locs {
		v, err := d.open(ctx, loc)
		if err != nil {
			return nil, err
		}
		e := VersionEntry{Version: v.Number(), Timestamp: v.Timestamp(), Operation: "?"}
		if txn, err := d.ReadTransaction(ctx, v); err == nil {
			e.Operation = OperationName(txn)
		}
		if n, err := v.CountRows(); err == nil {
			e.Rows = &n
		}
		for _, t := range tags {
			if t.Version == v.Number() && sameBranch(t.Branch, d.branch) {
				e.Tags = append(e.Tags, t.Name)
			}
		}
		out[i] = e
	}
	return out, nil
}

func fmtRows(n *uint64) string {
	if n == nil {
		return "?"
	}
	return fmt.Sprint(*n)
}

// decodeFragmentBitmap reads an index's fragment bitmap (32-bit Roaring,
// portable serialization).
func decodeFragmentBitmap(data []byte) ([]uint32, error) {
	if len(data) == 0 {
		return nil, nil
	}
	dv, err := DecodeDeletionFile(tablepb.DeletionFile_BITMAP, data)
	if err != nil {
		return nil, err
	}
	return dv.Rows(), nil
}

// WriteText prints the report for people.
func (r *InspectReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("location\t%s\n", r.Location)
	if r.Branch != "" {
		p("branch\t%s\n", r.Branch)
	}
	p("version\t%d (%s, %s naming)\n", r.Version, r.Timestamp.Format(time.RFC3339), r.NamingScheme)
	p("operation\t%s (read version %d)\n", r.Operation, r.ReadVersion)
	p("writer\t%s\n", r.WriterVersion)
	format := r.DataFormat
	if files := r.DataFileVersions; len(files) > 1 || len(files) == 1 && !strings.HasSuffix(r.DataFormat, " "+files[0]) {
		format += " (data files " + strings.Join(files, ", ") + ")"
	}
	if len(r.Unreadable) > 0 {
		format += "; lancecat does not read " + strings.Join(r.Unreadable, ", ")
	}
	p("data format\t%s\n", format)
	p("feature flags\treader %s, writer %s\n", flagsText(r.ReaderFlags, r.ReaderFlagNames), flagsText(r.WriterFlags, r.WriterFlagNames))
	p("rows\t%s\n", fmtRows(r.Rows))
	if s := r.Stats; s != nil {
		p("fragments\t%d (%d small), %d data files, %d deletion files, %d bytes\n", s.NumFragments, s.NumSmallFragments, s.NumDataFiles, s.NumDeletionFiles, s.TotalBytes)
	}
	p("\nschema\n")
	for _, f := range r.Fields {
		null := "not null"
		if f.Nullable {
			null = "nullable"
		}
		p("  %d\t%s\t%s\t%s\n", f.ID, f.Path, f.LogicalType, null)
	}
	if len(r.Indices) > 0 {
		p("\nindices\n")
		for _, ix := range r.Indices {
			rows := ""
			if ix.RowAddresses {
				rows = ", of row addresses"
			}
			p("  %s\t%s\t%s\t%d segment(s), %d fragment(s), built at version %d, index version %d%s\n", ix.Name, ix.Type, strings.Join(ix.Columns, ","), len(ix.Segments), ix.Fragments, ix.DatasetVersion, ix.IndexVersion, rows)
		}
	}
	if len(r.Tags) > 0 {
		p("\ntags\n")
		writeTags(p, r.Tags)
	}
	if len(r.Branches) > 0 {
		p("\nbranches\n")
		for _, b := range r.Branches {
			parent := "main"
			if b.ParentBranch != nil {
				parent = *b.ParentBranch
			}
			p("  %s\tfrom %s@%d\n", b.Name, parent, b.ParentVersion)
		}
	}
	return tw.Flush()
}

// flagsText is a feature flag word with the names of its bits: "256 (mixed file versions)".
func flagsText(flags uint64, names []string) string {
	if flags == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", flags, strings.Join(names, ", "))
}

func writeTags(p func(string, ...any), tags []Tag) {
	for _, t := range tags {
		on := ""
		if t.Branch != nil {
			on = " on " + *t.Branch
		}
		p("  %s\tversion %d%s\n", t.Name, t.Version, on)
	}
}

// WriteTagsText prints tags for people.
func WriteTagsText(w io.Writer, tags []Tag) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	writeTags(func(f string, a ...any) { fmt.Fprintf(tw, f, a...) }, tags)
	return tw.Flush()
}

// WriteVersionsText prints a version listing for people.
func WriteVersionsText(w io.Writer, entries []VersionEntry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "VERSION\tTIMESTAMP\tOPERATION\tROWS\tTAGS\n")
	for _, e := range entries {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", e.Version, e.Timestamp.Format(time.RFC3339), e.Operation, fmtRows(e.Rows), strings.Join(e.Tags, ","))
	}
	return tw.Flush()
}

// WriteText prints the cleanup report for people.
func (r CleanupReport) WriteText(w io.Writer) error {
	verb := "removed"
	if r.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(w, "%s %d version(s) %v, %d file(s), %d bytes; kept %d version(s)\n", verb, len(r.RemovedVersions), r.RemovedVersions, len(r.RemovedFiles), r.BytesRemoved, len(r.KeptVersions))
	for _, f := range r.RemovedFiles {
		fmt.Fprintf(w, "  %s\n", f)
	}
	return nil
}
