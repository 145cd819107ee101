package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/buildinfo"
)

// The command line is spf13/cobra (with pflag): flags before or after the arguments, --help on
// every command, shell completion (`lancecat completion bash|zsh|fish|powershell`), and one way
// every command fails. Before it, each command parsed its own flags by hand with package flag,
// which stops at the first argument, so `dataset import ./t.lance --from x.arrow` printed the
// usage and exited 2 without saying why.
//
// Exit codes: 0 done, 1 the work failed (runErr), 2 the command was misused (anything else:
// an unknown command or flag, a missing argument, a bad value, a bad LANCECAT_* variable). A
// remote command's failure says more (exitCodeOf): 3 not found, 4 conflict, 5 refused, and 2
// without the usage when the server calls the input invalid.
// Either way stderr gets one line `lancecat <command>: <what is wrong>`; a misuse then also gets
// the command's usage.

// runErr is a failure of the work itself (exit 1): the command was used right.
type runErr struct{ err error }

func (e runErr) Error() string { return e.err.Error() }
func (e runErr) Unwrap() error { return e.err }

// failed marks err as a failure of the work (exit 1); nil stays nil.
func failed(err error) error {
	if err == nil {
		return nil
	}
	return runErr{err}
}

// misuse is a usage error with a message of our own (exit 2).
func misuse(format string, args ...any) error { return fmt.Errorf(format, args...) }

// run executes the command line args and returns the process's exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	if cmd == nil {
		cmd = root
	}
	fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
	var re runErr
	if errors.As(err, &re) {
		return exitCodeOf(re.err)
	}
	fmt.Fprintf(stderr, "\n%s", cmd.UsageString())
	return 2
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "lancecat",
		Short: "A governed Lance catalog speaking the Lance Namespace REST spec",
		Long: `lancecat — a governed Lance catalog speaking the Lance Namespace REST spec.

'lancecat serve' with no flags runs a local catalog in ./lancecat-data on 127.0.0.1:2333.
Every setting is a flag and a LANCECAT_* environment variable: 'lancecat serve --help'.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Without a command: the usage, and exit 2 (a script that forgot its command learns so).
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return misuse("a command is required") },
	}
	// --version: the one line (buildinfo.Info.String); `lancecat version` says it in full.
	root.Version = buildinfo.Get().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(serveCmd(), namespaceCmd(), tableCmd(), grantCmd(), projectCmd(), warehouseCmd(), apikeyCmd(), trashCmd(), maintenanceCmd(), adminCmd(), datasetCmd(), conformanceCmd(), versionCmd())
	return root
}

// group is a command that only holds subcommands: without one it is a misuse, and an unknown one
// is named.
func group(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return misuse("a command is required")
			}
			return misuse("unknown command %q", args[0])
		},
	}
	c.AddCommand(subs...)
	return c
}

// exactArgs is cobra.ExactArgs with our wording: it names what is missing or extra.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return misuse("missing %s", strings.Join(names[len(args):], " and "))
		case len(args) > len(names):
			return misuse("unexpected argument %q", args[len(names)])
		}
		return nil
	}
}

// settings binds the server's settings (flags, LANCECAT_* environment and the --config file, as
// `lancecat serve` reads them) onto cmd and returns the config they fill and a check to run before
// using it: it reports malformed environment values and applies the file under the other two. Only the flags named by visible prefixes show in the command's help (an
// operator command needs the roots, not the HTTP knobs); the others are still accepted, as before.
func settings(cmd *cobra.Command, visible ...string) (*app.Config, func() error) {
	cfg, _, check := bindSettings(cmd, visible...)
	return cfg, check
}

// bindSettings is settings, also answering the flag set the settings are bound on (what
// --print-config reads).
func bindSettings(cmd *cobra.Command, visible ...string) (*app.Config, *flag.FlagSet, func() error) {
	cfg := app.DefaultConfig()
	gfs := flag.NewFlagSet(cmd.Name(), flag.ContinueOnError)
	envErrs := cfg.BindFlags(gfs, nil)
	cmd.Flags().AddGoFlagSet(gfs)
	if visible != nil {
		gfs.VisitAll(func(f *flag.Flag) {
			if f.Name == app.ConfigFlag {
				return
			}
			for _, p := range visible {
				if strings.HasPrefix(f.Name, p) {
					return
				}
			}
			_ = cmd.Flags().MarkHidden(f.Name)
		})
	}
	return &cfg, gfs, func() error {
		if err := envErrs.Err(); err != nil {
			return misuse("%v", err)
		}
		if cfg.ConfigFile != "" {
			if err := app.ApplyConfigFile(gfs, cfg.ConfigFile, cmd.Flags().Changed, nil); err != nil {
				return misuse("%v", err)
			}
		}
		return nil
	}
}

// rootFlags and authzFlags are the settings the operator commands show in their help.
var (
	rootFlags  = []string{"root", "control-root", "warehouse-root", "s3-", "delimiter", "log-level"}
	authzFlags = []string{"authz", "openfga-"}
)

// jsonFlag adds --json.
func jsonFlag(fs *pflag.FlagSet) *bool { return fs.Bool("json", false, "print JSON (for scripts)") }

// isTerminal reports whether w is a terminal: progress is drawn only there, never into a pipe or
// a file a script reads.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
