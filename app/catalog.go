package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/routing"
	"github.com/lancecat/lancecat/storage"
)

// The router is the catalog every door sees: each operation resolves its root once.
var _ catalog.Catalog = (*routing.Router)(nil)

// newCatalog is the Lance directory namespace over the catalog root, behind the router that
// sends each warehouse-bound namespace to its warehouse's root.
func newCatalog(cfg Config, roots *catalogRoots) (*routing.Router, error) {
	reserved := reservedURIs(cfg, roots)
	return routing.New(routing.Options{
		Default:          openNamespace(cfg, roots.root, roots.rootURI, reserved),
		Store:            registry.NewStore(roots.control),
		RequireWarehouse: cfg.Governance.RequireWarehouseNamespaces,
		Delimiter:        cfg.Delimiter,
		Open: func(ctx context.Context, rootURI string) (*namespace.Namespace, error) {
			b, err := storage.Open(ctx, rootURI, cfg.s3Config())
			if err != nil {
				return nil, fmt.Errorf("opening warehouse root %s: %w", rootURI, err)
			}
			return openNamespace(cfg, b, rootURI, reserved), nil
		},
	})
}

// openNamespace serves the namespace at rootURI; whichever of the reserved URIs lie inside it
// are no table's location.
func openNamespace(cfg Config, root storage.Bucket, rootURI string, reserved []string) *namespace.Namespace {
	return namespace.New(root, namespace.Options{RootURI: rootURI, StorageOptions: clientStorageOptions(cfg, rootURI),
		Reserved: namespace.ReservedUnder(rootURI, reserved...), IndexBuild: cfg.IndexBuild.options()})
}

// reservedURIs are the places the server keeps for itself, which no table location may touch in
// any root they lie in: the catalog root (inside a warehouse root), the control root wherever it
// is configured, and the warehouse root when one is configured (its default, <root>-warehouses,
// lies beside the catalog root).
func reservedURIs(cfg Config, roots *catalogRoots) []string {
	uris := []string{roots.rootURI, roots.controlURI}
	if cfg.Governance.WarehouseRoot != "" {
		if u, err := resolveURI(cfg.Governance.WarehouseRoot); err == nil {
			uris = append(uris, u)
		}
	}
	return uris
}

// clientStorageOptions are the object-store settings a Lance client is answered with for table
// locations under an S3 root (Lance's storage option names). By default they are only the
// non-secret connection hints (endpoint, region, plain HTTP, path-style addressing): facts a
// client needs to reach the same store and that grant nothing. Credentials stay with the server
// and clients bring their own; the server's static key and secret are added only when the
// operator opts in with --vend-static-credentials (it gives every caller who may describe a
// table the server's own reach). Credentials the server found through the AWS chain (no
// --s3-access-key) are never handed out.
func clientStorageOptions(cfg Config, rootURI string) map[string]string {
	if !strings.HasPrefix(rootURI, "s3://") {
		return nil
	}
	opts := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			opts[k] = v
		}
	}
	if cfg.S3Endpoint != "" {
		scheme := "https://"
		if cfg.S3AllowHTTP {
			scheme = "http://"
		}
		endpoint := cfg.S3Endpoint
		if !strings.Contains(endpoint, "://") {
			endpoint = scheme + endpoint
		}
		set("aws_endpoint", endpoint)
	}
	set("aws_region", cfg.S3Region)
	if cfg.VendStaticCredentials {
		set("aws_access_key_id", cfg.S3AccessKey)
		set("aws_secret_access_key", cfg.S3SecretKey)
	}
	if cfg.S3AllowHTTP {
		opts["allow_http"] = "true"
	}
	if cfg.S3PathStyle {
		opts["aws_virtual_hosted_style_request"] = strconv.FormatBool(false)
	}
	return opts
}
