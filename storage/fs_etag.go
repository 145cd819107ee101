//go:build unix

package storage

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// etagXattr caches a file's content hash next to the data, so Stat, Get and
// List of large files do not re-hash them. The cached value carries the
// file's fingerprint (inode, size, mtime) and is ignored when that no longer
// matches — e.g. the file was rewritten in place by a tool other than us.
// Filesystems without user xattrs still work; they just hash on every read
// of metadata.
const etagXattr = "user.lancecat.etag"

func fingerprint(fi os.FileInfo) string {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
	}
	return fingerprintOf(ino, fi.Size(), fi.ModTime().UnixNano())
}

func fingerprintOf(ino uint64, size, mtimeNano int64) string {
	return fmt.Sprintf("%d:%d:%d", ino, size, mtimeNano)
}

// parseCachedETag reads an etagXattr value; valid only if it was written
// for the file as it is now (inode, size, mtime).
func parseCachedETag(val []byte, ino uint64, size, mtimeNano int64) (string, bool) {
	parts := strings.Fields(string(val))
	if len(parts) != 3 || parts[0] != "v1" || parts[2] != fingerprintOf(ino, size, mtimeNano) {
		return "", false
	}
	return parts[1], true
}

// saveETag records etag on the open file; best effort.
func saveETag(f *os.File, fi os.FileInfo, etag string) {
	val := []byte("v1 " + etag + " " + fingerprint(fi))
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.Fsetxattr(int(fd), etagXattr, val, 0) })
	}
}

// fileETag returns the ETag of the open regular file f, from the xattr cache
// when it is still valid, else by hashing the content (and re-caching).
func fileETag(f *os.File, fi os.FileInfo) (string, error) {
	if etag, ok := cachedETag(f, fi); ok {
		return etag, nil
	}
	h := newContentHash()
	// SectionReader reads with ReadAt, leaving f's offset at 0 for Get.
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return "", fmt.Errorf("hash %s: %w", f.Name(), err)
	}
	etag := h.ETag()
	saveETag(f, fi, etag)
	return etag, nil
}

func cachedETag(f *os.File, fi os.FileInfo) (string, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	buf := make([]byte, 256)
	var n int
	var gerr error
	if err := rc.Control(func(fd uintptr) { n, gerr = unix.Fgetxattr(int(fd), etagXattr, buf) }); err != nil || gerr != nil {
		return "", false
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
	}
	return parseCachedETag(buf[:n], ino, fi.Size(), fi.ModTime().UnixNano())
}
