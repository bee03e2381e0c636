package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// SetupAgentName is the name of the setup_agent tool.
const SetupAgentName = "setup_agent"

// CreatedAgentNameKey is the Result.Meta key under which setup_agent
// reports the agent it created (DeerFlow's created_agent_name state key,
// for the run to copy into the thread state; nothing copies it yet, as
// thread.Update has no such key). Its value is the name, or nil for the
// default agent.
const CreatedAgentNameKey = "created_agent_name"

//go:embed setup_agent.md
var setupAgentDescription string

const setupAgentSchema = `{
  "type": "object",
  "properties": {
    "soul": {"type": "string", "description": "Full SOUL.md content defining the agent's personality and behavior."},
    "description": {"type": "string", "description": "One-line description of what the agent does."},
    "skills": {
      "type": ["array", "null"], "items": {"type": "string"},
      "description": "Optional list of skill names this agent should use. Omit (or null) for all enabled skills; [] for no skills."
    }
  },
  "required": ["soul", "description"]
}`

type setupAgentArgs struct {
	Soul        string   `json:"soul"`
	Description string   `json:"description"`
	Skills      []string `json:"skills,omitempty"` // absent: every skill; [] none
}

// NewSetupAgent returns the setup_agent tool, which the lead-agent factory
// binds for bootstrap runs only (DeerFlow's setup_agent_tool.py). The agent's name is the
// run's agent (tool.Call.AgentName, or the runtime context's
// "agent_name"), never an argument. It refuses an empty or blank soul and
// an invalid name before writing anything; with a name it writes the
// user's agent through store (config {name, description if not empty,
// skills if given} and SOUL.md, atomically together), without one it
// replaces the default agent's {home}/SOUL.md. On success the result says
// "Agent '{name}' created successfully!" and carries the name in
// Meta[CreatedAgentNameKey].
//
// NewSetupAgent panics if store is nil (a wiring mistake).
func NewSetupAgent(store *customagent.Store, logger *slog.Logger) *tool.Tool {
	if store == nil {
		panic("builtin.NewSetupAgent: store is nil")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t, err := tool.NewWithSchema(SetupAgentName, strings.TrimSpace(setupAgentDescription), json.RawMessage(setupAgentSchema),
		func(ctx context.Context, call *tool.Call, in setupAgentArgs) (*tool.Result, error) {
			return setupAgent(store, logger, call, in), nil
		})
	if err != nil {
		panic("builtin.NewSetupAgent: " + err.Error())
	}
	return t
}

func setupAgent(store *customagent.Store, logger *slog.Logger, call *tool.Call, in setupAgentArgs) *tool.Result {
	if strings.TrimSpace(in.Soul) == "" {
		return tool.Errorf("soul content is empty; refusing to create agent with an empty SOUL.md")
	}
	name := callAgentName(call)
	if name != "" {
		if err := customagent.ValidateName(name); err != nil {
			return tool.Errorf("%s", err.Error())
		}
		cfg := &customagent.Config{Name: name, Description: in.Description, Skills: in.Skills}
		soul := in.Soul
		user := callUserID(call)
		if err := store.Update(user, name, customagent.Change{Config: cfg, Soul: &soul}); err != nil {
			logger.Error("setup_agent: cannot create agent", "agent", name, "user", user, "err", err)
			return tool.Errorf("%s", vpath.PathlessError(err))
		}
	} else if err := store.WriteDefaultSoul(in.Soul); err != nil {
		logger.Error("setup_agent: cannot write the default SOUL.md", "err", err)
		return tool.Errorf("%s", vpath.PathlessError(err))
	}
	shown, created := name, any(name)
	if name == "" {
		shown, created = "None", nil
	}
	r := tool.Text("Agent '" + shown + "' created successfully!")
	r.Meta = map[string]any{CreatedAgentNameKey: created}
	return r
}

// callAgentName is the run's custom agent: the call's, or the runtime
// context's agent_name.
func callAgentName(call *tool.Call) string {
	if call == nil {
		return ""
	}
	if call.AgentName != "" {
		return call.AgentName
	}
	return call.ContextString("agent_name")
}
