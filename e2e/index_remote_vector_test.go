package e2e

import "testing"

// TestSDKRemoteHNSWIndices: the official SDK in remote mode builds IVF_HNSW_SQ through lancecat
// (Index.hnswSq: issue 34 found it refused), sees it listed and described with its kind, and
// finds the exact row first through it (nprobes, ef); Index.hnswPq is refused by the remote
// client itself (no request is sent); Index.ivfRq is refused by lancecat with a 406 naming IVF_RQ. For every SDK version given;
// scripts/index/sdk-remote-vector.mjs checks the values.
func TestSDKRemoteHNSWIndices(t *testing.T) {
	runVectorIndexScripts(t, nil, "hnsw", "sdk-remote-vector.mjs")
}
