// Command lancecat is a governed Lance catalog: `lancecat serve` runs it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lancecat/lancecat/app"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func serveCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the catalog (no flags: a local catalog in ./lancecat-data on 127.0.0.1:2333)",
		Long: `Run the catalog. With no flag it serves a local catalog in ./lancecat-data on
127.0.0.1:2333 with authorization off. Every flag can also be set with the environment variable
named beside it, or as a key of the YAML file --config names (the flag's name; nested keys join
with "-"). A flag on the command line beats the environment, which beats the file;
--print-config shows the result.`,
		Args: exactArgs(),
	}
	cfg, fs, checkEnv := bindSettings(c)
	printConfig := c.Flags().Bool("print-config", false, "print the effective configuration (flags, environment, --config file, defaults) as a --config file, secrets masked, and exit")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkEnv(); err != nil {
			return err
		}
		if *printConfig {
			if err := cfg.Validate(); err != nil {
				return misuse("%v", err)
			}
			return app.PrintConfig(cmd.OutOrStdout(), fs)
		}
		// A setting that cannot be right (an --root of s3:/bad) is a misuse, said in one line
		// before anything is opened or created.
		if err := cfg.Validate(); err != nil {
			return misuse("%v", err)
		}
		logger, err := app.NewLogger(cmd.ErrOrStderr(), cfg.LogLevel)
		if err != nil {
			return misuse("%v", err)
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := app.Run(ctx, *cfg, logger, nil); err != nil {
			logger.Error("exiting", "error", err.Error())
			return failed(err)
		}
		return nil
	}
	return c
}
