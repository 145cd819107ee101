package app

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/storage"
)

// catalogRoots are the stores the catalog serves: the Lance directory namespace root and the
// control root for governance records.
type catalogRoots struct {
	rootURI, controlURI string
	root, control       storage.Bucket
}

// s3Config is the S3 part of the settings.
func (c Config) s3Config() storage.S3Config {
	return storage.S3Config{
		Endpoint:  c.S3Endpoint,
		Region:    c.S3Region,
		AccessKey: c.S3AccessKey,
		SecretKey: c.S3SecretKey,
		PathStyle: c.S3PathStyle,
		Insecure:  c.S3AllowHTTP,
		Telemetry: c.Telemetry.storageTelemetry(),
	}
}

// resolveURI turns a setting into a storage URI (storage.ResolveRoot: a relative directory, such as
// the embedded default ./lancecat-data, is made absolute once, at startup; a setting that looks
// like a URI but is not one of the forms served is refused, naming the form expected).
func resolveURI(setting string) (string, error) { return storage.ResolveRoot(setting) }

// controlURI is the control root: the setting, or `_lancecat` under the catalog root.
func controlURI(cfg Config, rootURI string) (string, error) {
	if cfg.ControlRoot != "" {
		return resolveURI(cfg.ControlRoot)
	}
	if strings.Contains(rootURI, "://") {
		u, err := url.Parse(rootURI)
		if err != nil {
			return "", err
		}
		u.Path = strings.TrimSuffix(u.Path, "/") + "/_lancecat"
		return u.String(), nil
	}
	return filepath.Join(rootURI, "_lancecat"), nil
}

// openRoots opens the catalog and control roots; a local root is created when missing so that the
// embedded default needs no setup.
func openRoots(ctx context.Context, cfg Config) (*catalogRoots, error) {
	rootURI, err := resolveURI(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("--root: %w", err)
	}
	ctlURI, err := controlURI(cfg, rootURI)
	if err != nil {
		return nil, fmt.Errorf("--control-root: %w", err)
	}
	root, err := storage.Open(ctx, rootURI, cfg.s3Config())
	if err != nil {
		return nil, fmt.Errorf("opening the catalog root %s: %w", rootURI, err)
	}
	control, err := storage.Open(ctx, ctlURI, cfg.s3Config())
	if err != nil {
		return nil, fmt.Errorf("opening the control root %s: %w", ctlURI, err)
	}
	return &catalogRoots{rootURI: rootURI, controlURI: ctlURI, root: root, control: control}, nil
}

// readyChecks ask each root for one key: the cheapest request that proves it answers.
func (r *catalogRoots) readyChecks() []server.ReadyCheck {
	probe := func(b storage.Bucket) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := b.List(ctx, "", storage.ListOptions{Limit: 1})
			return err
		}
	}
	return []server.ReadyCheck{{Name: "root", Check: probe(r.root)}, {Name: "control_root", Check: probe(r.control)}}
}
