package server

import "github.com/lancecat/lancecat/server/servertest"

// The helpers this package's tests share with the other side of the HTTP seam (servertest).
type syncBuffer = servertest.SyncBuffer

var (
	expect     = servertest.Expect
	lz4Stream  = servertest.LZ4Stream
	logLines   = servertest.LogLines
	accessLine = servertest.AccessLine
)
