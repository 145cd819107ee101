//go:build unix

package storage

import (
	"context"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"time"
)

// TempIdleLimit is how long a temp file of the filesystem backend must have gone unwritten
// before the sweep NewFS runs deletes it. An upload writes its temp file as the body streams in
// and commits it right after, so a file idle this long belongs to a writer that died (kill -9,
// power loss) between staging and rename: no live request of this or another process on the
// root stalls that long.
const TempIdleLimit = time.Hour

// SweepTemp deletes the temp files crashed writers left under <root>/.lancecat-tmp/ that have not
// been written for idle. Only names this backend's writer gives (24 lowercase hex digits + ".tmp",
// directly in that directory, regular files) are candidates: lock files and anything else found
// there are kept. It returns how many files it removed.
func (b *FS) SweepTemp(ctx context.Context, idle time.Duration) (int, error) {
	d, err := b.root.Open(reservedDir)
	if err != nil {
		if isNotExist(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("storage: open %s: %w", reservedDir, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return 0, fmt.Errorf("storage: read %s: %w", reservedDir, err)
	}
	cutoff := time.Now().Add(-idle)
	removed := 0
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		if !e.Type().IsRegular() || !isTempName(e.Name()) {
			continue
		}
		name := path.Join(reservedDir, e.Name())
		fi, err := b.root.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() || fi.ModTime().After(cutoff) {
			continue // gone meanwhile, or still (possibly) being written
		}
		if err := b.root.Remove(name); err == nil {
			removed++
		}
	}
	return removed, nil
}

// isTempName reports whether name is one stage gives its temp files.
func isTempName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".tmp")
	if !ok || len(stem) != 24 || strings.ToLower(stem) != stem {
		return false
	}
	_, err := hex.DecodeString(stem)
	return err == nil
}
