package lance

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
)

func TestVersionHint(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()

	_, ok, err := ReadVersionHint(ctx, store)
	assert.NilError(t, err)
	assert.Check(t, !ok, "no hint file yet")

	assert.NilError(t, WriteVersionHint(ctx, store, 12))
	data, _, err := storage.ReadAll(ctx, store, VersionHintKey)
	assert.NilError(t, err)
	assert.Equal(t, string(data), `{"version":12}`) // Lance's exact bytes

	v, ok, err := ReadVersionHint(ctx, store)
	assert.NilError(t, err)
	assert.Check(t, ok)
	assert.Equal(t, v, uint64(12))
}

func TestReadVersionHintForms(t *testing.T) {
	tests := []struct {
		body    string
		version uint64
		wantErr bool
	}{
		{`{"version":3}`, 3, false},
		{"{\"version\": 18446744073709551615}\n", 18446744073709551615, false},
		{`{"version":3,"future":"field"}`, 3, false},
		{`{}`, 0, true},
		{`{"version":-1}`, 0, true},
		{`{"version":"3"}`, 0, true},
		{`not json`, 0, true},
		{string(make([]byte, maxHintSize+1)), 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.body[:min(len(tc.body), 20)], func(t *testing.T) {
			store := storage.NewMemory()
			putObject(t, store, VersionHintKey, []byte(tc.body))
			v, ok, err := ReadVersionHint(context.Background(), store)
			if tc.wantErr {
				assert.Check(t, err != nil)
				assert.Check(t, !ok)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, ok)
			assert.Equal(t, v, tc.version)
		})
	}
}
