package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// catalogRoot is where the catalog keeps its namespaces and tables.
type catalogRoot struct {
	uri   string
	check func(context.Context) error
}

// openRoot makes sure the catalog root is usable: a local root is created when missing so that the
// embedded default needs no setup.
func openRoot(_ context.Context, cfg Config) (*catalogRoot, error) {
	if strings.HasPrefix(cfg.Root, "s3://") {
		return nil, fmt.Errorf("--root %s: S3 roots are not served yet", cfg.Root)
	}
	dir := strings.TrimPrefix(cfg.Root, "file://")
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--root %s: %w", cfg.Root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("creating the catalog root: %w", err)
	}
	return &catalogRoot{uri: abs, check: func(context.Context) error {
		_, err := os.Stat(abs)
		return err
	}}, nil
}
