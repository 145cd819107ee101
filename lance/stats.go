package lance

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// SmallFragmentRows: fragments with fewer live rows count as small (worth
// compacting), as LanceDB's table stats count them.
const SmallFragmentRows = 100_000

// TableStats is what LanceDB's stats() reports, computed from the manifest
// alone (no data file is read).
type TableStats struct {
	Version uint64 `json:"version"`
	// TotalBytes is data files plus index files, as LanceDB 0.39 counts
	// (0.31 summed column sizes read from the data files instead).
	TotalBytes uint64 `json:"total_bytes"`
	DataBytes  uint64 `json:"data_bytes"`
	IndexBytes uint64 `json:"index_bytes"`
	NumRows    uint64 `json:"num_rows"`
	NumIndices int    `json:"num_indices"`
	// Fragment statistics (physical rows per fragment, as LanceDB counts).
	NumFragments      int             `json:"num_fragments"`
	NumSmallFragments int             `json:"num_small_fragments"`
	Lengths           FragmentLengths `json:"lengths"`
	// The rest is Lance's manifest summary.
	NumDataFiles     int    `json:"num_data_files"`
	NumDeletionFiles int    `json:"num_deletion_files"`
	PhysicalRows     uint64 `json:"physical_rows"`
	DeletedRows      uint64 `json:"deleted_rows"`
}

// FragmentLengths summarizes physical rows per fragment; percentiles are the
// element at floor(p·n) of the sorted lengths, as LanceDB computes them.
type FragmentLengths struct {
	Min  uint64 `json:"min"`
	Max  uint64 `json:"max"`
	Mean uint64 `json:"mean"`
	P25  uint64 `json:"p25"`
	P50  uint64 `json:"p50"`
	P75  uint64 `json:"p75"`
	P99  uint64 `json:"p99"`
}

// Stats computes the version's statistics from its manifest.
func (v *Version) Stats() (TableStats, error) {
	s := TableStats{Version: v.Number()}
	var lengths []uint64
	for _, f := range v.Manifest().GetFragments() {
		for _, df := range f.GetFiles() {
			s.NumDataFiles++
			s.DataBytes += df.GetFileSizeBytes()
		}
		if f.GetDeletionFile() != nil {
			s.NumDeletionFiles++
		}
	}
	for _, fs := range v.Fragments() {
		if !fs.RowsKnown {
			return TableStats{}, fmt.Errorf("%w: fragment %d of version %d", ErrRowCountUnknown, fs.ID, v.Number())
		}
		s.PhysicalRows += fs.PhysicalRows
		s.DeletedRows += fs.DeletedRows
		// LanceDB measures fragments by physical rows (deleted ones too).
		lengths = append(lengths, fs.PhysicalRows)
		s.NumRows += fs.LiveRows()
		if fs.PhysicalRows < SmallFragmentRows {
			s.NumSmallFragments++
		}
	}
	s.NumFragments = len(lengths)
	if n := len(lengths); n > 0 {
		slices.Sort(lengths)
		at := func(p int) uint64 { return lengths[min(n*p/100, n-1)] }
		s.Lengths = FragmentLengths{
			Min: lengths[0], Max: lengths[n-1], Mean: s.PhysicalRows / uint64(n),
			P25: at(25), P50: at(50), P75: at(75), P99: at(99),
		}
	}
	s.NumIndices = len(IndexNames(v.Indices()))
	for _, idx := range v.Indices() {
		for _, f := range IndexFiles(idx) {
			s.IndexBytes += f.Size
		}
	}
	s.TotalBytes = s.DataBytes + s.IndexBytes
	return s, nil
}

// IndexFile is one file of an index segment as the manifest lists it.
type IndexFile struct {
	Path string `json:"path"`
	Size uint64 `json:"size_bytes"`
}

// indexFilesField is IndexMetadata.files (repeated IndexFile{path=1,
// size_bytes=2}), written by Lance 8.0 but newer than our protos: it is
// read from the message's unknown fields.
const indexFilesField = 10

// IndexFiles lists the files a segment records (empty for older writers).
func IndexFiles(idx *tablepb.IndexMetadata) []IndexFile {
	var out []IndexFile
	b := idx.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out
		}
		b = b[n:]
		if num != indexFilesField || typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return out
			}
			b = b[m:]
			continue
		}
		msg, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return out
		}
		b = b[m:]
		var f IndexFile
		for len(msg) > 0 {
			fn, ft, k := protowire.ConsumeTag(msg)
			if k < 0 {
				break
			}
			msg = msg[k:]
			switch {
			case fn == 1 && ft == protowire.BytesType:
				v, k := protowire.ConsumeBytes(msg)
				if k < 0 {
					return out
				}
				f.Path, msg = string(v), msg[k:]
			case fn == 2 && ft == protowire.VarintType:
				v, k := protowire.ConsumeVarint(msg)
				if k < 0 {
					return out
				}
				f.Size, msg = v, msg[k:]
			default:
				k := protowire.ConsumeFieldValue(fn, ft, msg)
				if k < 0 {
					return out
				}
				msg = msg[k:]
			}
		}
		out = append(out, f)
	}
	return out
}

// Summary is Lance's per-version manifest summary, with its key names (the
// metadata LanceDB's listVersions shows).
func (s TableStats) Summary() map[string]string {
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	return map[string]string{
		"total_fragments":          strconv.Itoa(s.NumFragments),
		"total_data_files":         strconv.Itoa(s.NumDataFiles),
		"total_files_size":         u(s.DataBytes),
		"total_deletion_files":     strconv.Itoa(s.NumDeletionFiles),
		"total_data_file_rows":     u(s.PhysicalRows),
		"total_deletion_file_rows": u(s.DeletedRows),
		"total_rows":               u(s.NumRows),
	}
}

// IndexNames lists the distinct user index names (segments of one index
// share a name; Lance's system indices are left out), in first-seen order.
func IndexNames(indices []*tablepb.IndexMetadata) []string {
	var names []string
	for _, idx := range indices {
		if IsSystemIndex(idx) || slices.Contains(names, idx.GetName()) {
			continue
		}
		names = append(names, idx.GetName())
	}
	return names
}

// VersionRange selects versions [Start, End); End < 0 means "through the
// latest", and {0, -1} is every version (the spec's VersionRange).
type VersionRange struct {
	Start uint64
	End   int64
}

func (r VersionRange) contains(v uint64) bool {
	return v >= r.Start && (r.End < 0 || v < uint64(r.End))
}

// DeleteVersions removes the manifests of the versions in ranges: the
// history records, not data (cleanup reclaims files). The latest version,
// tagged versions and branch fork points are never deleted; they are
// reported in skipped. Versions that do not exist are ignored.
func (d *Dataset) DeleteVersions(ctx context.Context, ranges []VersionRange) (deleted, skipped []uint64, err error) {
	locs, err := d.manifestLocations(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(locs) == 0 {
		return nil, nil, ErrDatasetNotFound
	}
	protected, err := d.protectedVersions(ctx)
	if err != nil {
		return nil, nil, err
	}
	latest := locs[len(locs)-1].Version
	for _, loc := range locs {
		if !slices.ContainsFunc(ranges, func(r VersionRange) bool { return r.contains(loc.Version) }) {
			continue
		}
		if loc.Version == latest || protected[loc.Version] {
			skipped = append(skipped, loc.Version)
			continue
		}
		if err := d.store.Delete(ctx, loc.Key); err != nil {
			return deleted, skipped, fmt.Errorf("lance: delete %s: %w", loc.Key, err)
		}
		deleted = append(deleted, loc.Version)
	}
	return deleted, skipped, nil
}

// protectedVersions are the versions of this branch that a tag points to
// or that a branch was forked from.
func (d *Dataset) protectedVersions(ctx context.Context) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	tags, err := d.ListTags(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		if sameBranch(t.Branch, d.branch) {
			out[t.Version] = true
		}
	}
	branches, err := d.ListBranches(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range branches {
		if sameBranch(b.ParentBranch, d.branch) {
			out[b.ParentVersion] = true
		}
	}
	return out, nil
}

func sameBranch(ref *string, branch string) bool {
	if ref == nil || *ref == "" || *ref == "main" {
		return branch == ""
	}
	return *ref == branch
}
