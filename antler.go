// Package antler is the entry point for programs that embed Antler: build
// a registry with your own tools, then run Antler's command line (CLI,
// agent loop and gateway) with it.
//
//	reg := toolset.DefaultRegistry()
//	reg.RegisterTool(myFactory, "mycorp.tools:lookup")
//	os.Exit(antler.Main(ctx, os.Args[1:], antler.Options{Registry: reg}))
//
// See docs/extending.md and examples/custom-tool.
package antler

import (
	"context"

	"github.com/antlerhq/antler/internal/cli"
)

// Options configure Main; the zero value runs the standard antler binary.
type Options = cli.Options

// Main runs the antler command line with args (without the program name)
// and returns the exit code: 0 success, 1 runtime failure, 2 usage or
// configuration error.
func Main(ctx context.Context, args []string, opts Options) int {
	return cli.Main(ctx, args, opts)
}
