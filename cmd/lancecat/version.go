package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/internal/buildinfo"
)

// versionCmd is `lancecat version`: the build's version, commit, date and Go version (a release
// build stamps them with -ldflags; a plain `go build` shows what the toolchain recorded).
func versionCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version of this binary",
		Args:  exactArgs(),
	}
	asJSON := jsonFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		in := buildinfo.Get()
		if *asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return failed(enc.Encode(in))
		}
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "lancecat %s\n  commit:   %s\n  built:    %s\n  go:       %s\n  platform: %s\n",
			in.Version, in.Commit, in.Date, in.GoVersion, in.Platform)
		return failed(err)
	}
	return c
}
