package storage_test

import (
	"testing"

	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/storage/storagetest"
)

func TestMemoryConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Bucket { return storage.NewMemory() })
}
