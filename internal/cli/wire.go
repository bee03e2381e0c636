package cli

import (
	"context"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// wire builds the services of the app from its configuration: the
// factories' environment, the built-in tools and the tool sources. It is
// the one place where the CLI connects Antler's packages.
func (a *app) wire(ctx context.Context) error {
	a.env = &toolset.Env{Config: a.cfg, Home: a.homeDir(), Logger: a.logger}
	builtins := map[string]*tool.Tool{
		toolset.AskClarification: builtin.AskClarification(),
	}
	a.assembler = &toolset.Assembler{
		Registry: a.g.opts.Registry,
		Env:      a.env,
		Builtins: builtins,
		Logger:   a.logger,
	}
	return nil
}
