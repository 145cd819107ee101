package lance

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// VersionsDir holds one manifest file per version (keys relative to the
// dataset root).
const VersionsDir = "_versions/"

const (
	manifestExt = ".manifest"
	// v2NameLen is 20 digits plus ".manifest": Rust tells the schemes apart
	// by this length alone, and so do we, so both sides agree on odd names.
	v2NameLen = 20 + len(manifestExt)
	// detachedPrefix marks detached versions, which sort after every
	// attached manifest and are never the latest version.
	detachedPrefix = "d"
	// detachedVersionMask is the bit Lance sets on detached version numbers.
	detachedVersionMask = uint64(1) << 63
)

// NamingScheme is how a dataset names its manifest files.
type NamingScheme uint8

const (
	// NamingV1 is `_versions/{version}.manifest`.
	NamingV1 NamingScheme = 1
	// NamingV2 is `_versions/{u64::MAX - version, 20 digits}.manifest`, so
	// that a lexically ordered listing yields the newest version first.
	// Lance writes it by default.
	NamingV2 NamingScheme = 2
)

func (s NamingScheme) String() string {
	switch s {
	case NamingV1:
		return "V1"
	case NamingV2:
		return "V2"
	}
	return fmt.Sprintf("NamingScheme(%d)", uint8(s))
}

// IsDetachedVersion reports whether version is a detached one (not part of
// the dataset's history).
func IsDetachedVersion(version uint64) bool { return version&detachedVersionMask != 0 }

// ManifestName is the file name of version's manifest under this scheme.
// Detached versions have the same name under both schemes.
func (s NamingScheme) ManifestName(version uint64) string {
	switch {
	case IsDetachedVersion(version):
		return detachedPrefix + strconv.FormatUint(version, 10) + manifestExt
	case s == NamingV1:
		return strconv.FormatUint(version, 10) + manifestExt
	default:
		return fmt.Sprintf("%020d%s", math.MaxUint64-version, manifestExt)
	}
}

// ManifestKey is the key of version's manifest, relative to the dataset root.
func (s NamingScheme) ManifestKey(version uint64) string {
	return VersionsDir + s.ManifestName(version)
}

// ParseManifestName parses a file name from _versions/. ok is false for
// anything that is not a manifest: the hint file, temporary and staging
// files (`.tmp…`, `….manifest#1`, `….manifest-<uuid>`). Detached manifests
// parse with their high bit set; callers that want history skip them with
// IsDetachedVersion.
func ParseManifestName(name string) (version uint64, scheme NamingScheme, ok bool) {
	stem, found := strings.CutSuffix(name, manifestExt)
	if !found {
		return 0, 0, false
	}
	if rest, detached := strings.CutPrefix(stem, detachedPrefix); detached {
		v, ok := parseDigits(rest)
		if !ok || !IsDetachedVersion(v) {
			return 0, 0, false
		}
		return v, NamingV2, true
	}
	n, ok := parseDigits(stem)
	if !ok {
		return 0, 0, false
	}
	if len(name) == v2NameLen {
		return math.MaxUint64 - n, NamingV2, true
	}
	return n, NamingV1, true
}

// parseDigits accepts only ASCII digits (strconv alone would take a sign).
func parseDigits(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
