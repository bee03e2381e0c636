package mcptasks

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// MetaToolset is set on a submit tool's Meta to its toolset's name.
const MetaToolset = "mcp_task_toolset"

// Lister lists MCP tools: toolset.MCPSource, mcptools.Manager.
type Lister interface {
	Tools(ctx context.Context) ([]*tool.Tool, error)
}

// Source is the MCP tool source agents bind: the inner source's tools,
// with every task toolset's status and cancel tools left out (only the
// runtime calls them) and its submit tool replaced by one that submits
// the work as a durable background task (DeerFlow's
// _configure_task_tools_for_server). A toolset is never offered as plain
// synchronous tools: without a runtime (mcp_tasks.enabled false), or
// when the server lacks one of its three tools, all three are left out
// and an error is logged.
type Source struct {
	// immutable after NewSource
	inner  Lister
	ext    mcptools.ExtensionsSource
	rt     *Runtime
	logger *slog.Logger

	mu sync.Mutex
	// the last list made, reused while the inner list and the extensions
	// are the same (toolset.Assembler caches by slice identity)
	lastIn  []*tool.Tool
	lastExt *config.Extensions
	lastOut []*tool.Tool
}

// NewSource wraps inner. rt nil refuses every task toolset; logger nil
// discards.
func NewSource(inner Lister, ext mcptools.ExtensionsSource, rt *Runtime, logger *slog.Logger) *Source {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Source{inner: inner, ext: ext, rt: rt, logger: logger}
}

// Tools implements toolset.MCPSource.
func (s *Source) Tools(ctx context.Context) ([]*tool.Tool, error) {
	in, err := s.inner.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return s.wrap(in)
}

// ToolsFor implements toolset.UserMCPSource: the user's tools of an
// inner source that has per-user servers (mcptools.Manager.ToolsFor),
// configured as Tools configures the shared ones; Tools otherwise.
func (s *Source) ToolsFor(ctx context.Context, user string) ([]*tool.Tool, error) {
	users, ok := s.inner.(interface {
		ToolsFor(ctx context.Context, user string) ([]*tool.Tool, error)
	})
	if !ok {
		return s.Tools(ctx)
	}
	in, err := users.ToolsFor(ctx, user)
	if err != nil {
		return nil, err
	}
	return s.wrap(in)
}

// wrap configures the task toolsets among in (the same slice while
// nothing changed).
func (s *Source) wrap(in []*tool.Tool) ([]*tool.Tool, error) {
	ext, _, err := s.ext.Get()
	if err != nil || ext == nil || ext.TaskToolsetCount() == 0 {
		return in, nil // a broken file is the inner source's to report
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sameSlice(in, s.lastIn) && ext == s.lastExt {
		return s.lastOut, nil
	}
	out := s.configure(in, ext)
	s.lastIn, s.lastExt, s.lastOut = in, ext, out
	return out, nil
}

func sameSlice(a, b []*tool.Tool) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// role is what a raw tool of a server is to a toolset.
type role struct {
	ts     config.TaskToolset
	submit bool
}

// configure hides status and cancel tools and wraps submit tools.
func (s *Source) configure(in []*tool.Tool, ext *config.Extensions) []*tool.Tool {
	roles := map[[2]string]role{}   // server, raw tool
	present := map[[2]string]bool{} // server, raw tool
	for _, t := range in {
		present[[2]string{t.Meta[mcptools.MetaServer], t.Meta[mcptools.MetaTool]}] = true
	}
	listed := map[string]bool{}
	for k := range present {
		listed[k[0]] = true
	}
	for name, srv := range ext.MCPServers {
		if !srv.Enabled || srv.Err != nil || !listed[name] {
			continue
		}
		for _, ts := range srv.TaskToolsets {
			for _, raw := range []string{ts.SubmitTool, ts.StatusTool, ts.CancelTool} {
				roles[[2]string{name, raw}] = role{ts: ts, submit: raw == ts.SubmitTool}
			}
			switch {
			case s.rt == nil:
				s.logger.Error(fmt.Sprintf("MCP server '%s' task toolset %q is left out: task_toolsets need mcp_tasks.enabled: true in config.yaml", name, ts.Name))
			case !present[[2]string{name, ts.SubmitTool}] || !present[[2]string{name, ts.StatusTool}] || !present[[2]string{name, ts.CancelTool}]:
				s.logger.Error(fmt.Sprintf("MCP server '%s' task toolset %q is left out: the server does not offer all of %q, %q and %q",
					name, ts.Name, ts.SubmitTool, ts.StatusTool, ts.CancelTool))
				for _, raw := range []string{ts.SubmitTool, ts.StatusTool, ts.CancelTool} {
					roles[[2]string{name, raw}] = role{ts: ts} // hidden, submit included
				}
			}
		}
	}
	out := make([]*tool.Tool, 0, len(in))
	for _, t := range in {
		server := t.Meta[mcptools.MetaServer]
		r, ok := roles[[2]string{server, t.Meta[mcptools.MetaTool]}]
		switch {
		case !ok:
			out = append(out, t)
		case r.submit && s.rt != nil:
			out = append(out, s.submitTool(t, Toolset{Server: server, TaskToolset: r.ts}))
		}
	}
	return out
}

// submitTool is the submit tool t of toolset ts, submitting in the
// background: same name and arguments, the contract added to its
// description.
func (s *Source) submitTool(t *tool.Tool, ts Toolset) *tool.Tool {
	contract := fmt.Sprintf("Submitted as durable background task %q; returns a task ID at once and its status is polled automatically (see list_background_tasks).", ts.Name)
	desc := contract
	if t.Description != "" {
		desc = t.Description + "\n\n" + contract
	}
	meta := maps.Clone(t.Meta)
	meta[MetaToolset] = ts.Name
	rt := s.rt
	return &tool.Tool{Name: t.Name, Description: desc, InputSchema: t.InputSchema, Meta: meta,
		Handler: func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if call == nil {
				call = &tool.Call{Name: t.Name}
			}
			return rt.Submit(ctx, call, ts, args)
		}}
}
