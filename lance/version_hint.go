package lance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/lancecat/lancecat/storage"
)

// VersionHintKey is the file where Lance records the latest version after
// each commit. It is only a hint: it can be stale, missing or ahead of what
// a listing shows, so nothing here decides the latest version from it.
const VersionHintKey = VersionsDir + "latest_version_hint.json"

// maxHintSize bounds the read; the real file is 13–30 bytes.
const maxHintSize = 4 << 10

// ReadVersionHint returns the version recorded in latest_version_hint.json.
// ok is false when there is no hint file.
func ReadVersionHint(ctx context.Context, store storage.Reader) (version uint64, ok bool, err error) {
	rc, _, err := store.Get(ctx, VersionHintKey)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("lance: read version hint: %w", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxHintSize+1))
	if err != nil {
		return 0, false, fmt.Errorf("lance: read version hint: %w", err)
	}
	if len(data) > maxHintSize {
		return 0, false, fmt.Errorf("lance: version hint is larger than %d bytes", maxHintSize)
	}
	var hint struct {
		Version *uint64 `json:"version"`
	}
	if err := json.Unmarshal(data, &hint); err != nil {
		return 0, false, fmt.Errorf("lance: parse version hint: %w", err)
	}
	if hint.Version == nil {
		return 0, false, fmt.Errorf("lance: version hint has no \"version\"")
	}
	return *hint.Version, true, nil
}

// WriteVersionHint records version as the latest, byte for byte as Lance
// writes it (`{"version":N}`, no whitespace). Call it only after version is
// committed; it is best effort, since readers never trust it over a listing.
func WriteVersionHint(ctx context.Context, store storage.Writer, version uint64) error {
	body := []byte(`{"version":` + strconv.FormatUint(version, 10) + `}`)
	if _, err := store.Put(ctx, VersionHintKey, bytes.NewReader(body), int64(len(body))); err != nil {
		return fmt.Errorf("lance: write version hint: %w", err)
	}
	return nil
}
