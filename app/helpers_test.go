package app

import (
	"github.com/lancecat/lancecat/catalog/governed"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/server/servertest"
	"github.com/lancecat/lancecat/spec"
)

// The helpers this package's tests share with the other side of the HTTP seam (servertest).
type syncBuffer = servertest.SyncBuffer

var (
	expect     = servertest.Expect
	lz4Stream  = servertest.LZ4Stream
	logLines   = servertest.LogLines
	accessLine = servertest.AccessLine
)

// credentialOptionNames are what vend_credentials false strips (the governed catalog's policy).
var credentialOptionNames = governed.CredentialOptionNames()

// pinnedOperations are the operations the server routes (server.SpecOperations): server's
// generated route test (routes_gen_test.go) proves they are the pinned spec's, in its order, and
// pinnedOperationCount is the pin's own count.
var (
	pinnedOperations     = mustSpecOperations()
	pinnedOperationCount = spec.LanceNamespace().Operations
)

func mustSpecOperations() []server.Operation {
	ops, err := server.SpecOperations()
	if err != nil {
		panic(err)
	}
	return ops
}
