package toolset

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// Source says where an assembled tool came from.
type Source string

// The tool sources, in assembly (and de-duplication priority) order.
const (
	SourceConfig  Source = "config"
	SourceBuiltin Source = "builtin"
	SourceMCP     Source = "mcp"
	SourceACP     Source = "acp"
)

// Builtins are the built-in tools Assemble adds by rule, in this order
// (package builtin builds them and declares their names). A nil field is
// never added.
type Builtins struct {
	// PresentFiles and AskClarification are always added.
	PresentFiles, AskClarification *tool.Tool
	// ReviewSkillPackage is always added, for the lead agent and
	// subagents alike (it is in DeerFlow's BUILTIN_TOOLS).
	ReviewSkillPackage *tool.Tool
	// ListBackgroundTasks and CancelBackgroundTask are added, before
	// list_uploaded_files, when the MCP task runtime runs (mcp_tasks
	// enabled), for the lead agent and subagents, as DeerFlow adds them.
	ListBackgroundTasks, CancelBackgroundTask *tool.Tool
	// ListUploadedFiles is always added. As in DeerFlow, the assembler
	// that subagents use has none: their state does not know which
	// files the current run uploaded.
	ListUploadedFiles *tool.Tool
	// SkillManage is added when skill_evolution is enabled.
	SkillManage *tool.Tool
	// DescribeSkill is added when skills.deferred_discovery is on: the
	// prompt then names the skills only and the model fetches their
	// metadata with it.
	DescribeSkill *tool.Tool
	// Task is added when Options.SubagentEnabled is set. The assembler
	// that subagents use has none, so that they never delegate further.
	Task *tool.Tool
	// ViewImage is added when the run's model supports vision.
	ViewImage *tool.Tool
}

// bashUse and shortBashUse are the use strings of the host bash tool
// (DeerFlow's and Antler's), which the host-bash gate drops even when the
// entry is renamed or put in another group.
const (
	bashUse      = "deerflow.sandbox.tools:bash_tool"
	shortBashUse = "antler:bash"
)

// Entry is one assembled tool.
type Entry struct {
	// Tool carries its source in Meta[tool.MetaSource] (a labelled copy of
	// the tool its source made).
	Tool   *tool.Tool
	Source Source
	// Group is the config group for config tools, the server name for MCP
	// tools, and "builtin" or "acp" otherwise.
	Group string
	// Deferred marks an MCP tool whose schema is hidden until tool_search
	// promotes it (set by the deferred-tool setup, not by Assemble).
	Deferred bool
}

// Toolset is the result of one assembly, in bound order.
type Toolset struct {
	Entries []Entry
}

// Tools returns the tools in bound order.
func (s *Toolset) Tools() []*tool.Tool {
	out := make([]*tool.Tool, len(s.Entries))
	for i, e := range s.Entries {
		out[i] = e.Tool
	}
	return out
}

// Names returns the tool names in bound order.
func (s *Toolset) Names() []string {
	out := make([]string, len(s.Entries))
	for i, e := range s.Entries {
		out[i] = e.Tool.Name
	}
	return out
}

// Lookup returns the entry named name.
func (s *Toolset) Lookup(name string) (Entry, bool) {
	for _, e := range s.Entries {
		if e.Tool.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Add appends tools from source unless their name is taken; it returns
// the names it skipped. The lead-agent factory uses it for setup_agent,
// update_agent and tool_search.
func (s *Toolset) Add(source Source, group string, tools ...*tool.Tool) (skipped []string) {
	for _, t := range tools {
		if _, ok := s.Lookup(t.Name); ok {
			skipped = append(skipped, t.Name)
			continue
		}
		s.Entries = append(s.Entries, Entry{Tool: labeled(t, source), Source: source, Group: group})
	}
	return skipped
}

// Remove drops the tool named name, if present.
func (s *Toolset) Remove(name string) {
	s.Entries = slices.DeleteFunc(s.Entries, func(e Entry) bool { return e.Tool.Name == name })
}

// MCPSource supplies the MCP tools of the enabled servers. Implementations
// re-read the extensions file cheaply at every call (another process may
// have changed it), serve cached tools, and skip broken servers with a
// warning. An error means no MCP tools at all; Assemble logs it and goes
// on without them. Tools should carry Meta["mcp_server"].
//
// When the tool list has not changed, an implementation should return the
// same slice (same backing array) so that Assemble can reuse its previous
// result.
type MCPSource interface {
	Tools(ctx context.Context) ([]*tool.Tool, error)
}

// UserMCPSource is an MCPSource with per-user servers (*mcptools.Manager
// implements it): ToolsFor returns the tools a run of user may bind (the
// shared servers, the user's own, and shared servers served with the
// user's credentials). Assemble uses it when Options.User is set.
type UserMCPSource interface {
	MCPSource
	ToolsFor(ctx context.Context, user string) ([]*tool.Tool, error)
}

// ACPToolFactory builds the single invoke_acp_agent tool for the
// configured acp_agents.
type ACPToolFactory func(ctx context.Context, cfg *config.Config) (*tool.Tool, error)

// Assembler assembles tool lists. Its exported fields are set before first
// use and never changed afterwards; Assemble is safe for concurrent use.
type Assembler struct {
	// Registry resolves config tools' use strings. Required.
	Registry *Registry
	// Env is passed to factories. Required.
	Env *Env
	// Builtins are the built-in tools; Assemble adds those its rules call
	// for, skipping any that are nil.
	Builtins Builtins
	// MCP supplies MCP tools; nil means none.
	MCP MCPSource
	// ACP builds invoke_acp_agent; nil means none.
	ACP ACPToolFactory
	// Logger receives warnings (duplicates, name mismatches, broken MCP);
	// nil discards.
	Logger *slog.Logger
	// SkipBrokenTools leaves out a config tool whose factory fails (a
	// misspelt option, say) instead of failing the assembly, for commands
	// that need only some tools (tools list, tools call); BrokenTools
	// returns what was left out. False (a run) fails the assembly.
	SkipBrokenTools bool

	mu sync.Mutex // guards the caches below
	// configTools caches the resolved config tools of the last config,
	// configBroken the entries left out by SkipBrokenTools.
	configCfg    *config.Config
	configTools  []resolvedTool
	configBroken []BrokenTool
	// last caches the previous assembly, reused when nothing changed.
	last *memo
}

// BrokenTool is a config tool that SkipBrokenTools left out.
type BrokenTool struct {
	Name string // the entry's name
	Err  error  // the factory's error, a *config.Error with file and line
}

// BrokenTools returns the config tools left out of the last assembly
// because their factory failed (only with SkipBrokenTools).
func (a *Assembler) BrokenTools() []BrokenTool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.configBroken)
}

type resolvedTool struct {
	tool  *tool.Tool
	group string
	use   string
}

type memo struct {
	cfg      *config.Config
	opts     Options
	mcp      []*tool.Tool
	acp      *tool.Tool
	entries  []Entry
	warnings []string
}

// Options select what Assemble includes.
type Options struct {
	// Config overrides Env.Config for this assembly.
	Config *config.Config
	// Groups filters config tools by group: nil keeps all, an empty
	// non-nil slice keeps none.
	Groups []string
	// IncludeMCP adds the MCP source's tools.
	IncludeMCP bool
	// User is the run's user: with an MCP source that implements
	// UserMCPSource, the MCP tools are that user's (their own servers and
	// credentials included); "" means the shared servers only.
	User string
	// ModelName picks the model whose supports_vision decides view_image;
	// "" means the first configured model.
	ModelName string
	// SubagentEnabled adds the task tool.
	SubagentEnabled bool
}

func (o Options) equal(p Options) bool {
	return o.Config == p.Config && o.IncludeMCP == p.IncludeMCP && o.User == p.User && o.ModelName == p.ModelName &&
		o.SubagentEnabled == p.SubagentEnabled && (o.Groups == nil) == (p.Groups == nil) &&
		slices.Equal(o.Groups, p.Groups)
}

func (a *Assembler) log() *slog.Logger {
	if a.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Logger
}

// Assemble returns the tools a run may bind, in DeerFlow's order: config
// tools (group filter, host-bash gate, resolved through the registry),
// built-ins, MCP tools, the ACP tool; then de-duplication by name, first
// one wins, with a warning naming the kept and the dropped source.
//
// A bad use string fails the assembly with a *config.Error; a failing MCP
// source only costs its own tools.
func (a *Assembler) Assemble(ctx context.Context, opts Options) (*Toolset, error) {
	cfg := opts.Config
	if cfg == nil && a.Env != nil {
		cfg = a.Env.Config
	}
	if cfg == nil {
		return nil, fmt.Errorf("toolset: no configuration")
	}
	configTools, err := a.resolveConfigTools(ctx, cfg)
	if err != nil {
		return nil, err
	}

	var mcpTools []*tool.Tool
	if opts.IncludeMCP && a.MCP != nil {
		if us, ok := a.MCP.(UserMCPSource); ok && opts.User != "" {
			mcpTools, err = us.ToolsFor(ctx, opts.User)
		} else {
			mcpTools, err = a.MCP.Tools(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			a.log().Warn("MCP tools unavailable; continuing without them", "err", err)
			mcpTools = nil
		}
	}
	var acpTool *tool.Tool
	if a.ACP != nil && len(cfg.ACPAgents) > 0 {
		acpTool, err = a.ACP(ctx, cfg)
		if err != nil {
			a.log().Warn("invoke_acp_agent unavailable", "err", err)
			acpTool = nil
		}
	}

	a.mu.Lock()
	if m := a.last; m != nil && m.cfg == cfg && m.opts.equal(opts) && sameSlice(m.mcp, mcpTools) && m.acp == acpTool {
		entries := slices.Clone(m.entries)
		a.mu.Unlock()
		return &Toolset{Entries: entries}, nil
	}
	a.mu.Unlock()

	entries, warnings := a.combine(cfg, opts, configTools, mcpTools, acpTool)
	for _, w := range warnings {
		a.log().Warn(w)
	}
	a.mu.Lock()
	a.last = &memo{cfg: cfg, opts: cloneOptions(opts), mcp: mcpTools, acp: acpTool, entries: entries, warnings: warnings}
	a.mu.Unlock()
	return &Toolset{Entries: slices.Clone(entries)}, nil
}

func cloneOptions(o Options) Options {
	if o.Groups != nil {
		o.Groups = slices.Clone(o.Groups)
	}
	return o
}

func sameSlice(a, b []*tool.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// resolveConfigTools builds every config tool once per loaded config.
// Factories run at most once per *config.Config; the gate and group
// filter are applied per assembly.
func (a *Assembler) resolveConfigTools(ctx context.Context, cfg *config.Config) ([]resolvedTool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.configCfg == cfg && a.configTools != nil {
		return a.configTools, nil
	}
	env := a.Env
	if env == nil || env.Config != cfg {
		e := Env{Config: cfg, Logger: a.log()}
		if a.Env != nil {
			e = *a.Env
			e.Config = cfg
		}
		env = &e
	}
	hostBash := cfg.IsHostBashAllowed()
	out := make([]resolvedTool, 0, len(cfg.Tools))
	var broken []BrokenTool
	for _, entry := range cfg.Tools {
		if !hostBash && (entry.Group == "bash" || entry.Use == bashUse || entry.Use == shortBashUse) {
			// Gated tools are never built: a disabled bash must not fail
			// the assembly because of its own options.
			continue
		}
		t, err := a.Registry.BuildTool(ctx, env, entry)
		if err != nil && a.SkipBrokenTools && ctx.Err() == nil {
			broken = append(broken, BrokenTool{Name: entry.Name, Err: err})
			continue
		}
		if err != nil {
			return nil, err
		}
		if entry.Name != "" && entry.Name != t.Name {
			a.log().Warn("config tool name differs from the tool's own name; binding the tool's own name",
				"config_name", entry.Name, "tool_name", t.Name, "use", entry.Use, "line", entry.Line)
		}
		out = append(out, resolvedTool{tool: t, group: entry.Group, use: entry.Use})
	}
	a.configCfg, a.configTools, a.configBroken = cfg, out, broken
	return out, nil
}

func (a *Assembler) combine(cfg *config.Config, opts Options, configTools []resolvedTool, mcpTools []*tool.Tool, acpTool *tool.Tool) ([]Entry, []string) {
	entries := make([]Entry, 0, len(configTools)+8+len(mcpTools)+1)
	seen := make(map[string]Source, cap(entries))
	var warnings []string
	add := func(e Entry) {
		if prev, dup := seen[e.Tool.Name]; dup {
			warnings = append(warnings, fmt.Sprintf(
				"duplicate tool name %q: keeping the %s tool, dropping the %s tool (group %s)",
				e.Tool.Name, prev, e.Source, e.Group))
			return
		}
		seen[e.Tool.Name] = e.Source
		e.Tool = labeled(e.Tool, e.Source)
		entries = append(entries, e)
	}
	for _, rt := range configTools {
		if opts.Groups != nil && !slices.Contains(opts.Groups, rt.group) {
			continue
		}
		add(Entry{Tool: rt.tool, Source: SourceConfig, Group: rt.group})
	}
	for _, t := range a.builtinTools(cfg, opts) {
		if t != nil {
			add(Entry{Tool: t, Source: SourceBuiltin, Group: "builtin"})
		}
	}
	for _, t := range mcpTools {
		add(Entry{Tool: t, Source: SourceMCP, Group: t.Meta["mcp_server"]})
	}
	if acpTool != nil {
		add(Entry{Tool: acpTool, Source: SourceACP, Group: "acp"})
	}
	return entries, warnings
}

// builtinTools are the built-ins the rules call for, in bound order (nil
// for one the assembler lacks).
func (a *Assembler) builtinTools(cfg *config.Config, opts Options) []*tool.Tool {
	b := a.Builtins
	tools := []*tool.Tool{b.PresentFiles, b.AskClarification, b.ReviewSkillPackage, b.ListUploadedFiles}
	// The background-task tools go before list_uploaded_files, the last.
	tools = slices.Insert(tools, len(tools)-1, b.ListBackgroundTasks, b.CancelBackgroundTask)
	if cfg.SkillEvolution.Enabled {
		tools = append(tools, b.SkillManage)
	}
	if cfg.Skills.DeferredDiscovery {
		tools = append(tools, b.DescribeSkill)
	}
	if opts.SubagentEnabled {
		tools = append(tools, b.Task)
	}
	m, ok := cfg.Model(opts.ModelName)
	if !ok {
		m, ok = cfg.DefaultModel()
	}
	if ok && m.SupportsVision {
		tools = append(tools, b.ViewImage)
	}
	return tools
}
