// Command stamp prints buildinfo.Get() and the writer_version lancecat's manifests carry:
// TestLdflagsStampTheBuild builds it with -ldflags.
package main

import (
	"fmt"

	"github.com/lancecat/lancecat/internal/buildinfo"
	"github.com/lancecat/lancecat/lance"
)

func main() {
	fmt.Println(buildinfo.Get().String())
	fmt.Print("writer_version ", lance.WriterLibrary, " ", lance.WriterVersion)
}
