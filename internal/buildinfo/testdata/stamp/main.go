// Command stamp prints buildinfo.Get(): TestLdflagsStampTheBuild builds it with -ldflags.
package main

import (
	"fmt"

	"github.com/lancecat/lancecat/internal/buildinfo"
)

func main() { fmt.Print(buildinfo.Get().String()) }
