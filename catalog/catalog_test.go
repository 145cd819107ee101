package catalog_test

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// TestDirOnLocalDisk: the directory namespace over a local root passes the conformance suite.
func TestDirOnLocalDisk(t *testing.T) {
	catalogtest.Run(t, func(t *testing.T) catalog.Catalog {
		dir := t.TempDir()
		fs, err := storage.NewFS(dir)
		assert.NilError(t, err)
		return namespace.New(fs, namespace.Options{RootURI: dir})
	})
}

// TestDirOnMinIO: the directory namespace over an S3 root passes the conformance suite (skips
// without LANCECAT_TEST_S3_*).
func TestDirOnMinIO(t *testing.T) {
	catalogtest.Run(t, func(t *testing.T) catalog.Catalog {
		cfg, bucket := testenv.S3Bucket(t)
		uri := "s3://" + bucket + "/root"
		b, err := storage.Open(context.Background(), uri, cfg)
		assert.NilError(t, err)
		return namespace.New(b, namespace.Options{RootURI: uri})
	})
}
