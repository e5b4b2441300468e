package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"creativeapi"
)

// The command line follows three rules, held by TestEveryCommandHelps and
// TestUsageErrorsExitTwiceWithOneMessage:
//   - -h or --help anywhere among a command's arguments prints that
//     command's usage on stdout and exits 0, before anything else runs
//     (no configuration is read, no database opened);
//   - a usage error (missing or unknown subcommand, bad flag, stray
//     argument) is one line on stderr and exits 2;
//   - any other failure is one line on stderr and exits 1.
//
// A new command adds its usage text to usages and its case to run's
// switch; a new subcommand adds its line to its command's usage text and
// parses its flags with newFlags and parse.

// usages holds the usage text of every command, by name; run prints it
// for -h/--help.
var usages = map[string]string{
	"serve":     serveUsage,
	"migrate":   migrateUsage,
	"seed":      seedUsage,
	"users":     usersUsage,
	"orgs":      orgsUsage,
	"transfers": transfersUsage,
	"chain":     chainUsage,
	"devchain":  devchainUsage,
	"dev":       devUsage,
	"version":   versionUsage,
	"approval":  approvalUsage,
}

// usageError is a mistake in the command line: main prints it once and
// exits 2.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// usagef returns a usageError.
func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitCode is what main exits with after err (printed by main unless it
// is flag.ErrHelp, whose usage was already printed).
func exitCode(err error) int {
	var u usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u), errors.Is(err, flag.ErrHelp):
		return 2
	}
	return 1
}

// wantsHelp reports whether args ask for help: -h, -help or --help before
// a "--" (after which everything is an argument).
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// subcommand splits args into a subcommand of command and its arguments,
// refusing a missing or unknown one as a usage error.
func subcommand(command string, args []string, known ...string) (string, []string, error) {
	if len(args) == 0 {
		return "", nil, usagef("%s: missing subcommand (one of %s; see creativeapi %s --help)", command, strings.Join(known, ", "), command)
	}
	for _, k := range known {
		if args[0] == k {
			return k, args[1:], nil
		}
	}
	return "", nil, usagef("%s: unknown subcommand %q (one of %s; see creativeapi %s --help)", command, args[0], strings.Join(known, ", "), command)
}

// newFlags returns a flag set that prints nothing itself: parse turns its
// errors into one usage error, and run prints the usage for -h/--help.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args into fs and refuses stray arguments, which are usually
// a forgotten flag name.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usagef("%s: %v (see creativeapi %s --help)", fs.Name(), err, strings.Fields(fs.Name())[0])
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q (see creativeapi %s --help)", fs.Name(), fs.Arg(0), strings.Fields(fs.Name())[0])
	}
	return nil
}

const versionUsage = `usage: creativeapi version   (or creativeapi --version)

Prints the build's version, its commit and the version of the API it serves.
`

// buildCommit is the commit `make build` stamps (-ldflags -X), for builds
// without VCS information (GOFLAGS=-buildvcs=false, a git worktree).
var buildCommit string

// versionLine is what `creativeapi version` prints: the module version
// (set by go install/go build of a tagged module, else "(devel)"), the VCS
// commit the binary was built from (with "+dirty" for uncommitted
// changes), and info.version of the embedded openapi.yaml.
func versionLine() string {
	version, commit := "(devel)", "unknown"
	if buildCommit != "" {
		commit = buildCommit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && commit != "unknown" {
			commit += "+dirty"
		}
	}
	return fmt.Sprintf("creativeapi %s commit %s api %s\n", version, commit, apiVersion(creativeapi.OpenAPIYAML))
}

// apiVersion reads info.version from the spec the way
// scripts/spec-version.sh does: the first "  version:" line inside the
// top-level info block.
func apiVersion(spec []byte) string {
	inside := false
	for _, line := range strings.Split(string(spec), "\n") {
		switch {
		case line == "info:":
			inside = true
		case inside && line != "" && line[0] != ' ' && line[0] != '#':
			return "unknown"
		case inside && strings.HasPrefix(line, "  version:"):
			return strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "  version:")), `"'`)
		}
	}
	return "unknown"
}
