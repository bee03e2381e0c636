package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

const authzConfig = `
models:
  - {name: small, use: test:scripted, model: s}
  - {name: big, use: test:scripted, model: b}
sandbox: {allow_host_bash: true}
summarization: {enabled: true}
tools:
  - {name: bash, group: bash, use: test:bash}
  - {name: web_search, group: web, use: test:web}
authorization:
  enabled: true
  default_role: user
  provider:
    use: deerflow.authz.rbac:RbacAuthorizationProvider
    config:
      roles:
        user:  {tools: {allow: "*"}}
        guest: {tools: {allow: "*", deny: [bash]}, models: {allow: [big]}}
`

// authzFixture is a factory over authzConfig whose models are one scripted
// model and whose bash counts its runs.
type authzFixture struct {
	factory  *agent.Factory
	model    *modeltest.Model
	bashRuns *atomic.Int32
}

func newAuthzFixture(t *testing.T, provider authz.Provider, turns ...modeltest.Turn) authzFixture {
	t.Helper()
	cfg, err := config.Parse("config.yaml", []byte(authzConfig), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	opts := authz.Options{Config: cfg.Authorization}
	if provider != nil {
		opts.Config.Provider = &config.AuthorizationProvider{Use: "corp:Provider"}
		opts.Providers = map[string]authz.Factory{"corp:Provider": func(map[string]any) (authz.Provider, error) { return provider, nil }}
	}
	az, err := authz.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	fx := authzFixture{model: modeltest.New(turns...), bashRuns: &atomic.Int32{}}
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(context.Context, *toolset.Env, config.Model) (model.ChatModel, error) { return fx.model, nil }, "test:scripted")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) {
		return handlerTool("bash", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			fx.bashRuns.Add(1)
			return tool.Text("root"), nil
		}), nil
	}, "test:bash")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) {
		return textTool("web_search", "results"), nil
	}, "test:web")
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg}}
	fx.factory, err = agent.NewFactory(agent.FactoryOptions{Assembler: asm, Authorizer: az,
		ToolMiddlewares: []tool.Middleware{az.ToolMiddleware()}})
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// TestAuthz_roleWithoutBashNeverSeesIt: a guest (whose role denies bash)
// runs with a model request that does not offer bash, and user_role is in
// the runtime context; the user role sees it.
func TestAuthz_roleWithoutBashNeverSeesIt(t *testing.T) {
	fx := newAuthzFixture(t, nil, modeltest.Turn{Text: "done"}, modeltest.Turn{Text: "done"})
	for role, wantBash := range map[string]bool{"guest": false, "user": true} {
		lead, err := fx.factory.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u1", UserRole: role, ModelName: "big",
			Context: map[string]any{"user_role": "user"}}) // a client's user_role never wins over the request's
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("who am i")), nil); err != nil {
			t.Fatal(err)
		}
		sent := modeltest.ToolNames(fx.model.LastRequest())
		if slices.Contains(sent, "bash") != wantBash || !slices.Contains(sent, "web_search") {
			t.Errorf("%s: model request tools = %v", role, sent)
		}
		if got := lead.Context["user_role"]; got != role {
			t.Errorf("%s: runtime context user_role = %v", role, got)
		}
	}
}

// listNotCall lets every tool be listed but refuses to let bash be called,
// so that bash is bound and the call gate alone must stop it.
type listNotCall struct{}

func (listNotCall) Name() string { return "list-not-call" }
func (listNotCall) Authorize(_ context.Context, r authz.Request) (authz.Decision, error) {
	if r.Target == "bash" {
		return authz.Decision{Reasons: []authz.Reason{{Code: "authz.denied", Message: "no shell for you"}}}, nil
	}
	return authz.Decision{Allow: true}, nil
}
func (listNotCall) FilterResources(_ context.Context, _ authz.Principal, _ string, c []string) ([]string, error) {
	return c, nil
}

// TestAuthz_calledAnywayIsRefusedAndNeverRuns: a bound tool the provider
// refuses at call time returns DeerFlow's denial to the model and never
// runs.
func TestAuthz_calledAnywayIsRefusedAndNeverRuns(t *testing.T) {
	fx := newAuthzFixture(t, listNotCall{},
		modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"id"}`)}}},
		modeltest.Turn{Text: "ok"})
	lead, err := fx.factory.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u1", UserRole: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("run id")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := fx.bashRuns.Load(); n != 0 {
		t.Errorf("bash ran %d times", n)
	}
	var toolMsg *model.Message
	for i := range out.State.Messages {
		if out.State.Messages[i].Role == model.RoleTool {
			toolMsg = &out.State.Messages[i]
		}
	}
	want := "Guardrail denied: tool 'bash' was blocked (authz.denied). Reason: no shell for you. Choose an alternative approach."
	if toolMsg == nil || toolMsg.Content != want || toolMsg.Status != "error" {
		t.Errorf("tool message = %+v, want %q", toolMsg, want)
	}
}

// TestAuthz_modelChoice: a model the caller names and the role may not
// use is refused; a default model the role may not use falls back to an
// allowed one (DeerFlow's graceful fallback).
func TestAuthz_modelChoice(t *testing.T) {
	fx := newAuthzFixture(t, nil)
	_, err := fx.factory.Build(t.Context(), agent.Request{UserID: "u1", UserRole: "guest", ModelName: "small"})
	var md *authz.ModelDeniedError
	if !errors.As(err, &md) || !strings.Contains(err.Error(), "Model 'small' is not available for your role") {
		t.Errorf("explicit denied model: err = %v", err)
	}
	lead, err := fx.factory.Build(t.Context(), agent.Request{UserID: "u1", UserRole: "guest"})
	if err != nil || lead.ModelName != "big" {
		t.Errorf("default model: %v, model %q; want fallback to big", err, lead.ModelName)
	}
	lead, err = fx.factory.Build(t.Context(), agent.Request{UserID: "u1"})
	if err != nil || lead.ModelName != "small" || lead.Context["user_role"] != "user" {
		t.Errorf("default role: %v, model %q, role %v", err, lead.ModelName, lead.Context["user_role"])
	}
	if _, err := fx.factory.Compact(t.Context(), agent.Request{ThreadID: "t1", UserID: "u1", UserRole: "guest", ModelName: "small"}, true); !errors.As(err, &md) {
		t.Errorf("compact with a denied model: err = %v", err)
	}
}

// TestAuthz_deferredCatalogueHoldsOnlyAllowedTools: with tool_search on, an
// MCP tool the role may not use is neither bound nor in tool_search's
// catalogue, and tool_search itself is bound for a role that does not list
// it (DeerFlow's infrastructure tool), its calls let through.
func TestAuthz_deferredCatalogueHoldsOnlyAllowedTools(t *testing.T) {
	cfg, err := config.Parse("config.yaml", []byte(`
models: [{name: m, use: test:scripted, model: m}]
tool_search: {enabled: true}
authorization:
  enabled: true
  default_role: guest
  provider:
    use: deerflow.authz.rbac:RbacAuthorizationProvider
    config: {roles: {guest: {tools: {allow: [github_create_issue]}}}}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	az, err := authz.New(authz.Options{Config: cfg.Authorization})
	if err != nil {
		t.Fatal(err)
	}
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "c1", Name: "tool_search", Arguments: json.RawMessage(`{"query":"select:github_list_pulls,github_create_issue"}`)}}},
		modeltest.Turn{Text: "ok"})
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(context.Context, *toolset.Env, config.Model) (model.ChatModel, error) { return m, nil }, "test:scripted")
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg}, MCP: staticMCP{
		mcpTool("github", "create_issue", "Create an issue."), mcpTool("github", "list_pulls", "List pull requests.")}}
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm, Authorizer: az, ToolMiddlewares: []tool.Middleware{az.ToolMiddleware()}})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := lead.Tools.Names(); !slices.Equal(got, []string{"github_create_issue", "tool_search"}) {
		t.Fatalf("bound tools = %v", got)
	}
	out, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("open an issue")), nil)
	if err != nil {
		t.Fatal(err)
	}
	var found string
	for _, msg := range out.State.Messages {
		if msg.Role == model.RoleTool {
			found = msg.Content
		}
	}
	if !strings.Contains(found, "github_create_issue") || strings.Contains(found, "github_list_pulls") || strings.HasPrefix(found, "Guardrail denied") {
		t.Errorf("tool_search result = %q", found)
	}
}
