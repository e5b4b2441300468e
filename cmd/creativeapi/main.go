// Command creativeapi is the creative review and account deposit API:
// one binary with the server and its management commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: creativeapi <command> [flags]

commands:
  serve [--migrate] [--seed] [--devchain]
                               run the HTTP server (flags: migrate and seed first;
                               run the chain watcher on a local chain simulator)
  migrate                      apply the database migrations
  seed [--creatives N]         load the demo data (re-runnable); N extra draft creatives
  users create|list|set-password|set-operator  manage users (passwords from stdin; platform operators)
  orgs create|add-member|remove-member  manage organizations
  transfers list|settle        review late and unmatched chain transfers
  chain rescan --since TIME    read the treasury's transfers again from TIME (idempotent)
  devchain pay --amount A | --amount-minor M
                               pay on the development chain simulator (serve --devchain)
  approval verify --jwks URL|FILE RECORD [FILE...]
                               check a signed approval record and files against it
  dev status                   development: what make run serves where
  version                      the build's version, commit and API version

Every command prints its usage with -h or --help (serve's lists its
environment variables). Configuration comes from environment variables;
see README.md.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "creativeapi:", err)
		}
		stop()
		os.Exit(exitCode(err))
	}
}

// env is what every command gets from main.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	if u, ok := usages[args[0]]; ok && wantsHelp(args[1:]) {
		fmt.Fprint(stdout, u)
		return nil
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, e, args[1:])
	case "migrate":
		return cmdMigrate(ctx, e, args[1:])
	case "seed":
		return cmdSeed(ctx, e, args[1:])
	case "users":
		return cmdUsers(ctx, e, args[1:])
	case "orgs":
		return cmdOrgs(ctx, e, args[1:])
	case "transfers":
		return cmdTransfers(ctx, e, args[1:])
	case "devchain":
		return cmdDevchain(ctx, e, args[1:])
	case "dev":
		return cmdDev(ctx, e, args[1:])
	case "version", "--version":
		if err := parse(newFlags("version"), args[1:]); err != nil {
			return err
		}
		fmt.Fprint(stdout, versionLine())
		return nil
	case "chain":
		return cmdChain(ctx, e, args[1:])
	case "approval":
		return cmdApproval(ctx, e, args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usagef("unknown command %q (see creativeapi --help)", args[0])
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
