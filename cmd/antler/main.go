// Command antler is the Antler agent harness: see `antler --help`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/antlerhq/antler/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], cli.Options{})
	stop()
	os.Exit(code)
}
