package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/toolset"
)

// searcherModel is a fake model whose provider searches tools itself.
type searcherModel struct{ *fakeModel }

func (searcherModel) SupportsToolSearch() bool { return true }

// TestFactory_providerToolSearch runs the lead agent with
// tool_search.provider_search on a model that searches tools itself:
// every request binds every tool, the deferred ones marked DeferLoading,
// asks for the provider's search, binds no tool_search, and is the same
// list from one request to the next; a call to a tool the provider's
// search returned runs, a call to another deferred tool is refused.
func TestFactory_providerToolSearch(t *testing.T) {
	fm := &fakeModel{steps: []step{
		func(*model.Request) ([]model.Event, error) {
			msg := model.Message{Role: model.RoleAssistant, Meta: map[string]any{model.MetaToolReferences: []string{"github_create_issue"}},
				ToolCalls: []model.ToolCall{
					{ID: "call_1", Name: "github_create_issue", Arguments: json.RawMessage(`{}`)},
					{ID: "call_2", Name: "github_list_pulls", Arguments: json.RawMessage(`{}`)},
				}}
			return []model.Event{{Response: &model.Response{Message: msg, FinishReason: model.FinishToolCalls}}}, nil
		},
		answer("done"),
	}}
	reg := testRegistry()
	reg.RegisterModel(func(context.Context, *toolset.Env, config.Model) (model.ChatModel, error) {
		return searcherModel{fm}, nil
	}, "test:searcher")
	yaml := strings.Replace(fmt.Sprintf(recipeConfig, "tool_search: {enabled: true, provider_search: bm25}\n"), "use: test:model", "use: test:searcher", 1)
	cfg, err := config.Parse("config.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg},
		Builtins: toolset.Builtins{PresentFiles: textTool("present_files", "ok"), AskClarification: builtin.AskClarification()},
		MCP:      staticMCP{mcpTool("github", "create_issue", "Create an issue."), mcpTool("github", "list_pulls", "List pull requests.")}}
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm, Catalogs: deferred.NewCatalogCache(deferred.CatalogCacheOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lead.Tools.Lookup(deferred.ToolSearchName); ok {
		t.Error("tool_search is bound although the provider searches")
	}
	if strings.Contains(lead.Prompt, "<available-deferred-tools>") {
		t.Error("the prompt lists deferred tools for tool_search")
	}
	out, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("open an issue")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fm.count() != 2 {
		t.Fatalf("%d model requests, want 2", fm.count())
	}
	first := fm.request(0)
	if first.ProviderToolSearch != model.ToolSearchBM25 {
		t.Errorf("ProviderToolSearch = %q", first.ProviderToolSearch)
	}
	marks := map[string]bool{}
	for _, d := range first.Tools {
		marks[d.Name] = d.DeferLoading
	}
	if !marks["github_create_issue"] || !marks["github_list_pulls"] || marks["ls"] || marks["present_files"] {
		t.Errorf("DeferLoading by tool: %v", marks)
	}
	if diff := cmp.Diff(first.Tools, fm.request(1).Tools, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("the tool list changed after a search (-first +second):\n%s", diff)
	}
	results := map[string]string{}
	for _, m := range out.State.Messages {
		if m.Role == model.RoleTool {
			results[m.Name] = m.Content
		}
	}
	if results["github_create_issue"] != "ok" {
		t.Errorf("the referenced tool's result = %q, want it run", results["github_create_issue"])
	}
	if want := "Error: Tool 'github_list_pulls' is deferred and has not been loaded."; !strings.HasPrefix(results["github_list_pulls"], want) {
		t.Errorf("the unreferenced tool's result = %q, want %q...", results["github_list_pulls"], want)
	}
}

// Without a model that searches tools, provider_search falls back to
// tool_search.
func TestFactory_providerToolSearchNeedsAModelThatSearches(t *testing.T) {
	cfg, err := config.Parse("config.yaml", fmt.Appendf(nil, recipeConfig, "tool_search: {enabled: true, provider_search: regex}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	asm := &toolset.Assembler{Registry: testRegistry(), Env: &toolset.Env{Config: cfg},
		Builtins: toolset.Builtins{PresentFiles: textTool("present_files", "ok"), AskClarification: builtin.AskClarification()},
		MCP:      staticMCP{mcpTool("github", "create_issue", "Create an issue.")}}
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lead.Tools.Lookup(deferred.ToolSearchName); !ok {
		t.Error("no tool_search for a model without its own search")
	}
}
