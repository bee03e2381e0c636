package toolset

import (
	"context"
	"fmt"
	"sync"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/sandbox"
	"github.com/antlerhq/antler/tool"
)

// registerSandbox wires the sandbox tools under DeerFlow's use strings
// and Antler's short names.
func registerSandbox(r *Registry) {
	sp := &sandboxProviders{byEnv: map[*Env]sandbox.Provider{}}
	reg := func(build func(*sandbox.Tools, int) *tool.Tool, deerflow, short string) {
		r.RegisterTool(func(_ context.Context, env *Env, entry config.ToolEntry) (*tool.Tool, error) {
			if err := checkOptionKeys(entry.Options, "max_results"); err != nil {
				return nil, err
			}
			p, err := sp.get(env)
			if err != nil {
				return nil, err
			}
			maxResults, err := intOption(entry.Options, "max_results")
			if err != nil {
				return nil, err
			}
			return build(sandbox.NewTools(p, sandbox.ToolsOptions{Config: env.Config, Logger: env.Logger}), maxResults), nil
		}, deerflow, short)
	}
	reg(func(t *sandbox.Tools, _ int) *tool.Tool { return t.Ls() }, "deerflow.sandbox.tools:ls_tool", "antler:ls")
	reg(func(t *sandbox.Tools, _ int) *tool.Tool { return t.ReadFile() }, "deerflow.sandbox.tools:read_file_tool", "antler:read_file")
	reg(func(t *sandbox.Tools, _ int) *tool.Tool { return t.WriteFile() }, "deerflow.sandbox.tools:write_file_tool", "antler:write_file")
	reg(func(t *sandbox.Tools, _ int) *tool.Tool { return t.StrReplace() }, "deerflow.sandbox.tools:str_replace_tool", "antler:str_replace")
	reg(func(t *sandbox.Tools, n int) *tool.Tool { return t.Glob(n) }, "deerflow.sandbox.tools:glob_tool", "antler:glob")
	reg(func(t *sandbox.Tools, n int) *tool.Tool { return t.Grep(n) }, "deerflow.sandbox.tools:grep_tool", "antler:grep")
	reg(func(t *sandbox.Tools, _ int) *tool.Tool { return t.Bash() }, bashUse, shortBashUse)
}

// sandboxProviders makes the fallback local provider of an Env without a
// Sandbox, once per Env, so that all tools of one Env share read marks
// and locks. It belongs to the registry value that registered it.
type sandboxProviders struct {
	mu    sync.Mutex
	byEnv map[*Env]sandbox.Provider // guarded by mu
}

func (s *sandboxProviders) get(env *Env) (sandbox.Provider, error) {
	if env == nil {
		return nil, fmt.Errorf("sandbox tools need a toolset.Env")
	}
	if env.Sandbox != nil {
		return env.Sandbox, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.byEnv[env]; ok {
		return p, nil
	}
	if env.Home == "" {
		return nil, fmt.Errorf("sandbox tools need the Antler home directory (toolset.Env.Home)")
	}
	p, err := sandbox.FromConfig(env.Home, env.Config, env.Logger)
	if err != nil {
		return nil, err
	}
	s.byEnv[env] = p
	return p, nil
}

// intOption reads an optional integer option of a tools[] entry (YAML
// gives int; JSON-shaped sources give float64).
func intOption(opts map[string]any, key string) (int, error) {
	v, ok := opts[key]
	if !ok || v == nil {
		return 0, nil
	}
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n != float64(int(n)) {
			return 0, fmt.Errorf("%s: must be an integer, got %v", key, n)
		}
		return int(n), nil
	}
	return 0, fmt.Errorf("%s: must be an integer, got %v", key, v)
}
