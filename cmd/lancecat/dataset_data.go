package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/schollz/progressbar/v3"

	"github.com/lancecat/lancecat/internal/arrowipc"
	"github.com/lancecat/lancecat/lance"
)

// scanFlags and importFlags are the flags of `dataset scan` and
// `dataset import`.
type scanFlags struct {
	columns string
	limit   int64
	offset  int64
	tag     string
	format  string
}

type importFlags struct {
	from string
	mode string
	// progress is where a progress bar is drawn when both it and stdout are terminals; nil: none.
	progress io.Writer
}

// datasetScan prints the rows of a version: one JSON object per line, or
// an Arrow IPC stream.
func datasetScan(ctx context.Context, ds *lance.Dataset, version uint64, f scanFlags, stdout io.Writer) error {
	opts := lance.ScanOptions{Version: version, Tag: f.tag, Limit: f.limit, Offset: f.offset}
	if f.columns != "" {
		opts.Columns = strings.Split(f.columns, ",")
	}
	s, err := ds.Scan(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Release()
	switch f.format {
	case "json":
		w := bufio.NewWriterSize(stdout, 1<<16)
		for s.Next() {
			if err := array.RecordToJSON(s.RecordBatch(), w); err != nil {
				return err
			}
		}
		if err := s.Err(); err != nil {
			return err
		}
		return w.Flush()
	case "arrow":
		w := ipc.NewWriter(stdout, ipc.WithSchema(s.Schema()))
		for s.Next() {
			if err := w.Write(s.RecordBatch()); err != nil {
				return err
			}
		}
		if err := s.Err(); err != nil {
			return err
		}
		return w.Close()
	}
	return fmt.Errorf("unknown --format %q (json or arrow)", f.format)
}

// importResult is what `dataset import` reports.
type importResult struct {
	Version   uint64 `json:"version"`
	Mode      string `json:"mode"`
	Rows      uint64 `json:"rows"`
	Fragments int    `json:"fragments"`
}

func (r importResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s: version %d, %d rows in %d fragments\n", r.Mode, r.Version, r.Rows, r.Fragments)
	return err
}

// datasetImport appends (or overwrites with, or creates from) an Arrow IPC
// file or stream ("-": standard input), streamed.
func datasetImport(ctx context.Context, ds *lance.Dataset, f importFlags, stdin io.Reader) (importResult, error) {
	mode, err := importMode(f.mode)
	if err != nil {
		return importResult{}, err
	}
	if f.from == "" {
		return importResult{}, errors.New("--from is required (an Arrow IPC file or stream, - for stdin)")
	}
	rs, closeFn, err := openArrow(f.from, stdin)
	if err != nil {
		return importResult{}, err
	}
	defer closeFn()
	if f.progress != nil && isTerminal(f.progress) && isTerminal(os.Stdout) {
		bar := progressbar.NewOptions64(-1, progressbar.OptionSetWriter(f.progress),
			progressbar.OptionSetDescription("importing rows"), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("rows"), progressbar.OptionClearOnFinish())
		defer func() { _ = bar.Finish() }()
		rs = &countingStream{RecordStream: rs, bar: bar}
	}
	v, err := ds.Write(ctx, rs, lance.WriteOptions{Mode: mode})
	if err != nil {
		return importResult{}, err
	}
	rows, _ := v.CountRows()
	return importResult{Version: v.Number(), Mode: mode.String(), Rows: rows, Fragments: len(v.Manifest().GetFragments())}, nil
}

// importMode is --mode as a lance.WriteMode.
func importMode(s string) (lance.WriteMode, error) {
	switch s {
	case "append":
		return lance.WriteAppend, nil
	case "overwrite":
		return lance.WriteOverwrite, nil
	case "create":
		return lance.WriteCreate, nil
	}
	return 0, fmt.Errorf("unknown --mode %q (append, overwrite or create)", s)
}

// countingStream advances a progress bar by the rows of each batch the writer takes.
type countingStream struct {
	lance.RecordStream
	bar *progressbar.ProgressBar
}

func (c *countingStream) Next() bool {
	if !c.RecordStream.Next() {
		return false
	}
	_ = c.bar.Add64(c.RecordBatch().NumRows())
	return true
}

// openArrow reads an Arrow IPC file ("ARROW1" magic: by its footer, which holds the schema and
// the index of the batches) or stream, one batch at a time, through arrowipc's checked readers:
// the input is untrusted (a forged file must not make us allocate what its metadata claims), and
// large (it is never held whole). Standard input may hold either format too, but cannot seek to a
// file's footer: a file is read as the stream before it, which works when the file also carries
// its schema at the front (arrow-go, pyarrow and Arrow C++ write it there; Arrow JS does not).
func openArrow(path string, stdin io.Reader) (lance.RecordStream, func(), error) {
	if path == "-" {
		// Standard input redirected from a file (< x.arrow) is read as that file.
		if f, ok := stdin.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				if off, err := f.Seek(0, io.SeekCurrent); err == nil && off == 0 {
					return openArrowFile("stdin", f, st, func() {})
				}
			}
		}
		return openArrowPipe("stdin", stdin, func() {})
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() { // a named pipe, /dev/stdin: no size, no seeking
		return openArrowPipe(path, fh, func() { fh.Close() })
	}
	return openArrowFile(path, fh, st, func() { fh.Close() })
}

// openArrowFile reads the regular file fh (named path): by its footer when it has the file
// format's magic, else as a stream of known size.
func openArrowFile(path string, fh *os.File, st os.FileInfo, closeFn func()) (lance.RecordStream, func(), error) {
	magic := make([]byte, 6)
	n, _ := io.ReadFull(fh, magic)
	if n == 6 && bytes.Equal(magic, []byte("ARROW1")) {
		rd, err := arrowipc.NewFileReader(fh, st.Size())
		if err != nil {
			closeFn()
			return nil, nil, fmt.Errorf("read Arrow file %s: %w", path, err)
		}
		return rd, func() { rd.Release(); closeFn() }, nil
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		closeFn()
		return nil, nil, err
	}
	rd, err := arrowipc.NewStreamReader(bufio.NewReaderSize(fh, 1<<20), arrowipc.StreamOptions{Size: st.Size()})
	if err != nil {
		closeFn()
		return nil, nil, fmt.Errorf("read Arrow stream %s: %w", path, err)
	}
	return rd, func() { rd.Release(); closeFn() }, nil
}

// openArrowPipe reads a stream, or a file as the stream before its footer, from r (named name).
func openArrowPipe(name string, r io.Reader, closeFn func()) (lance.RecordStream, func(), error) {
	br := bufio.NewReaderSize(r, 1<<20)
	isFile, err := arrowipc.SkipFileMagic(br)
	if err != nil {
		closeFn()
		return nil, nil, fmt.Errorf("read Arrow data from %s: %w", name, err)
	}
	rd, err := arrowipc.NewStreamReader(br, arrowipc.StreamOptions{})
	if err != nil {
		closeFn()
		if isFile && errors.Is(err, arrowipc.ErrNoSchema) {
			return nil, nil, fmt.Errorf("read an Arrow IPC file from %s: its schema is only in its footer, which a pipe cannot seek to: pass a regular file (--from FILE) or an Arrow IPC stream", name)
		}
		return nil, nil, fmt.Errorf("read Arrow stream from %s: %w", name, err)
	}
	return rd, func() { rd.Release(); closeFn() }, nil
}
