// Package cli implements the antler command line: one file per
// subcommand, a root that owns the global flags, and [Main], which maps
// errors to exit codes (0 success, 1 runtime failure, 2 usage or
// configuration error). Output meant for programs goes to stdout (with
// --json); logs and warnings go to stderr.
package cli
