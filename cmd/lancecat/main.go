// Command lancecat is a governed Lance catalog: `lancecat serve` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/lancecat/lancecat/server"
)

const usage = `lancecat — a governed Lance catalog speaking the Lance Namespace REST spec

Usage:
  lancecat serve [flags]     run the catalog (no flags: a local catalog in ./lancecat-data on 127.0.0.1:2333)
  lancecat apikey …          create, revoke and list API keys (kept hashed on the control root)
  lancecat trash …           list recoverable drops, purge those past their deadline
  lancecat maintenance …     plan or run a table's maintenance (compact, cleanup), or one sweep
  lancecat admin estate …    list, grant and revoke estate admins (in OpenFGA)
  lancecat dataset …         inspect, versions, tags, cleanup of a Lance dataset (local or s3://)
  lancecat help              this text

Run 'lancecat serve --help' for every setting.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "dataset":
		return datasetCmd(args[1:], stdout, stderr)
	case "apikey":
		return apikeyCmd(args[1:], stdout, stderr)
	case "trash":
		return trashCmd(args[1:], stdout, stderr)
	case "maintenance":
		return maintenanceCmd(args[1:], stdout, stderr)
	case "admin":
		return adminCmd(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "lancecat: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lancecat serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := server.DefaultConfig()
	envErrs := cfg.BindFlags(fs, nil)
	fs.Usage = func() {
		// Asked-for help goes to stdout; help after a bad flag goes to stderr with the error.
		if wantsHelp(args) {
			fs.SetOutput(stdout)
		}
		fmt.Fprintf(fs.Output(), "Usage: lancecat serve [flags]\n\nEvery flag can also be set with the environment variable named beside it.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := envErrs.Err(); err != nil {
		fmt.Fprintln(stderr, "lancecat serve:", err)
		return 2
	}
	logger, err := server.NewLogger(stderr, cfg.LogLevel)
	if err != nil {
		fmt.Fprintln(stderr, "lancecat serve:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := server.Run(ctx, cfg, logger, nil); err != nil {
		logger.Error("exiting", "error", err.Error())
		return 1
	}
	return 0
}

func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "--h", "-help", "--help":
			return true
		}
	}
	return false
}
