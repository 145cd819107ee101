package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
)

// rangeLen resolves a GetRange request against an object of size bytes and
// returns how many bytes to serve. It encodes S3's rules so that the
// in-process backends answer exactly as S3 does (see the package doc).
func rangeLen(key string, size, offset, length int64) (int64, error) {
	if offset < 0 {
		return 0, fmt.Errorf("%w: %q offset %d is negative", ErrInvalidRange, key, offset)
	}
	if offset > 0 && offset >= size {
		return 0, fmt.Errorf("%w: %q offset %d is past its %d bytes", ErrInvalidRange, key, offset, size)
	}
	n := size - offset
	if length >= 0 && length < n {
		n = length
	}
	return n, nil
}

// checkIfMatchETag rejects ETags that cannot name a concrete version. S3
// would treat "*" as "any version exists", which the other backends cannot
// express; refusing it keeps PutIfMatch a true compare-and-swap everywhere.
func checkIfMatchETag(key, etag string) error {
	if etag == "" || etag == "*" {
		return fmt.Errorf("%w: %q: PutIfMatch needs a concrete ETag, got %q", ErrPreconditionFailed, key, etag)
	}
	return nil
}

// contentHash is the ETag of the in-process backends. A content hash (not
// mtime/inode) is the only fingerprint that cannot collide for two
// different writes landing in the same clock tick.
type contentHash struct{ h hash.Hash }

func newContentHash() contentHash { return contentHash{sha256.New()} }

func (c contentHash) Write(p []byte) (int, error) { return c.h.Write(p) }
func (c contentHash) ETag() string                { return hex.EncodeToString(c.h.Sum(nil)) }

// copyBody copies the Put body to w, honouring the size contract: with
// size >= 0 exactly size bytes are read and a short body is an error.
func copyBody(ctx context.Context, w io.Writer, r io.Reader, size int64) (int64, error) {
	src := ctxReader{ctx, r}
	if size < 0 {
		return io.Copy(w, src)
	}
	n, err := io.CopyN(w, src, size)
	if err == io.EOF {
		return n, fmt.Errorf("body has %d of the declared %d bytes: %w", n, size, io.ErrUnexpectedEOF)
	}
	return n, err
}

// ctxReader makes long copies cancellable: a read never starts after ctx
// is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// pager turns a key-ordered stream of objects into one ListPage. Backends
// that enumerate keys themselves (memory, fs) feed it every candidate key in
// order; it applies the delimiter roll-up, StartAfter and Limit, and tells
// the caller to stop once it has seen one entry more than fits, which is
// how it knows the listing is not done.
type pager struct {
	prefix string
	opts   ListOptions
	limit  int
	n      int
	lastCP string
	last   string
	page   ListPage
}

func newPager(prefix string, opts ListOptions) *pager {
	limit := opts.Limit
	if limit <= 0 || limit > MaxListLimit {
		limit = MaxListLimit
	}
	return &pager{prefix: prefix, opts: opts, limit: limit}
}

// endsBefore reports, for the next object key in key order, that the page
// is already full and key would be on the next one: the page then ends
// (NextStartAfter set) without the caller paying to describe key — on a
// filesystem, opening and stat'ing a file only to learn that more exist.
// Keys that a delimiter would roll up are left to add.
func (p *pager) endsBefore(key string) bool {
	if p.n != p.limit || !strings.HasPrefix(key, p.prefix) || key <= p.opts.StartAfter {
		return false
	}
	if p.opts.Delimiter && strings.IndexByte(key[len(p.prefix):], '/') >= 0 {
		return false
	}
	p.page.NextStartAfter = p.last
	return true
}

// add offers the next object in key order; false means the page is full
// and more entries exist, so the caller should stop enumerating.
func (p *pager) add(obj ObjectInfo) bool {
	if !strings.HasPrefix(obj.Key, p.prefix) {
		return true
	}
	entry, isCP := obj.Key, false
	if p.opts.Delimiter {
		if i := strings.IndexByte(obj.Key[len(p.prefix):], '/'); i >= 0 {
			entry, isCP = obj.Key[:len(p.prefix)+i+1], true
		}
	}
	if entry <= p.opts.StartAfter || (isCP && entry == p.lastCP) {
		return true
	}
	if p.n == p.limit {
		p.page.NextStartAfter = p.last
		return false
	}
	if isCP {
		p.lastCP = entry
		p.page.CommonPrefixes = append(p.page.CommonPrefixes, entry)
	} else {
		p.page.Objects = append(p.page.Objects, obj)
	}
	p.n++
	p.last = entry
	return true
}
