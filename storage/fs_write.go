//go:build unix

package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// staged is a fully written, fsynced temp file waiting to be committed.
type staged struct {
	name string // root-relative temp path
	info ObjectInfo
}

func (b *FS) Put(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	return b.write(ctx, key, r, size, func(s staged) error {
		return b.root.Rename(s.name, key)
	})
}

func (b *FS) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	return b.write(ctx, key, r, size, func(s staged) error {
		// link(2) refuses to replace an existing name, so even a process
		// that ignores our lock cannot make two writers both win. This is
		// the stage-then-hard-link protocol Lance uses on local disk.
		err := b.root.Link(s.name, key)
		if errors.Is(err, fs.ErrExist) {
			if fi, serr := b.root.Lstat(key); serr == nil && fi.IsDir() {
				return fmt.Errorf("storage: %q is a directory of other keys: %w", key, err)
			}
			return fmt.Errorf("%w: %q", ErrExists, key)
		}
		return err
	})
}

func (b *FS) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (ObjectInfo, error) {
	if err := checkIfMatchETag(key, etag); err != nil {
		return ObjectInfo{}, err
	}
	return b.write(ctx, key, r, size, func(s staged) error {
		// Under the key lock no other writer can slip in between this
		// compare and the rename.
		cur, err := b.Stat(ctx, key)
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%w: %q does not exist", ErrPreconditionFailed, key)
		}
		if err != nil {
			return err
		}
		if cur.ETag != etag {
			return fmt.Errorf("%w: %q has ETag %q, not %q", ErrPreconditionFailed, key, cur.ETag, etag)
		}
		return b.root.Rename(s.name, key)
	})
}

// write stages the body outside the lock (so slow uploads never hold it),
// then commits under the key lock, creating parent directories on demand.
func (b *FS) write(ctx context.Context, key string, r io.Reader, size int64, commit func(staged) error) (ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	s, err := b.stage(ctx, r, size)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("storage: put %q: %w", key, err)
	}
	// Rename consumes the temp file; after a link or a failure it is ours
	// to remove. Removing an already-renamed name is a harmless ENOENT.
	defer b.root.Remove(s.name)

	unlock, err := b.locks.lock(ctx, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	err = b.commitWithParents(key, s, commit)
	unlock()
	if err != nil {
		if errors.Is(err, ErrExists) || errors.Is(err, ErrPreconditionFailed) {
			return ObjectInfo{}, err
		}
		return ObjectInfo{}, fmt.Errorf("storage: put %q: %w", key, err)
	}
	if err := b.syncDir(path.Dir(key)); err != nil {
		return ObjectInfo{}, err
	}
	s.info.Key = key
	return s.info, nil
}

// commitWithParents runs commit, creating missing parent directories and
// retrying: a concurrent Delete may prune a directory we just created.
func (b *FS) commitWithParents(key string, s staged, commit func(staged) error) error {
	const attempts = 32
	var err error
	for range attempts {
		err = commit(s)
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// ENOENT from mkdir means an ancestor was pruned meanwhile: retry.
		if err = b.mkdirParents(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// mkdirParents creates key's parent directories and fsyncs each parent
// that gained an entry, so the new path survives a crash.
func (b *FS) mkdirParents(key string) error {
	dir := path.Dir(key)
	if dir == "." {
		return nil
	}
	var created []string
	for d := dir; d != "."; d = path.Dir(d) {
		if _, err := b.root.Lstat(d); err == nil {
			break
		}
		created = append(created, d)
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err := b.root.Mkdir(created[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("mkdir %q: %w", created[i], err)
		}
		if err := b.syncDir(path.Dir(created[i])); err != nil {
			return err
		}
	}
	return nil
}

// stage writes the body to a fresh temp file, hashing it on the way for the
// ETag, and fsyncs it.
func (b *FS) stage(ctx context.Context, r io.Reader, size int64) (s staged, err error) {
	var rnd [12]byte
	rand.Read(rnd[:])
	s.name = path.Join(reservedDir, hex.EncodeToString(rnd[:])+".tmp")
	f, err := b.root.OpenFile(s.name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return staged{}, err
	}
	defer func() {
		if err != nil {
			f.Close()
			b.root.Remove(s.name)
		}
	}()
	h := newContentHash()
	n, err := copyBody(ctx, io.MultiWriter(f, h), r, size)
	if err != nil {
		return staged{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		return staged{}, err
	}
	s.info = ObjectInfo{Size: n, ETag: h.ETag(), ModTime: fi.ModTime()}
	saveETag(f, fi, s.info.ETag)
	if err := f.Sync(); err != nil {
		return staged{}, err
	}
	if err := f.Close(); err != nil {
		return staged{}, err
	}
	return s, nil
}
