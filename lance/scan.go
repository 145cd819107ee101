package lance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// Columns Lance adds to a scan on request.
const (
	RowIDColumn      = "_rowid"
	RowAddressColumn = "_rowaddr"
)

// DefaultBatchRows is the rows per scanned batch (Lance's batch_size).
const DefaultBatchRows = 8192

// ScanOptions select what a Scanner reads.
type ScanOptions struct {
	// Columns are top-level column names in output order; nil means all.
	Columns []string
	// Offset skips that many live rows; Limit caps the rows returned
	// (0: no limit).
	Offset, Limit int64
	// At is the version to read; nil means Version, then Tag, then latest.
	At      *Version
	Version uint64
	Tag     string
	// WithRowID adds _rowid (uint64: the stable row id on datasets that
	// have them, else the row address); WithRowAddress adds _rowaddr
	// (fragment id << 32 | offset). Both come after the columns.
	WithRowID, WithRowAddress bool
	// BatchRows is the most rows per batch (DefaultBatchRows when 0); a
	// batch never spans fragments.
	BatchRows int
	// Fragments restricts the scan to these fragment ids (in manifest
	// order); nil scans all.
	Fragments []uint64
	// Mem allocates the returned batches (default: Go heap).
	Mem memory.Allocator
}

// Scanner streams a version's live rows, fragment by fragment in manifest
// order, honouring deletion vectors. It is an array.RecordReader; a batch
// is valid until the next call to Next (Retain it to keep it).
type Scanner struct {
	ctx     context.Context
	ds      *Dataset
	ver     *Version
	opts    ScanOptions
	schema  *arrow.Schema
	columns []scanColumn
	frags   []*tablepb.DataFragment
	stable  bool

	fi       int       // next fragment to start
	fs       *fragScan // fragment being read
	skip     int64     // live rows still to skip
	left     int64     // rows still to return; < 0 unlimited
	cur      arrow.RecordBatch
	err      error
	refCount atomic.Int64
}

// scanColumn is one output column: a top-level field of the version.
type scanColumn struct {
	field *filepb.Field
	ids   map[int32]bool // the field and its descendants
	arrow arrow.Field
}

// Scan starts a scan of a version of the dataset.
func (d *Dataset) Scan(ctx context.Context, opts ScanOptions) (*Scanner, error) {
	ver := opts.At
	var err error
	switch {
	case ver != nil:
	case opts.Version != 0:
		ver, err = d.OpenVersion(ctx, opts.Version)
	case opts.Tag != "":
		ver, err = d.OpenTag(ctx, opts.Tag)
	default:
		ver, err = d.OpenLatest(ctx)
	}
	if err != nil {
		return nil, err
	}
	if f := ver.Manifest().GetReaderFeatureFlags() &^ knownFlags; f != 0 {
		return nil, fmt.Errorf("%w: reader feature flags %#x are not supported", ErrUnsupportedFeature, f)
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = DefaultBatchRows
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	if opts.Offset < 0 || opts.Limit < 0 {
		return nil, Errorf(ErrInvalidInput, "lance: negative offset or limit")
	}
	s := &Scanner{ctx: ctx, ds: d, ver: ver, opts: opts, skip: opts.Offset, left: -1,
		stable: ver.Manifest().GetReaderFeatureFlags()&FlagStableRowIDs != 0}
	if opts.Limit > 0 {
		s.left = opts.Limit
	}
	s.refCount.Store(1)
	if s.columns, s.schema, err = projectColumns(ver, opts.Columns); err != nil {
		return nil, err
	}
	if opts.WithRowID {
		s.schema = appendField(s.schema, arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Uint64})
	}
	if opts.WithRowAddress {
		s.schema = appendField(s.schema, arrow.Field{Name: RowAddressColumn, Type: arrow.PrimitiveTypes.Uint64})
	}
	s.frags = ver.Manifest().GetFragments()
	if opts.Fragments != nil {
		want := map[uint64]bool{}
		for _, id := range opts.Fragments {
			want[id] = true
		}
		var sel []*tablepb.DataFragment
		for _, f := range s.frags {
			if want[f.GetId()] {
				sel = append(sel, f)
				delete(want, f.GetId())
			}
		}
		for id := range want {
			return nil, Errorf(ErrInvalidInput, "lance: version %d has no fragment %d", ver.Number(), id)
		}
		s.frags = sel
	}
	return s, nil
}

func appendField(s *arrow.Schema, f arrow.Field) *arrow.Schema {
	md := s.Metadata()
	return arrow.NewSchema(append(s.Fields(), f), &md)
}

// projectColumns resolves column names to the version's top-level fields.
func projectColumns(ver *Version, names []string) ([]scanColumn, *arrow.Schema, error) {
	full, err := ToArrowSchema(ver.Fields(), ver.Manifest().GetSchemaMetadata(), false)
	if err != nil {
		return nil, nil, err
	}
	fields := ver.Fields()
	var roots []*filepb.Field
	for _, f := range fields {
		if f.GetParentId() == -1 {
			roots = append(roots, f)
		}
	}
	if len(roots) != full.NumFields() {
		return nil, nil, fmt.Errorf("%w: %d top-level fields, schema of %d", ErrCorruptManifest, len(roots), full.NumFields())
	}
	pick := make([]int, 0, len(roots))
	if names == nil {
		for i := range roots {
			pick = append(pick, i)
		}
	} else {
		for _, name := range names {
			i := -1
			for k, r := range roots {
				if r.GetName() == name {
					i = k
				}
			}
			if i < 0 {
				return nil, nil, Errorf(ErrColumnNotFound, "lance: no column %q (the dataset has %s)", name, rootNames(roots))
			}
			pick = append(pick, i)
		}
	}
	cols := make([]scanColumn, len(pick))
	afs := make([]arrow.Field, len(pick))
	for k, i := range pick {
		ids := map[int32]bool{}
		for _, id := range subtreeIDs(fields, roots[i].GetId()) {
			ids[id] = true
		}
		cols[k] = scanColumn{field: roots[i], ids: ids, arrow: full.Field(i)}
		afs[k] = full.Field(i)
	}
	md := full.Metadata()
	return cols, arrow.NewSchema(afs, &md), nil
}

// Schema is the schema of every batch.
func (s *Scanner) Schema() *arrow.Schema { return s.schema }

// Version is the version being scanned.
func (s *Scanner) Version() *Version { return s.ver }

// Err is the error that ended the scan, if any.
func (s *Scanner) Err() error { return s.err }

// RecordBatch is the current batch.
func (s *Scanner) RecordBatch() arrow.RecordBatch { return s.cur }

// Record is RecordBatch (array.RecordReader's older name).
func (s *Scanner) Record() arrow.RecordBatch { return s.cur }

// Retain and Release count references; the last Release drops the
// current batch and the open files.
func (s *Scanner) Retain() { s.refCount.Add(1) }

func (s *Scanner) Release() {
	if s.refCount.Add(-1) == 0 {
		s.close()
	}
}

func (s *Scanner) close() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.fs != nil {
		s.fs.close()
		s.fs = nil
	}
	s.fi = len(s.frags)
}

var _ array.RecordReader = (*Scanner)(nil)

// Next advances to the next non-empty batch.
func (s *Scanner) Next() bool {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.err != nil {
		return false
	}
	for s.left != 0 {
		if err := s.ctx.Err(); err != nil {
			s.err = err
			return false
		}
		if s.fs == nil {
			if s.fi >= len(s.frags) {
				return false
			}
			f := s.frags[s.fi]
			s.fi++
			fs, err := s.openFragment(f)
			if err != nil {
				s.err = err
				s.close()
				return false
			}
			if fs == nil {
				continue // skipped whole
			}
			s.fs = fs
		}
		rec, err := s.nextBatch()
		if err != nil {
			s.err = err
			s.close()
			return false
		}
		if rec == nil {
			s.fs.close()
			s.fs = nil
			continue
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		s.cur = rec
		return true
	}
	return false
}

// fragScan is the state of reading one fragment.
type fragScan struct {
	frag *tablepb.DataFragment
	rows uint64 // physical
	dv   *DeletionVector
	// per output column: the cursor of the file holding it (nil: the
	// fragment lacks the field, it reads as nulls) and its file field
	cols    []*lancefile.Cursor
	conform []func(arrow.Array) (arrow.Array, error)
	readers []*lancefile.Reader
	rowIDs  []uint64
	pos     uint64

	closeFiles func()
}

func (f *fragScan) close() {
	for _, c := range f.cols {
		if c != nil {
			c.Close()
		}
	}
	if f.closeFiles != nil {
		f.closeFiles()
	}
}

// openFragment prepares a fragment, or returns nil when Offset skips it
// whole (its live row count known from the manifest).
func (s *Scanner) openFragment(f *tablepb.DataFragment) (*fragScan, error) {
	phys := f.GetPhysicalRows()
	deleted := f.GetDeletionFile().GetNumDeletedRows()
	if s.skip > 0 && phys > 0 && (f.GetDeletionFile() == nil || deleted > 0) && deleted <= phys {
		if live := int64(phys - deleted); live <= s.skip {
			s.skip -= live
			return nil, nil
		}
	}
	fs := &fragScan{frag: f, rows: phys}
	var err error
	if del := f.GetDeletionFile(); del != nil {
		store, err := s.ds.BaseStore(s.ver, del.BaseId)
		if err != nil {
			return nil, err
		}
		if fs.dv, err = ReadDeletionFile(s.ctx, store, f.GetId(), del); err != nil {
			return nil, err
		}
	}
	fs.cols = make([]*lancefile.Cursor, len(s.columns))
	fs.conform = make([]func(arrow.Array) (arrow.Array, error), len(s.columns))
	files, closeFiles, err := s.ds.openFragmentFiles(s.ctx, s.ver, f)
	if err != nil {
		return nil, err
	}
	fs.readers = files
	fs.closeFiles = closeFiles
	if fs.rows == 0 && len(files) > 0 {
		fs.rows = files[0].NumRows()
	}
	for _, r := range files {
		if r.NumRows() != fs.rows {
			return nil, fmt.Errorf("%w: fragment %d: data file of %d rows, fragment of %d", ErrCorruptManifest, f.GetId(), r.NumRows(), fs.rows)
		}
	}
	for k, col := range s.columns {
		fi, root := fileFor(f, files, col)
		if fi < 0 {
			continue
		}
		cur, err := files[fi].NewCursor(s.opts.Mem, lancefile.ReadOptions{FieldIDs: []int32{root}})
		if err != nil {
			return nil, fmt.Errorf("lance: fragment %d: %w", f.GetId(), err)
		}
		if fs.dv == nil && (s.skip > 0 || s.left > 0) {
			// live rows are physical rows here: the cursor fetches only
			// the chunks of the rows this scan reads
			hi := fs.rows
			if s.left > 0 {
				hi = min(hi, uint64(s.skip+s.left))
			}
			cur.SetRowRange(uint64(s.skip), hi)
		}
		fs.cols[k] = cur
		fs.conform[k] = conformer(s.opts.Mem, files[fi].Fields(), root, s.ver.Fields(), col)
	}
	if s.opts.WithRowID && s.stable {
		if fs.rowIDs, err = s.ds.FragmentRowIDs(s.ctx, f); err != nil {
			return nil, err
		}
		if uint64(len(fs.rowIDs)) != fs.rows {
			return nil, fmt.Errorf("%w: fragment %d has %d row ids for %d rows", ErrCorruptManifest, f.GetId(), len(fs.rowIDs), fs.rows)
		}
	}
	return fs, nil
}

// fileFor finds the data file of a fragment that holds a column (the last
// one listing any of its field ids: later files replace earlier ones) and
// the id of the column's root field in that file. -1: none does.
func fileFor(f *tablepb.DataFragment, files []*lancefile.Reader, col scanColumn) (int, int32) {
	for i := len(f.GetFiles()) - 1; i >= 0; i-- {
		has := false
		for _, id := range f.GetFiles()[i].GetFields() {
			if col.ids[id] {
				has = true
				break
			}
		}
		if !has {
			continue
		}
		for _, ff := range files[i].Fields() {
			if ff.GetParentId() == -1 && ff.GetId() == col.field.GetId() {
				return i, ff.GetId()
			}
		}
	}
	return -1, 0
}

// nextBatch reads the next window of the fragment: nil at its end.
func (s *Scanner) nextBatch() (arrow.RecordBatch, error) {
	fs := s.fs
	for fs.pos < fs.rows {
		lo := fs.pos
		hi := min(fs.rows, lo+uint64(s.opts.BatchRows))
		deleted := uint64(0)
		if fs.dv != nil {
			deleted = fs.dv.countIn(lo, hi)
		}
		live := int64(hi - lo - deleted)
		if live <= s.skip {
			s.skip -= live
			fs.pos = hi
			continue
		}
		if deleted == 0 && s.left > 0 {
			// read no more than needed
			hi = min(hi, lo+uint64(s.skip+s.left))
		}
		fs.pos = hi
		rec, err := s.readWindow(lo, hi)
		if err != nil {
			return nil, err
		}
		out, err := s.selectLive(rec, lo, hi, fs.dv)
		rec.Release()
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, nil
}

// readWindow reads physical rows [lo, hi) of the current fragment.
func (s *Scanner) readWindow(lo, hi uint64) (arrow.RecordBatch, error) {
	fs := s.fs
	n := int64(hi - lo)
	cols := make([]arrow.Array, len(s.columns), s.schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	read := func(k int) error {
		col := s.columns[k]
		if fs.cols[k] == nil {
			cols[k] = array.MakeArrayOfNull(s.opts.Mem, col.arrow.Type, int(n))
			return nil
		}
		rec, err := fs.cols[k].Read(s.ctx, lo, hi)
		if err != nil {
			return fmt.Errorf("lance: fragment %d column %q: %w", fs.frag.GetId(), col.field.GetName(), err)
		}
		a, err := fs.conform[k](rec.Column(0))
		rec.Release()
		if err != nil {
			return fmt.Errorf("lance: fragment %d column %q: %w", fs.frag.GetId(), col.field.GetName(), err)
		}
		cols[k] = a
		return nil
	}
	// Each column has its own cursor over the file (reads are ReadAt, the
	// decode state per cursor), so the columns of a window decode side by
	// side: a fragment is one task of the query engine, and without this a
	// two-column filter or scan of one big fragment used one core.
	if decoding := s.decodingColumns(); decoding > 1 {
		var g errgroup.Group
		g.SetLimit(min(decoding, runtime.GOMAXPROCS(0)))
		for k := range s.columns {
			g.Go(func() error { return read(k) })
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
	} else {
		for k := range s.columns {
			if err := read(k); err != nil {
				return nil, err
			}
		}
	}
	if s.opts.WithRowID {
		b := array.NewUint64Builder(s.opts.Mem)
		b.Reserve(int(n))
		for r := lo; r < hi; r++ {
			if fs.rowIDs != nil {
				b.UnsafeAppend(fs.rowIDs[r])
			} else {
				b.UnsafeAppend(RowAddress(fs.frag.GetId(), uint32(r)))
			}
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	if s.opts.WithRowAddress {
		b := array.NewUint64Builder(s.opts.Mem)
		b.Reserve(int(n))
		for r := lo; r < hi; r++ {
			b.UnsafeAppend(RowAddress(fs.frag.GetId(), uint32(r)))
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	return array.NewRecordBatch(s.schema, cols, n), nil
}

// decodingColumns is how many columns of the current fragment are read
// from its files (not filled with nulls).
func (s *Scanner) decodingColumns() int {
	n := 0
	for _, c := range s.fs.cols {
		if c != nil {
			n++
		}
	}
	return n
}

// selectLive drops deleted rows of the window, then applies the pending
// offset and limit.
func (s *Scanner) selectLive(rec arrow.RecordBatch, lo, hi uint64, dv *DeletionVector) (arrow.RecordBatch, error) {
	var runs [][2]int64 // kept rows, relative to lo
	if dv == nil || dv.countIn(lo, hi) == 0 {
		runs = [][2]int64{{0, int64(hi - lo)}}
	} else {
		start := int64(-1)
		for r := lo; r < hi; r++ {
			gone := dv.rows.Contains(uint32(r))
			switch {
			case !gone && start < 0:
				start = int64(r - lo)
			case gone && start >= 0:
				runs = append(runs, [2]int64{start, int64(r - lo)})
				start = -1
			}
		}
		if start >= 0 {
			runs = append(runs, [2]int64{start, int64(hi - lo)})
		}
	}
	// offset
	for s.skip > 0 && len(runs) > 0 {
		n := runs[0][1] - runs[0][0]
		if n <= s.skip {
			s.skip -= n
			runs = runs[1:]
			continue
		}
		runs[0][0] += s.skip
		s.skip = 0
	}
	// limit
	if s.left >= 0 {
		var total int64
		for i := range runs {
			n := runs[i][1] - runs[i][0]
			if total+n >= s.left {
				runs[i][1] = runs[i][0] + (s.left - total)
				runs = runs[:i+1]
				break
			}
			total += n
		}
	}
	var kept int64
	for _, r := range runs {
		kept += r[1] - r[0]
	}
	if s.left >= 0 {
		s.left -= kept
	}
	if len(runs) == 1 {
		return rec.NewSlice(runs[0][0], runs[0][1]), nil
	}
	if len(runs) == 0 {
		return rec.NewSlice(0, 0), nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	pieces := make([]arrow.Array, len(runs))
	for c := range cols {
		for i, r := range runs {
			pieces[i] = array.NewSlice(rec.Column(c), r[0], r[1])
		}
		var err error
		cols[c], err = array.Concatenate(pieces, s.opts.Mem)
		for _, p := range pieces {
			p.Release()
		}
		if err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(s.schema, cols, kept), nil
}

// openFragmentFiles opens every data file of a fragment (footer and
// metadata only); close releases what they hold open.
func (d *Dataset) openFragmentFiles(ctx context.Context, ver *Version, f *tablepb.DataFragment) (files []*lancefile.Reader, close func(), err error) {
	var closers []io.Closer
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	close = closeAll
	defer func() {
		// closeAll, not close: an error return has set close to nil
		if err != nil {
			closeAll()
		}
	}()
	files = make([]*lancefile.Reader, len(f.GetFiles()))
	for i, df := range f.GetFiles() {
		if err := checkReadableFile(f.GetId(), df); err != nil {
			return nil, nil, err
		}
		store, err := d.BaseStore(ver, df.BaseId)
		if err != nil {
			return nil, nil, err
		}
		key := DataDir + df.GetPath()
		size := int64(df.GetFileSizeBytes())
		if size == 0 {
			info, err := store.Stat(ctx, key)
			if err != nil {
				return nil, nil, fmt.Errorf("lance: fragment %d: %w", f.GetId(), err)
			}
			size = info.Size
		}
		src, c := openSource(store, key, size)
		if c != nil {
			closers = append(closers, c)
		}
		r, err := lancefile.Open(ctx, src)
		if errors.Is(err, lancefile.ErrUnsupported) {
			// A footer this reader does not implement (a version the manifest did not record):
			// the client's 406, not a server fault.
			return nil, nil, Errorf(ErrUnsupportedFeature, "lance: fragment %d: data file %s: %w", f.GetId(), df.GetPath(), err)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("lance: fragment %d: open %s: %w", f.GetId(), key, err)
		}
		files[i] = r
	}
	return files, close, nil
}

// checkReadableFile refuses a data file of a version this package does not read, by the version
// the manifest records for it (before any read of the file): Lance 2.3 (unstable in Lance 14,
// whose pylance writes it when asked) and the legacy 0.x format are named in a 406 rather than
// failing deeper in the file as a server fault. A version the manifest does not record (0.0,
// older writers) is left to the file's footer.
func checkReadableFile(frag uint64, df *tablepb.DataFile) error {
	major, minor := df.GetFileMajorVersion(), df.GetFileMinorVersion()
	if (major == 0 && minor == 0) || (major == 2 && minor <= 2) {
		return nil
	}
	name := storageVersionName(major, minor)
	if major == 0 {
		name += " (legacy)"
	}
	return Errorf(ErrUnsupportedFeature, "lance: fragment %d: data file %s is a Lance %s data file; lancecat reads Lance 2.0, 2.1 and 2.2 data files",
		frag, df.GetPath(), name)
}

// storageVersionName is the data storage version (as Lance's data_storage_version names it) of
// a data file's recorded version: 2.x as itself, 0.x the legacy format, 0.1.
func storageVersionName(major, minor uint32) string {
	if major == 0 {
		return "0.1"
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

// openSource reads a data file: a local file of an FS store is opened once
// and read with pread (every range request of the store would open it
// again); anything else goes through the store's range reads.
//
// A table's store is a view of the catalog's (storage.Sub), which opens the
// file through the root the same way (OpenLocal): without it every read of
// a server's scan opened the file again (count_rows with a filter over
// REST, issue 15).
func openSource(store storage.Reader, key string, size int64) (lancefile.Source, io.Closer) {
	if fs, ok := store.(*storage.FS); ok && filepath.IsLocal(filepath.FromSlash(key)) {
		if fh, err := os.Open(filepath.Join(fs.Root(), filepath.FromSlash(key))); err == nil {
			return lancefile.NewReaderAtSource(fh, size), fh
		}
	}
	if l, ok := store.(interface {
		OpenLocal(string) (*os.File, error)
	}); ok {
		if fh, err := l.OpenLocal(key); err == nil {
			return lancefile.NewReaderAtSource(fh, size), fh
		}
	}
	return lancefile.NewObjectSource(rangeGetter{store}, key, size), nil
}

// BaseStore is the store a file with base_id lives in: the dataset's own
// directory, or the directory of the dataset a branch or clone was made
// from.
func (d *Dataset) BaseStore(ver *Version, baseID *uint32) (storage.Bucket, error) {
	if baseID == nil {
		return d.store, nil
	}
	for _, bp := range ver.Manifest().GetBasePaths() {
		if bp.GetId() != *baseID {
			continue
		}
		root := d.rootLocation()
		if strings.TrimRight(bp.GetPath(), "/") == root || (root == "" && d.store != d.root) {
			return d.root, nil
		}
		return nil, fmt.Errorf("%w: files under base path %q (another dataset's directory)", ErrUnsupportedFeature, bp.GetPath())
	}
	return nil, fmt.Errorf("%w: base_id %d not in the manifest's base paths", ErrCorruptManifest, *baseID)
}

// rangeGetter adapts a storage.Reader to lancefile.RangeGetter.
type rangeGetter struct{ s storage.Reader }

func (g rangeGetter) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	rc, err := g.s.GetRange(ctx, key, off, n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(rc, b); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("short read of %s: %w", key, err)
		}
		return nil, err
	}
	return b, nil
}

// conformer returns how an array read from a data file becomes the
// dataset's column: unchanged when the types agree, else rebuilt by field
// id — renamed fields take their new names, dropped children go, children
// the file lacks read as nulls.
func conformer(mem memory.Allocator, fileFields []*filepb.Field, fileRoot int32, dsFields []*filepb.Field, col scanColumn) func(arrow.Array) (arrow.Array, error) {
	return func(a arrow.Array) (arrow.Array, error) {
		if arrow.TypeEqual(a.DataType(), col.arrow.Type) {
			a.Retain()
			return a, nil
		}
		d, err := conformData(mem, a.Data(), fileFields, fileRoot, dsFields, col.field.GetId(), col.arrow.Type)
		if err != nil {
			return nil, err
		}
		defer d.Release()
		return array.MakeFromData(d), nil
	}
}

func childrenOf(fields []*filepb.Field, id int32) []*filepb.Field {
	var out []*filepb.Field
	for _, f := range fields {
		if f.GetParentId() == id {
			out = append(out, f)
		}
	}
	return out
}

func conformData(mem memory.Allocator, d arrow.ArrayData, fileFields []*filepb.Field, fileID int32, dsFields []*filepb.Field, dsID int32, target arrow.DataType) (arrow.ArrayData, error) {
	if arrow.TypeEqual(d.DataType(), target) {
		d.Retain()
		return d, nil
	}
	switch t := target.(type) {
	case *arrow.StructType:
		if d.DataType().ID() != arrow.STRUCT {
			break
		}
		fileKids := childrenOf(fileFields, fileID)
		dsKids := childrenOf(dsFields, dsID)
		if len(dsKids) != t.NumFields() || len(fileKids) != len(d.Children()) {
			break
		}
		children := make([]arrow.ArrayData, len(dsKids))
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i, k := range dsKids {
			j := -1
			for fj, fk := range fileKids {
				if fk.GetId() == k.GetId() {
					j = fj
				}
			}
			if j < 0 {
				nulls := array.MakeArrayOfNull(mem, t.Field(i).Type, d.Offset()+d.Len())
				children[i] = nulls.Data()
				children[i].Retain()
				nulls.Release()
				continue
			}
			c, err := conformData(mem, d.Children()[j], fileFields, fileKids[j].GetId(), dsFields, k.GetId(), t.Field(i).Type)
			if err != nil {
				return nil, err
			}
			children[i] = c
		}
		return array.NewData(t, d.Len(), d.Buffers(), children, d.NullN(), d.Offset()), nil
	case arrow.ListLikeType:
		if len(d.Children()) != 1 {
			break
		}
		fileKids := childrenOf(fileFields, fileID)
		dsKids := childrenOf(dsFields, dsID)
		if len(fileKids) != 1 || len(dsKids) != 1 {
			break
		}
		c, err := conformData(mem, d.Children()[0], fileFields, fileKids[0].GetId(), dsFields, dsKids[0].GetId(), t.Elem())
		if err != nil {
			return nil, err
		}
		defer c.Release()
		return array.NewData(t, d.Len(), d.Buffers(), []arrow.ArrayData{c}, d.NullN(), d.Offset()), nil
	}
	return nil, fmt.Errorf("%w: data file has %s where the dataset has %s", ErrCorruptManifest, d.DataType(), target)
}

// countIn is the number of deleted rows in [lo, hi).
func (dv *DeletionVector) countIn(lo, hi uint64) uint64 {
	if hi <= lo {
		return 0
	}
	n := dv.rows.Rank(uint32(hi - 1))
	if lo > 0 {
		n -= dv.rows.Rank(uint32(lo - 1))
	}
	return n
}
