package lance

import (
	"math"
	"testing"

	"gotest.tools/v3/assert"
)

func TestManifestNameFormat(t *testing.T) {
	tests := []struct {
		scheme  NamingScheme
		version uint64
		want    string
	}{
		{NamingV1, 1, "1.manifest"},
		{NamingV1, 42, "42.manifest"},
		{NamingV2, 1, "18446744073709551614.manifest"},
		{NamingV2, 2, "18446744073709551613.manifest"},
		{NamingV2, 42, "18446744073709551573.manifest"},
		{NamingV2, 1 << 62, "13835058055282163711.manifest"},
		{NamingV2, math.MaxUint64 >> 1, "09223372036854775808.manifest"}, // largest attached version
		{NamingV2, detachedVersionMask | 7, "d9223372036854775815.manifest"},
		{NamingV1, detachedVersionMask | 7, "d9223372036854775815.manifest"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.scheme.ManifestName(tc.version), tc.want)
			assert.Equal(t, tc.scheme.ManifestKey(tc.version), "_versions/"+tc.want)

			v, scheme, ok := ParseManifestName(tc.want)
			assert.Assert(t, ok)
			assert.Equal(t, v, tc.version)
			if !IsDetachedVersion(tc.version) {
				assert.Equal(t, scheme, tc.scheme)
			}
		})
	}
}

func TestParseManifestName(t *testing.T) {
	tests := []struct {
		name    string
		ok      bool
		version uint64
		scheme  NamingScheme
	}{
		{"7.manifest", true, 7, NamingV1},
		{"007.manifest", true, 7, NamingV1}, // Lance parses leading zeros too
		{"18446744073709551607.manifest", true, 8, NamingV2},
		{"18446744073709551615.manifest", true, 0, NamingV2},
		// 20 digits but beyond u64: not a manifest (Rust's parse fails too).
		{"99999999999999999999.manifest", false, 0, 0},
		{"latest_version_hint.json", false, 0, 0},
		{"7.manifest#1", false, 0, 0},                                                       // local staging
		{".tmp_7.manifest_9c100374-3298-4537-afc6-f5ee7913666d", false, 0, 0},               // temp file
		{"7.manifest-9c100374-3298-4537-afc6-f5ee7913666d", false, 0, 0},                    // external store staging
		{"18446744073709551607.manifest-9c100374-3298-4537-afc6-f5ee7913666d", false, 0, 0}, // same, V2
		{".manifest", false, 0, 0},
		{"+7.manifest", false, 0, 0},
		{"-7.manifest", false, 0, 0},
		{"7.txn", false, 0, 0},
		{"a7.manifest", false, 0, 0},
		{"d5.manifest", false, 0, 0}, // "detached" without the detached bit
		{"d9223372036854775815.manifest", true, detachedVersionMask | 7, NamingV2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, scheme, ok := ParseManifestName(tc.name)
			assert.Equal(t, ok, tc.ok)
			assert.Equal(t, v, tc.version)
			assert.Equal(t, scheme, tc.scheme)
		})
	}
}

func TestNamingSchemeString(t *testing.T) {
	assert.Equal(t, NamingV1.String(), "V1")
	assert.Equal(t, NamingV2.String(), "V2")
	assert.Equal(t, NamingScheme(9).String(), "NamingScheme(9)")
}
