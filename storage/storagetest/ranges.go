package storagetest

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
)

func testGetRange(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	put(t, b, "r", "0123456789")
	for _, tc := range []struct {
		name        string
		off, length int64
		want        string
		err         error
	}{
		{name: "whole", off: 0, length: -1, want: "0123456789"},
		{name: "whole exact", off: 0, length: 10, want: "0123456789"},
		{name: "head", off: 0, length: 3, want: "012"},
		{name: "first byte", off: 0, length: 1, want: "0"},
		{name: "middle", off: 4, length: 3, want: "456"},
		{name: "middle to end", off: 4, length: -1, want: "456789"},
		{name: "last byte", off: 9, length: 1, want: "9"},
		{name: "last byte to end", off: 9, length: -1, want: "9"},
		{name: "tail exact", off: 7, length: 3, want: "789"},
		{name: "length beyond end", off: 8, length: 100, want: "89"},
		{name: "whole beyond end", off: 0, length: 100, want: "0123456789"},
		{name: "zero length", off: 5, length: 0, want: ""},
		{name: "zero length at start", off: 0, length: 0, want: ""},
		{name: "offset at end", off: 10, length: 1, err: storage.ErrInvalidRange},
		{name: "offset at end to end", off: 10, length: -1, err: storage.ErrInvalidRange},
		{name: "offset past end", off: 11, length: 5, err: storage.ErrInvalidRange},
		{name: "negative offset", off: -1, length: 2, err: storage.ErrInvalidRange},
	} {
		got, err := readRange(ctx, b, "r", tc.off, tc.length)
		if tc.err != nil {
			errorIs(t, err, tc.err, tc.name)
			continue
		}
		if assert.Check(t, err, tc.name) {
			assert.Check(t, is.Equal(got, tc.want), tc.name)
		}
	}
	_, err := b.GetRange(ctx, "missing", 0, 1)
	errorIs(t, err, storage.ErrNotFound, "missing key")
}

func testGetRangeEmpty(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	put(t, b, "e", "")
	for _, tc := range []struct {
		name        string
		off, length int64
		err         error
	}{
		{name: "offset 0 to end", off: 0, length: -1},
		{name: "offset 0 beyond end", off: 0, length: 5},
		{name: "offset 0 zero length", off: 0, length: 0},
		{name: "offset 1", off: 1, length: -1, err: storage.ErrInvalidRange},
	} {
		got, err := readRange(ctx, b, "e", tc.off, tc.length)
		if tc.err != nil {
			errorIs(t, err, tc.err, tc.name)
			continue
		}
		if assert.Check(t, err, tc.name) {
			assert.Check(t, is.Equal(got, ""), tc.name)
		}
	}
}
