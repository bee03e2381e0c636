// Command custom-tool is Antler with one extra Go tool, registered under
// its own use string. Point a config.yaml entry at it:
//
//	tools:
//	  - name: word_stats
//	    group: text
//	    use: example.tools:word_stats
//
// then run `go run ./examples/custom-tool tools list` or `tools call`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/antlerhq/antler"
	"github.com/antlerhq/antler/toolset"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := antler.Main(ctx, os.Args[1:], antler.Options{Registry: registry()})
	stop()
	os.Exit(code)
}

// registry is Antler's default registry plus the example tool.
func registry() *toolset.Registry {
	r := toolset.DefaultRegistry()
	r.RegisterTool(newWordStats, "example.tools:word_stats", "example:word_stats")
	return r
}
