package agent_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

const factoryConfig = `
models:
  - name: first
    use: test:model
    model: m1
  - name: second
    use: test:model
    model: m2
    supports_thinking: true
tools:
  - name: ls
    group: file:read
    use: test:ls
  - name: web_search
    group: web
    use: test:web
`

type agents map[string]*agent.AgentSpec

func (a agents) LoadAgent(ctx context.Context, user, name string) (*agent.AgentSpec, error) {
	if s, ok := a[name]; ok {
		return s, nil
	}
	return nil, agent.ErrAgentNotFound
}

// testRegistry resolves test:model (a model answering with its model
// name), test:ls and test:web.
func testRegistry() *toolset.Registry {
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(ctx context.Context, env *toolset.Env, m config.Model) (model.ChatModel, error) {
		return &fakeModel{loop: answer(m.Model)}, nil
	}, "test:model")
	reg.RegisterTool(func(ctx context.Context, env *toolset.Env, e config.ToolEntry) (*tool.Tool, error) {
		return textTool("ls", "x"), nil
	}, "test:ls")
	reg.RegisterTool(func(ctx context.Context, env *toolset.Env, e config.ToolEntry) (*tool.Tool, error) {
		return textTool("web_search", "x"), nil
	}, "test:web")
	return reg
}

func newFactory(t *testing.T, yaml string, logs *bytes.Buffer) *agent.Factory {
	t.Helper()
	cfg, err := config.Parse("config.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	reg := testRegistry()
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg, Logger: logger}, Logger: logger,
		Builtins: toolset.Builtins{
			PresentFiles:     textTool("present_files", "ok"),
			AskClarification: builtin.AskClarification(),
		}}
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm, Logger: logger,
		Agents:      agents{"coder": {Name: "coder", ToolGroups: []string{"file:read"}, Soul: "  Write Go.  ", Model: "second"}},
		SetupAgent:  textTool(builtin.SetupAgentName, "created"),
		UpdateAgent: textTool(builtin.UpdateAgentName, "updated"),
		Now:         func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFactoryAddsAndWithholdsTools(t *testing.T) {
	f := newFactory(t, factoryConfig, nil)
	for _, tc := range []struct {
		name string
		req  agent.Request
		want []string
	}{
		{"default agent", agent.Request{}, []string{"ls", "web_search", "present_files", "ask_clarification"}},
		{"named agent gets update_agent and its groups", agent.Request{AgentName: "coder"},
			[]string{"ls", "present_files", "ask_clarification", "update_agent"}},
		{"github channel withholds update_agent", agent.Request{AgentName: "coder", ChannelName: "github"},
			[]string{"ls", "present_files", "ask_clarification"}},
		{"bootstrap gets setup_agent and every group", agent.Request{AgentName: "new-one", IsBootstrap: true},
			[]string{"ls", "web_search", "present_files", "ask_clarification", "setup_agent"}},
		{"non-interactive removes ask_clarification", agent.Request{NonInteractive: true},
			[]string{"ls", "web_search", "present_files"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lead, err := f.Build(t.Context(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, lead.Agent.Tools()); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if has := strings.Contains(lead.Prompt, "ask_clarification"); has != slices.Contains(tc.want, "ask_clarification") {
				t.Errorf("prompt mentions ask_clarification = %v", has)
			}
		})
	}
	if _, err := f.Build(t.Context(), agent.Request{AgentName: "ghost"}); !errors.Is(err, agent.ErrAgentNotFound) {
		t.Errorf("unknown agent: %v", err)
	}
	if _, err := f.Build(t.Context(), agent.Request{AgentName: "bad/name"}); err == nil ||
		!strings.Contains(err.Error(), "Invalid agent name 'bad/name'") {
		t.Errorf("invalid name: %v", err)
	}
}

func TestModelFallback(t *testing.T) {
	var logs bytes.Buffer
	f := newFactory(t, factoryConfig, &logs)
	for _, tc := range []struct {
		name, requested, agent, want string
		thinking                     bool
	}{
		{"default", "", "", "first", false},
		{"requested", "second", "", "second", true},
		{"unknown falls back to the first", "gpt-9", "", "first", false},
		{"agent's model", "", "coder", "second", true},
		{"request beats agent", "first", "coder", "first", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lead, err := f.Build(t.Context(), agent.Request{ModelName: tc.requested, AgentName: tc.agent})
			if err != nil {
				t.Fatal(err)
			}
			if lead.ModelName != tc.want || lead.Thinking != tc.thinking {
				t.Errorf("model %q thinking %v, want %q %v", lead.ModelName, lead.Thinking, tc.want, tc.thinking)
			}
		})
	}
	if !strings.Contains(logs.String(), "Model 'gpt-9' not found in config; fallback to default model 'first'.") {
		t.Errorf("no fallback warning in logs:\n%s", logs.String())
	}

	empty := newFactory(t, "models: []\n", nil)
	if _, err := empty.Build(t.Context(), agent.Request{}); err == nil || err.Error() != agent.NoModelsMessage {
		t.Errorf("no models: %v", err)
	}
}

func TestFactoryBuildsARunnableLead(t *testing.T) {
	f := newFactory(t, factoryConfig, nil)
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t", UserID: "u", AgentName: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"coder", "Write Go.", "2026-03-02, Monday", "/mnt/user-data/outputs", "present_files"} {
		if !strings.Contains(lead.Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, lead.Prompt)
		}
	}
	if lead.Context["thread_id"] != "t" || lead.Context["agent_name"] != "coder" || lead.Metadata["model_name"] != "second" {
		t.Errorf("context %v metadata %v", lead.Context, lead.Metadata)
	}
	out, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("hi")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.State.Messages[len(out.State.Messages)-1].Content; got != "m2" {
		t.Errorf("answered by %q", got)
	}
}

func TestPromptBootstrap(t *testing.T) {
	p := agent.RenderPrompt(agent.PromptData{Bootstrap: true, Date: "today", Clarification: true,
		Skills: "<skill_system/>", Deferred: "<available-deferred-tools>x</available-deferred-tools>"})
	for _, want := range []string{"setup_agent", "<skill_system/>", "<available-deferred-tools>x</available-deferred-tools>", "ask_clarification"} {
		if !strings.Contains(p, want) {
			t.Errorf("bootstrap prompt lacks %q", want)
		}
	}
}
