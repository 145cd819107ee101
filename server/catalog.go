package server

import (
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/namespace"
)

// newCatalog is the Lance directory namespace over the catalog root.
func newCatalog(cfg Config, roots *catalogRoots) *namespace.Namespace {
	return namespace.New(roots.root, namespace.Options{
		RootURI:        roots.rootURI,
		StorageOptions: clientStorageOptions(cfg, roots.rootURI),
	})
}

// clientStorageOptions are the object-store settings a Lance client needs to read and write
// table locations under an S3 root directly (Lance's storage option names).
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
	set("aws_access_key_id", cfg.S3AccessKey)
	set("aws_secret_access_key", cfg.S3SecretKey)
	if cfg.S3AllowHTTP {
		opts["allow_http"] = "true"
	}
	if cfg.S3PathStyle {
		opts["aws_virtual_hosted_style_request"] = strconv.FormatBool(false)
	}
	return opts
}
