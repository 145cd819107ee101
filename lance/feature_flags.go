package lance

import "fmt"

// Manifest feature flags (reader_feature_flags / writer_feature_flags). A
// reader must refuse a dataset with reader flags it does not understand, a
// writer one with unknown writer flags; Lance recomputes both on every commit.
const (
	FlagDeletionFiles          uint64 = 1  // fragments may have deletion files
	FlagStableRowIDs           uint64 = 2  // fragments carry row id sequences
	FlagUseV2FormatDeprecated  uint64 = 4  // legacy, ignored
	FlagTableConfig            uint64 = 8  // manifest config is set (writer flag)
	FlagBasePaths              uint64 = 16 // files may live under other base paths
	FlagDisableTransactionFile uint64 = 32 // inline transaction only (writer flag)
	// FlagMixedFileVersions (Lance 14): fragments may hold data files of 2.x versions other than
	// the manifest's data storage version (pylance's append with an explicit newer
	// data_storage_version). Each file is read by its own version; once set it stays set.
	FlagMixedFileVersions uint64 = 256
)

// flagNames name the bits of a feature flag word, lowest first.
var flagNames = []struct {
	bit  uint64
	name string
}{
	{FlagDeletionFiles, "deletion files"},
	{FlagStableRowIDs, "stable row ids"},
	{FlagUseV2FormatDeprecated, "v2 format (deprecated)"},
	{FlagTableConfig, "table config"},
	{FlagBasePaths, "base paths"},
	{FlagDisableTransactionFile, "no transaction file"},
	{FlagMixedFileVersions, "mixed file versions"},
}

// FeatureFlagNames names the bits of flags, lowest first; a bit this package does not know is
// "unknown 0x…" (a dataset lancecat refuses to read or write).
func FeatureFlagNames(flags uint64) []string {
	out := []string{}
	for _, f := range flagNames {
		if flags&f.bit != 0 {
			out = append(out, f.name)
			flags &^= f.bit
		}
	}
	if flags != 0 {
		out = append(out, fmt.Sprintf("unknown %#x", flags))
	}
	return out
}
