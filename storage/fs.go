//go:build unix

package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// FS is a Bucket over a local directory.
//
// Writes are atomic: the body is streamed to a temp file under
// <root>/.lancecat-tmp/, fsynced, then renamed (Put) or hard-linked
// (PutIfAbsent, so an existing key makes link(2) fail with EEXIST) into
// place, and the parent directory is fsynced. Readers therefore only ever
// see complete objects, and a crash leaves at most an orphaned temp file
// that List and Get never show.
//
// Every mutation of a key holds that key's lock (a mutex plus flock(2) on a
// striped lock file), so PutIfMatch's compare-and-rename is atomic against
// writers in other goroutines and other processes on the same host. flock
// is not reliable over NFS; use a local filesystem. The temp directory
// must be on the same filesystem as the keys (no mount points below root).
//
// ETags are SHA-256 content hashes, computed while the body streams in and
// cached in a user.lancecat.etag xattr, because mtime/inode fingerprints
// can repeat for two writes within one timestamp tick.
//
// Orphaned temp files (from crashes) are swept when the bucket is opened:
// NewFS deletes the temp files this backend names that have not been written
// for TempIdleLimit (see SweepTemp); nothing else under .lancecat-tmp/ is
// touched.
//
// All paths are resolved through os.Root, so even a symlink planted under
// the root cannot make a key address anything outside it. Only regular
// files are objects; a key cannot be both an object and a "directory" of
// other keys (S3 allows "a" and "a/b" together, a filesystem does not).
type FS struct {
	root    *os.Root
	locks   keyLocks
	beneath *beneath // one-syscall reads below root where the kernel offers it
}

var _ Bucket = (*FS)(nil)

// NewFS opens (creating if needed) the directory root as a bucket.
func NewFS(root string) (*FS, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create fs root: %w", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("storage: open fs root: %w", err)
	}
	if err := r.MkdirAll(lockDir, 0o755); err != nil {
		r.Close()
		return nil, fmt.Errorf("storage: create %s: %w", lockDir, err)
	}
	b := &FS{root: r, locks: keyLocks{root: r}, beneath: openBeneath(root)}
	// Best effort: a sweep that cannot read the directory leaves the files for the next open.
	_, _ = b.SweepTemp(context.Background(), TempIdleLimit)
	return b, nil
}

// Root is the directory the bucket lives in.
func (b *FS) Root() string { return b.root.Name() }

// OpenLocal opens the file of key for reading (through the root, as every
// access is): a reader that does many range reads of one file (a Lance data
// file) opens it once and preads it, where GetRange opens it per read.
func (b *FS) OpenLocal(key string) (*os.File, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	return b.openRead(filepath.FromSlash(key))
}

// openRead opens name below the root for reading: in one openat2 call where
// the kernel offers it (see beneath), else through os.Root.
//
// O_NONBLOCK: something other than a regular file planted at a key (a FIFO)
// must not hang the open; callers refuse non-regular files after fstat, and
// reads of regular files ignore the flag.
func (b *FS) openRead(name string) (*os.File, error) {
	const flags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	if f, ok, err := b.beneath.open(b.root.Name(), name, flags); ok {
		return f, err
	}
	return b.root.OpenFile(name, flags, 0)
}

// Close releases the handle on the root directory. The FS must not be used
// afterwards.
func (b *FS) Close() error {
	b.beneath.close()
	return b.root.Close()
}

// open opens key's regular file. Anything else at that path (nothing, a
// directory, a path through a file) is ErrNotFound.
func (b *FS) open(ctx context.Context, key string) (*os.File, os.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := ValidateKey(key); err != nil {
		return nil, nil, err
	}
	f, err := b.openRead(key)
	if err != nil {
		if isNotExist(err) {
			return nil, nil, fmt.Errorf("%w: %q", ErrNotFound, key)
		}
		return nil, nil, fmt.Errorf("storage: open %q: %w", key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("storage: stat %q: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %q is not a regular file", ErrNotFound, key)
	}
	return f, fi, nil
}

func (b *FS) info(key string, f *os.File, fi os.FileInfo) (ObjectInfo, error) {
	etag, err := fileETag(f, fi)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("storage: etag %q: %w", key, err)
	}
	return ObjectInfo{Key: key, Size: fi.Size(), ETag: etag, ModTime: fi.ModTime()}, nil
}

func (b *FS) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	f, fi, err := b.open(ctx, key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	info, err := b.info(key, f, fi)
	if err != nil {
		f.Close()
		return nil, ObjectInfo{}, err
	}
	return f, info, nil
}

func (b *FS) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	f, fi, err := b.open(ctx, key)
	if err != nil {
		return nil, err
	}
	n, err := rangeLen(key, fi.Size(), offset, length)
	if err != nil {
		f.Close()
		return nil, err
	}
	return readCloser{io.NewSectionReader(f, offset, n), f}, nil
}

func (b *FS) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	if info, ok, err := b.beneath.stat(key); ok {
		if err != nil {
			if isNotExist(err) {
				return ObjectInfo{}, fmt.Errorf("%w: %q", ErrNotFound, key)
			}
			return ObjectInfo{}, fmt.Errorf("storage: stat %q: %w", key, err)
		}
		return info, nil
	}
	f, fi, err := b.open(ctx, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer f.Close()
	return b.info(key, f, fi)
}

func (b *FS) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	unlock, err := b.locks.lock(ctx, key)
	if err != nil {
		return err
	}
	fi, err := b.root.Lstat(key)
	switch {
	case isNotExist(err):
		unlock()
		return nil
	case err != nil:
		unlock()
		return fmt.Errorf("storage: delete %q: %w", key, err)
	case fi.IsDir():
		unlock()
		return nil // no object here, only other keys below it
	}
	err = b.root.Remove(key)
	unlock()
	if err != nil && !isNotExist(err) {
		return fmt.Errorf("storage: delete %q: %w", key, err)
	}
	b.pruneDirs(path.Dir(key))
	return b.syncDir(path.Dir(key))
}

// pruneDirs removes now-empty parent directories so deleted key spaces do
// not leave directory skeletons behind (which would also slow List). A
// concurrent Put into a directory removed here retries its mkdir.
func (b *FS) pruneDirs(dir string) {
	for ; dir != "." && dir != "/"; dir = path.Dir(dir) {
		if err := b.root.Remove(dir); err != nil {
			return // not empty (or already gone): stop climbing
		}
	}
}

// syncDir fsyncs a directory so a rename, link or unlink in it is durable.
func (b *FS) syncDir(dir string) error {
	d, err := b.root.Open(dir)
	if err != nil {
		if isNotExist(err) {
			return nil // pruned concurrently: nothing left to make durable
		}
		return fmt.Errorf("storage: open dir %q: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: fsync dir %q: %w", dir, err)
	}
	return nil
}

// isNotExist also treats ENOTDIR as missing: "a/b" when "a" is a file.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

type readCloser struct {
	io.Reader
	io.Closer
}
