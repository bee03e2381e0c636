package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/antlerhq/antler/mcptools"
)

// chatPromptTimeout bounds listing and expanding an MCP prompt.
const chatPromptTimeout = 30 * time.Second

// promptsCommand is /prompts: the MCP servers' prompts, as the commands
// that run them.
func (c *chatLoop) promptsCommand(ctx context.Context) {
	out := c.s.app.stderr
	ctx, cancel := context.WithTimeout(ctx, chatPromptTimeout)
	defer cancel()
	ps, err := c.s.app.mcp.Prompts(ctx)
	if err != nil {
		fmt.Fprintf(out, "%s %s\n", c.s.paint.red("error:"), oneLine(err))
		return
	}
	if len(ps) == 0 {
		fmt.Fprintln(out, "no MCP server offers prompts")
		return
	}
	for _, p := range ps {
		usage := "/" + p.Server + ":" + p.Name
		for _, a := range p.Arguments {
			if a.Required {
				usage += " " + a.Name + "=…"
			} else {
				usage += " [" + a.Name + "=…]"
			}
		}
		fmt.Fprintf(out, "%-40s %s\n", termText(usage), termText(firstLine(cmpOr(p.Title, p.Description))))
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// promptCommand runs "/server:prompt args": the prompt's expansion is
// sent as the user's message. Server and prompt are matched without
// regard to case (chat commands are read in lower case).
func (c *chatLoop) promptCommand(ctx context.Context, name, arg string) {
	out := c.s.app.stderr
	fail := func(format string, args ...any) {
		fmt.Fprintf(out, "%s %s\n", c.s.paint.red("error:"), fmt.Sprintf(format, args...))
	}
	server, pname, _ := strings.Cut(name, ":")
	pctx, cancel := context.WithTimeout(ctx, chatPromptTimeout)
	defer cancel()
	ps, err := c.s.app.mcp.Prompts(pctx)
	if err != nil {
		fail("%s", oneLine(err))
		return
	}
	var p *mcptools.Prompt
	for i := range ps {
		if strings.EqualFold(ps[i].Server, server) && strings.EqualFold(ps[i].Name, pname) {
			p = &ps[i]
		}
	}
	if p == nil {
		fail("no MCP prompt %s:%s: /prompts lists them", server, pname)
		return
	}
	args, err := promptArgs(*p, arg)
	if err != nil {
		fail("/%s:%s: %v", p.Server, p.Name, err)
		return
	}
	text, err := c.s.app.mcp.GetPrompt(pctx, p.Server, p.Name, args)
	if err != nil {
		fail("/%s:%s: %s", p.Server, p.Name, oneLine(err))
		return
	}
	if strings.TrimSpace(text) == "" {
		fail("/%s:%s: the prompt is empty", p.Server, p.Name)
		return
	}
	fmt.Fprintln(out, c.s.paint.dim(fmt.Sprintf("(prompt %s:%s, %d characters)", p.Server, p.Name, len([]rune(text)))))
	cancel()
	c.send(ctx, text)
}

// promptArgs reads a prompt command's arguments: name=value words; for
// a prompt of one argument, text without "=" is that argument's value.
// An unknown name or a missing required argument is an error listing
// the arguments.
func promptArgs(p mcptools.Prompt, arg string) (map[string]string, error) {
	out := map[string]string{}
	arg = strings.TrimSpace(arg)
	known := func(n string) (string, bool) {
		for _, a := range p.Arguments {
			if strings.EqualFold(a.Name, n) {
				return a.Name, true
			}
		}
		return "", false
	}
	if len(p.Arguments) == 1 && arg != "" && !strings.Contains(strings.Fields(arg)[0], "=") {
		out[p.Arguments[0].Name] = arg
	} else {
		for _, w := range strings.Fields(arg) {
			k, v, ok := strings.Cut(w, "=")
			name, isArg := known(k)
			if !ok || !isArg {
				return nil, fmt.Errorf("%q is no argument of the prompt (%s)", w, argNames(p))
			}
			out[name] = v
		}
	}
	for _, a := range p.Arguments {
		if _, ok := out[a.Name]; a.Required && !ok {
			return nil, fmt.Errorf("argument %s is required (%s)", a.Name, argNames(p))
		}
	}
	return out, nil
}

func argNames(p mcptools.Prompt) string {
	if len(p.Arguments) == 0 {
		return "it takes none"
	}
	names := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		names[i] = a.Name
		if a.Required {
			names[i] += " required"
		}
	}
	return "arguments: " + strings.Join(names, ", ")
}
