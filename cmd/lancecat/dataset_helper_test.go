package main

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/lance"
)

// mustDataset is the dataset of handle h (catalog.Table.Dataset), failing the test without one.
func mustDataset(t testing.TB, h catalog.Table) *lance.Dataset {
	t.Helper()
	ds, err := h.Dataset()
	assert.NilError(t, err)
	return ds
}

// storeName is prefix with a random suffix: an OpenFGA store of the test's own.
func storeName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}
