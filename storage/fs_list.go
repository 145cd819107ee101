//go:build unix

package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// List walks the directory tree in key order. A plain recursive walk is not
// key order: directory "a" holds keys "a/…", which sort after a sibling file
// "a-b" ('-' < '/') but before "a0". Sorting each directory's entries by
// name+"/" for directories and name for files makes the depth-first walk
// emit keys in exactly lexicographic order.
func (b *FS) List(ctx context.Context, prefix string, opts ListOptions) (ListPage, error) {
	if err := ctx.Err(); err != nil {
		return ListPage{}, err
	}
	if err := validatePrefix(prefix); err != nil {
		return ListPage{}, err
	}
	w := fsWalker{b: b, ctx: ctx, prefix: prefix, opts: opts, p: newPager(prefix, opts)}
	// Start in the deepest directory the prefix names fully ("a/b" -> "a/").
	base := prefix[:strings.LastIndexByte(prefix, '/')+1]
	if _, err := w.walk(base); err != nil {
		return ListPage{}, fmt.Errorf("storage: list %q: %w", prefix, err)
	}
	return w.p.page, nil
}

type fsWalker struct {
	b      *FS
	ctx    context.Context
	prefix string
	opts   ListOptions
	p      *pager
}

type dirEntry struct {
	name  string
	isDir bool
	sort  string
}

// walk visits dir (a key prefix ending in "/" or "" for the root) and
// reports whether the caller should keep going.
func (w *fsWalker) walk(dir string) (bool, error) {
	if err := w.ctx.Err(); err != nil {
		return false, err
	}
	entries, err := w.b.readDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if !e.isDir {
			key := dir + e.name
			if !strings.HasPrefix(key, w.prefix) || key <= w.opts.StartAfter || ValidateKey(key) != nil {
				continue // foreign files with unaddressable names are not objects
			}
			if w.p.endsBefore(key) {
				// key may vanish before the next page asks for it; that page
				// is then shorter, as a listing racing a delete is anywhere.
				return false, nil
			}
			info, err := w.b.Stat(w.ctx, key)
			if errors.Is(err, ErrNotFound) {
				continue // deleted since readDir
			}
			if err != nil {
				return false, err
			}
			if !w.p.add(info) {
				return false, nil
			}
			continue
		}
		sub := dir + e.name + "/"
		if !strings.HasPrefix(sub, w.prefix) && !strings.HasPrefix(w.prefix, sub) {
			continue
		}
		// Every key below sub is sub+x; if StartAfter sorts at or above all
		// of them, skip the whole subtree without reading it.
		if sub <= w.opts.StartAfter && !strings.HasPrefix(w.opts.StartAfter, sub) {
			continue
		}
		if w.opts.Delimiter && strings.HasPrefix(sub, w.prefix) {
			// sub is a common prefix; like S3 it exists only if some object
			// lies below it. The pager rolls the probe key up into sub.
			found, err := w.b.firstFile(sub)
			if err != nil {
				return false, err
			}
			if found != "" && !w.p.add(ObjectInfo{Key: found}) {
				return false, nil
			}
			continue
		}
		if more, err := w.walk(sub); !more || err != nil {
			return more, err
		}
	}
	return true, nil
}

// readDir returns dir's entries in key order, hiding the reserved scratch
// directory and anything that is neither a regular file nor a directory.
// A directory that vanished (pruned by Delete) reads as empty.
func (b *FS) readDir(dir string) ([]dirEntry, error) {
	name := strings.TrimSuffix(dir, "/")
	if name == "" {
		name = "."
	}
	d, err := b.openDir(name)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer d.Close()
	des, err := d.ReadDir(-1)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]dirEntry, 0, len(des))
	for _, de := range des {
		if dir == "" && de.Name() == reservedDir {
			continue
		}
		switch {
		case de.Type().IsRegular():
			out = append(out, dirEntry{name: de.Name(), sort: de.Name()})
		case de.IsDir():
			out = append(out, dirEntry{name: de.Name(), isDir: true, sort: de.Name() + "/"})
		}
	}
	slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.sort, b.sort) })
	return out, nil
}

// firstFile returns the key of some object below dir ("" if none),
// reading directories in small batches so a huge directory is not read in
// full just to prove it is non-empty.
func (b *FS) firstFile(dir string) (string, error) {
	queue := []string{dir}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		found, subdirs, err := b.scanDir(cur)
		if err != nil || found != "" {
			return found, err
		}
		queue = append(queue, subdirs...)
	}
	return "", nil
}

// scanDir returns the first object directly in dir, or else dir's
// subdirectories.
func (b *FS) scanDir(dir string) (found string, subdirs []string, err error) {
	d, err := b.openDir(path.Clean(dir))
	if err != nil {
		if isNotExist(err) {
			return "", nil, nil
		}
		return "", nil, err
	}
	defer d.Close()
	for {
		des, err := d.ReadDir(128)
		for _, de := range des {
			key := dir + de.Name()
			switch {
			case de.Type().IsRegular() && ValidateKey(key) == nil:
				return key, nil, nil
			case de.IsDir():
				subdirs = append(subdirs, key+"/")
			}
		}
		if err == io.EOF || isNotExist(err) {
			return "", subdirs, nil
		}
		if err != nil {
			return "", nil, err
		}
	}
}

// openDir opens the directory name (relative to the root) for reading its
// entries. It is resolved through os.Root like every path, but read through
// a plain *os.File on a duplicate of that descriptor: ReadDir on a file
// opened in a Root lstat's every entry (it cannot load types lazily), which
// made listing a 1,000-entry directory cost 1,000 extra syscalls; a plain
// file takes the types getdents reports and stats (relative to the
// directory's descriptor) only where the filesystem reports none.
func (b *FS) openDir(name string) (*os.File, error) {
	if f, ok, err := b.beneath.open(b.root.Name(), name, os.O_RDONLY|unix.O_DIRECTORY); ok {
		// A plain descriptor already: nothing to duplicate.
		return f, err
	}
	d, err := b.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	rc, err := d.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, &os.PathError{Op: "dup", Path: name, Err: derr}
	}
	return os.NewFile(uintptr(fd), name), nil
}
