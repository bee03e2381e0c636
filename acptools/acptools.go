package acptools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/internal/tmpl"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// toolName is the name of the tool.
const toolName = "invoke_acp_agent"

// Defaults of Options' zero values.
const (
	defaultShutdownGrace = 2 * time.Second
	defaultCancelGrace   = 2 * time.Second
)

// defaultTimeout bounds one invocation when the agent's timeout_seconds is
// unset.
const defaultTimeout = 1800 * time.Second

//go:embed invoke_acp_agent.md
var descriptionTemplate string

var descriptionTmpl = tmpl.MustParse("invoke_acp_agent", descriptionTemplate)

const inputSchema = `{
  "type": "object",
  "properties": {
    "agent": {"type": "string", "description": "Name of the ACP agent to invoke"},
    "prompt": {"type": "string", "description": "The concise task prompt to send to the agent"}
  },
  "required": ["agent", "prompt"]
}`

type input struct {
	Agent  string `json:"agent"`
	Prompt string `json:"prompt"`
}

// Options configure [New]. Layout (or Home) is required; every other
// zero value has the documented default.
type Options struct {
	// Layout maps users and threads to host folders; the per-thread
	// workspace is its ThreadPaths(...).ACPWorkspace. When nil, a layout
	// is made from Home.
	Layout *vpath.Layout
	// Home is Antler's data directory, used only when Layout is nil.
	Home string
	// Extensions returns the current extensions_config.json; it is called
	// at every invocation, so a changed file takes effect on the next
	// call. Nil, a nil result or an error means no MCP servers (an error
	// is logged as a warning).
	Extensions func() (*config.Extensions, error)
	// Environ is the host environment the agent's inherited variables
	// (HOME, LOGNAME, PATH, SHELL, TERM, USER) are taken from; nil means
	// os.Environ.
	Environ func() []string
	// ShutdownGrace is how long a finished agent may take to exit after
	// its stdin is closed before its process group is killed; 0 means
	// 2s.
	ShutdownGrace time.Duration
	// CancelGrace is how long a cancelled call waits for the agent to
	// acknowledge session/cancel before its process group is killed; 0
	// means 2s.
	CancelGrace time.Duration
	// Logger receives progress and warnings; nil discards them.
	Logger *slog.Logger
}

// Invoker runs ACP agents on behalf of invoke_acp_agent. It is immutable
// after [New] and safe for concurrent use; every call spawns its own
// agent process.
type Invoker struct {
	layout        *vpath.Layout
	extensions    func() (*config.Extensions, error)
	environ       func() []string
	shutdownGrace time.Duration
	cancelGrace   time.Duration
	logger        *slog.Logger
	version       string

	// onStart, when set (by tests), is called with the agent's pid right
	// after it starts.
	onStart func(pid int)
}

// New returns an Invoker.
func New(o Options) (*Invoker, error) {
	layout := o.Layout
	if layout == nil {
		var err error
		if layout, err = vpath.New(vpath.Options{Home: o.Home}); err != nil {
			return nil, fmt.Errorf("acptools: %w", err)
		}
	}
	inv := &Invoker{
		layout:        layout,
		extensions:    o.Extensions,
		environ:       o.Environ,
		shutdownGrace: o.ShutdownGrace,
		cancelGrace:   o.CancelGrace,
		logger:        o.Logger,
		version:       moduleVersion(),
	}
	if inv.environ == nil {
		inv.environ = os.Environ
	}
	if inv.shutdownGrace <= 0 {
		inv.shutdownGrace = defaultShutdownGrace
	}
	if inv.cancelGrace <= 0 {
		inv.cancelGrace = defaultCancelGrace
	}
	if inv.logger == nil {
		inv.logger = slog.New(slog.DiscardHandler)
	}
	return inv, nil
}

// Tool returns the invoke_acp_agent tool for cfg's acp_agents. Its
// signature matches toolset.ACPToolFactory. It fails when cfg has no ACP
// agents.
func (inv *Invoker) Tool(_ context.Context, cfg *config.Config) (*tool.Tool, error) {
	if cfg == nil || len(cfg.ACPAgents) == 0 {
		return nil, fmt.Errorf("acptools: no acp_agents configured")
	}
	names := cfg.ACPAgentNames()
	agents := make(map[string]config.ACPAgent, len(names))
	for _, n := range names {
		agents[n] = cfg.ACPAgents[n]
	}
	desc, err := description(cfg)
	if err != nil {
		return nil, err
	}
	return tool.NewWithSchema(toolName, desc, json.RawMessage(inputSchema),
		func(ctx context.Context, call *tool.Call, in input) (*tool.Result, error) {
			a, ok := agents[in.Agent]
			if !ok {
				return tool.Errorf("Error: Unknown agent '%s'. Available: %s", in.Agent, strings.Join(names, ", ")), nil
			}
			return inv.Invoke(ctx, call, in.Agent, a, in.Prompt)
		})
}

// description returns the tool description for cfg's acp_agents: a fixed
// introduction, one "- name: description" line per agent (sorted by
// name) and the warning about workspaces.
func description(cfg *config.Config) (string, error) {
	type line struct{ Name, Description string }
	var lines []line
	for _, n := range cfg.ACPAgentNames() {
		lines = append(lines, line{n, cfg.ACPAgents[n].Description})
	}
	var b bytes.Buffer
	if err := descriptionTmpl.Execute(&b, lines); err != nil {
		return "", fmt.Errorf("acptools: description: %w", err)
	}
	return strings.TrimSpace(b.String()), nil
}

// moduleVersion is Antler's version for the ACP clientInfo.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path == "github.com/antlerhq/antler" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "dev"
}
