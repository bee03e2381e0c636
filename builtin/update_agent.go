package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// UpdateAgentName is the name of the update_agent tool.
const UpdateAgentName = "update_agent"

//go:embed update_agent.md
var updateAgentDescription string

const updateAgentSchema = `{
  "type": "object",
  "properties": {
    "soul": {"type": ["string", "null"], "description": "Optional full replacement SOUL.md content."},
    "description": {"type": ["string", "null"], "description": "Optional new one-line description."},
    "skills": {"type": ["array", "null"], "items": {"type": "string"}, "description": "Optional skill whitelist. [] = no skills, omit = unchanged."},
    "tool_groups": {"type": ["array", "null"], "items": {"type": "string"}, "description": "Optional tool-group whitelist. [] = empty, omit = unchanged."},
    "model": {"type": ["string", "null"], "description": "Optional model override (must match a configured model name)."},
    "mcp_plugins": {"type": ["array", "null"], "items": {"type": "string"}, "description": "Optional MCP server whitelist. [] = no MCP servers, omit = unchanged."},
    "mcp_tools": {"type": ["object", "null"], "additionalProperties": {"type": "array", "items": {"type": "string"}}, "description": "Optional: per MCP server in mcp_plugins, the only tools of it to bind. {} = no narrowing, omit = unchanged."}
  }
}`

// untrustedChannels are the channels whose messages come from anyone (a
// GitHub webhook): self-modification is refused there.
var untrustedChannels = []string{"github"}

// UpdateAgentOptions configure NewUpdateAgent.
type UpdateAgentOptions struct {
	// Store holds the custom agents; required.
	Store *customagent.Store
	// Config is the run's configuration; a model argument must name one
	// of its models. nil means no model is known.
	Config *config.Config
	// Logger receives write failures; nil discards.
	Logger *slog.Logger
	// MCPServerNames returns the MCP servers a user's runs see; every
	// name of an mcp_plugins argument must be one of them (or DeerFlow's
	// installation id of one). nil refuses mcp_plugins.
	MCPServerNames func(user string) []string
}

// NewUpdateAgent returns the update_agent tool, which the lead-agent
// factory binds in a custom agent's chats (DeerFlow's setup_agent_tool.py). The agent is
// the run's (tool.Call.AgentName, or the runtime context's "agent_name")
// and the user the call's: no other user's folder is ever read or
// written.
//
// Checks come in DeerFlow's order, each an "Error: ..." result with
// DeerFlow's text and nothing written: the github channel (runtime
// context "channel_name") is refused; the strings "null", "none" and
// "undefined" (any case, trimmed) count as omitted for every field, and a
// call with no field is refused; a blank soul is refused; the agent name
// must be valid and present; a model must exist in Config (checked before
// any write); an agent only in DeerFlow's legacy shared layout, a missing
// agent and an unreadable config.yaml are refused. Then omitted fields
// keep their values, skills=[] means no skills, the name is forced to the
// agent's, and every other key of config.yaml (model_settings,
// thinking_enabled, reasoning_effort, github, unknown keys) is carried
// over. config.yaml is rewritten only when description, model,
// tool_groups or skills changed; SOUL.md whenever soul is given; both in
// one atomic update, merged under the agent's lock (customagent.Store.Modify).
//
// NewUpdateAgent panics if opts.Store is nil (a wiring mistake).
func NewUpdateAgent(opts UpdateAgentOptions) *tool.Tool {
	if opts.Store == nil {
		panic("builtin.NewUpdateAgent: Store is nil")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	u := &agentUpdater{opts: opts}
	return &tool.Tool{
		Name:        UpdateAgentName,
		Description: strings.TrimSpace(updateAgentDescription),
		InputSchema: json.RawMessage(updateAgentSchema),
		Handler: func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return u.update(call, args), nil
		},
	}
}

// agentUpdater runs update_agent calls; it is immutable.
type agentUpdater struct{ opts UpdateAgentOptions }

// updateArgs are the arguments after nullish strings were dropped; nil
// means omitted.
type updateArgs struct {
	soul, description, model *string
	skills, toolGroups       []string // nil = omitted, non-nil empty = []
	mcpPlugins               []string // nil = omitted
	mcpTools                 map[string][]string
}

func (a *updateArgs) empty() bool {
	return a.soul == nil && a.description == nil && a.model == nil && a.skills == nil && a.toolGroups == nil &&
		a.mcpPlugins == nil && a.mcpTools == nil
}

// isNullish reports DeerFlow's placeholder strings for an omitted field.
func isNullish(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "null", "none", "undefined":
		return true
	}
	return false
}

// decodeUpdateArgs reads the arguments leniently where DeerFlow is
// lenient (null and the nullish strings mean omitted) and strictly
// elsewhere (a string for a list field is an error).
func decodeUpdateArgs(raw json.RawMessage) (*updateArgs, error) {
	var m map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, errors.New("arguments must be a JSON object")
		}
	}
	out := &updateArgs{}
	text := func(key string) (*string, error) {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			return nil, nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("%s: expected a string", key)
		}
		if isNullish(s) {
			return nil, nil
		}
		return &s, nil
	}
	list := func(key string) ([]string, error) {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			return nil, nil
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			if isNullish(s) {
				return nil, nil
			}
			return nil, fmt.Errorf("%s: expected a list of strings, got a string; pass [] for none, or omit the field to keep the current value", key)
		}
		l := []string{}
		if err := json.Unmarshal(v, &l); err != nil {
			return nil, fmt.Errorf("%s: expected a list of strings", key)
		}
		return l, nil
	}
	var err error
	if out.soul, err = text("soul"); err != nil {
		return nil, err
	}
	if out.description, err = text("description"); err != nil {
		return nil, err
	}
	if out.skills, err = list("skills"); err != nil {
		return nil, err
	}
	if out.toolGroups, err = list("tool_groups"); err != nil {
		return nil, err
	}
	if out.model, err = text("model"); err != nil {
		return nil, err
	}
	if out.mcpPlugins, err = list("mcp_plugins"); err != nil {
		return nil, err
	}
	if v, ok := m["mcp_tools"]; ok && string(v) != "null" {
		out.mcpTools = map[string][]string{}
		if err := json.Unmarshal(v, &out.mcpTools); err != nil {
			return nil, errors.New("mcp_tools: expected an object of server names to lists of tool names")
		}
	}
	for k := range m {
		switch k {
		case "soul", "description", "skills", "tool_groups", "model", "mcp_plugins", "mcp_tools":
		default:
			return nil, fmt.Errorf("unknown argument %q (allowed: soul, description, skills, tool_groups, model, mcp_plugins, mcp_tools)", k)
		}
	}
	return out, nil
}

func (u *agentUpdater) update(call *tool.Call, raw json.RawMessage) *tool.Result {
	if call == nil {
		call = &tool.Call{}
	}
	in, err := decodeUpdateArgs(raw)
	if err != nil {
		return tool.Errorf("invalid arguments for %s: %v", UpdateAgentName, err)
	}
	if ch := call.ContextString("channel_name"); slices.Contains(untrustedChannels, ch) {
		return tool.Errorf("update_agent is disabled on the '%s' channel. Self-mutation requests must come from an operator-trusted surface (chat UI or the HTTP API), not a webhook fan-out.", ch)
	}
	if in.empty() {
		return tool.Errorf(`No fields provided. Pass at least one of: soul, description, skills, tool_groups, model. Omit unchanged fields instead of passing null-like strings such as "null", "none", or "undefined".`)
	}
	if in.soul != nil && strings.TrimSpace(*in.soul) == "" {
		return tool.Errorf("soul content is empty; refusing to update agent with an empty SOUL.md. Omit the soul field if you do not want to change it.")
	}
	name := callAgentName(call)
	if name == "" {
		return tool.Errorf("update_agent is only available inside a custom agent's chat. There is no agent_name in the current runtime context, so there is nothing to update. If you are inside the bootstrap flow, use setup_agent instead.")
	}
	if err := customagent.ValidateName(name); err != nil {
		return tool.Errorf("%s", err.Error())
	}
	user := callUserID(call)
	if in.model != nil {
		if u.opts.Config == nil || !hasModel(u.opts.Config, *in.model) {
			return tool.Errorf("Unknown model '%s'. Pass a model name that exists in config.yaml's models section.", *in.model)
		}
	}
	if r := u.checkMCPServers(user, in.mcpPlugins); r != nil {
		return r
	}
	store := u.opts.Store
	if store.LegacyOnly(user, name) {
		return tool.Errorf("Agent '%s' only exists in the legacy shared layout and is not scoped to a user. Run scripts/migrate_user_isolation.py to move legacy agents into the per-user layout before updating.", name)
	}
	existing, err := store.Load(user, name)
	var ce *customagent.ConfigError
	switch {
	case errors.Is(err, customagent.ErrNotFound) || (err == nil && existing.Legacy):
		return tool.Errorf("Agent '%s' does not exist for the current user. Use setup_agent to create a new agent first.", name)
	case errors.As(err, &ce):
		return tool.Errorf("Agent '%s' has an unreadable config: %s", name, ce.Error())
	case err != nil:
		return tool.Errorf("Agent '%s' could not be loaded: %s", name, vpath.PathlessError(err))
	}

	changed, res := u.modify(user, name, in)
	if res != nil {
		return res
	}
	if len(changed) == 0 {
		return tool.Text(fmt.Sprintf("No changes applied to agent '%s'. The provided values matched the existing config.", name))
	}
	call.Log().Info("update_agent: updated agent", "agent", name, "user", user, "fields", changed)
	return tool.Text(fmt.Sprintf("Agent '%s' updated successfully. Changed: %s. The new configuration takes effect on the next user turn.", name, strings.Join(changed, ", ")))
}

// modify merges in into the stored agent and writes it, returning the
// fields changed, or the error result. The merge runs under the agent's
// lock on the config as stored now, so that parallel update_agent calls
// of one step do not undo each other's fields.
func (u *agentUpdater) modify(user, name string, in *updateArgs) ([]string, *tool.Result) {
	var changed []string
	err := u.opts.Store.Modify(user, name, func(cur *customagent.Agent) (customagent.Change, error) {
		if cur == nil {
			return customagent.Change{}, customagent.ErrNotFound
		}
		changed = changedFields(in, cur.Config)
		ch := customagent.Change{Soul: in.soul}
		if len(changed) > 0 {
			ch.Config = applyAgentUpdate(in, name, cur.Config)
			if err := ch.Config.CheckMCP(); err != nil {
				return customagent.Change{}, &mcpChoiceError{err}
			}
		}
		if in.soul != nil {
			changed = append(changed, "soul")
		}
		return ch, nil
	})
	var ce *customagent.ConfigError
	var mce *mcpChoiceError
	switch {
	case errors.Is(err, customagent.ErrNotFound):
		return nil, tool.Errorf("Agent '%s' does not exist for the current user. Use setup_agent to create a new agent first.", name)
	case errors.As(err, &ce):
		return nil, tool.Errorf("Agent '%s' has an unreadable config: %s", name, ce.Error())
	case errors.As(err, &mce):
		return nil, tool.Errorf("mcp_tools: %v", mce.err)
	case err != nil:
		u.opts.Logger.Error("update_agent: cannot update agent", "agent", name, "user", user, "err", err)
		return nil, tool.Errorf("Failed to update agent '%s': %s", name, vpath.PathlessError(err))
	}
	return changed, nil
}

// changedFields returns the config fields the update changes relative to
// old (description, model, tool_groups, skills, in that order).
func changedFields(in *updateArgs, old *customagent.Config) []string {
	var changed []string
	if in.description != nil && *in.description != old.Description {
		changed = append(changed, "description")
	}
	if in.model != nil && *in.model != old.Model {
		changed = append(changed, "model")
	}
	if in.toolGroups != nil && !sameList(in.toolGroups, old.ToolGroups) {
		changed = append(changed, "tool_groups")
	}
	if in.skills != nil && !sameList(in.skills, old.Skills) {
		changed = append(changed, "skills")
	}
	if in.mcpPlugins != nil && !sameList(in.mcpPlugins, old.MCPPlugins) {
		changed = append(changed, "mcp_plugins")
	}
	if in.mcpTools != nil && !sameToolMap(in.mcpTools, old.MCPTools) {
		changed = append(changed, "mcp_tools")
	}
	return changed
}

// applyAgentUpdate returns old with the given fields replaced and the name
// forced to the agent's folder name; every other key is carried over.
func applyAgentUpdate(in *updateArgs, name string, old *customagent.Config) *customagent.Config {
	cfg := old.Clone()
	cfg.Name = name // the folder's name wins over a drifted name key
	if in.description != nil {
		cfg.Description = *in.description
	}
	if in.model != nil {
		cfg.Model = *in.model
	}
	if in.toolGroups != nil {
		cfg.ToolGroups = in.toolGroups
	}
	if in.skills != nil {
		cfg.Skills = in.skills
	}
	if in.mcpPlugins != nil {
		cfg.MCPPlugins = in.mcpPlugins
	}
	if in.mcpTools != nil {
		cfg.MCPTools = in.mcpTools
		if len(in.mcpTools) == 0 {
			cfg.MCPTools = nil // {} narrows nothing
		}
	}
	return cfg
}

// sameList compares two optional lists the way Python compares a list
// with None: nil differs from an empty list.
func sameList(a, b []string) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return slices.Equal(a, b)
}

func hasModel(cfg *config.Config, name string) bool {
	_, ok := cfg.Model(name)
	return ok
}

// mcpChoiceError is an mcp_tools argument that does not fit the agent's
// mcp_plugins.
type mcpChoiceError struct{ err error }

func (e *mcpChoiceError) Error() string { return e.err.Error() }

// checkMCPServers refuses mcp_plugins entries that name no MCP server
// the user's runs see.
func (u *agentUpdater) checkMCPServers(user string, plugins []string) *tool.Result {
	if plugins == nil {
		return nil
	}
	if u.opts.MCPServerNames == nil {
		return tool.Errorf("mcp_plugins cannot be changed here: no MCP configuration is known to this tool")
	}
	known := u.opts.MCPServerNames(user)
	if unknown := UnknownMCPServers(plugins, known); len(unknown) > 0 {
		return tool.Errorf("Unknown MCP server(s) in mcp_plugins: %s. Configured servers: %s.",
			strings.Join(unknown, ", "), orNone(known))
	}
	return nil
}

// UnknownMCPServers returns the entries of plugins that are neither a
// name in known nor DeerFlow's installation id of one (see
// customagent.InstallationID).
func UnknownMCPServers(plugins, known []string) []string {
	var unknown []string
	for _, p := range plugins {
		if !slices.Contains(known, p) && !slices.ContainsFunc(known, func(k string) bool { return customagent.InstallationID(k) == p }) {
			unknown = append(unknown, p)
		}
	}
	return unknown
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// sameToolMap compares two mcp_tools values ({} and nil are the same:
// neither narrows anything).
func sameToolMap(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}
