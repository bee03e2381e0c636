package deferred

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

func routedTools() ([]*tool.Tool, map[string]config.MCPServer) {
	mk := func(server, name string) *tool.Tool {
		t := fakeTool(server, server+"_"+name, "Does "+name+".", nil)
		t.Meta["mcp_tool"] = name
		return t
	}
	tools := []*tool.Tool{
		mk("jira", "create_ticket"), mk("jira", "search"), mk("jira", "comment"),
		mk("wiki", "page"), mk("wiki", "edit"),
		mk("crm", "lead"), mk("plain", "other"),
	}
	servers := map[string]config.MCPServer{
		"jira": {Name: "jira", Routing: &config.Routing{Mode: "prefer", Priority: 50, Keywords: []string{"Ticket", "bug"}},
			Tools: map[string]json.RawMessage{
				"create_ticket": json.RawMessage(`{"routing":{"priority":90}}`),
				"comment":       json.RawMessage(`{"routing":{"mode":"off"}}`),
			}},
		"wiki": {Name: "wiki", Routing: &config.Routing{Mode: "prefer", Priority: 50, Keywords: []string{"wiki"}},
			Tools: map[string]json.RawMessage{"edit": json.RawMessage(`{"routing":{"keywords":["EDIT the docs"]}}`)}},
		"crm":   {Name: "crm", Routing: &config.Routing{Mode: "prefer", Priority: 10, Keywords: []string{"lead", "ticket"}}},
		"plain": {Name: "plain"},
	}
	return tools, servers
}

func userTurns(texts ...string) []model.Message {
	var out []model.Message
	for _, s := range texts {
		out = append(out, model.UserText(s), model.Message{Role: model.RoleAssistant, Content: "ok"})
	}
	return out
}

// Keyword match case-insensitive on the latest
// real user message; priority ordering; top_k clamp; the routing
// middleware must come before the filter.
func TestRouting(t *testing.T) {
	tools, servers := routedTools()
	c := NewCatalog(tools)

	t.Run("match", func(t *testing.T) {
		r := newRouter(tools, servers, 5, c)
		tests := []struct {
			name     string
			messages []model.Message
			want     []string
		}{
			{"case-insensitive, priority then name", userTurns("Open a TICKET please"),
				[]string{"jira_create_ticket", "jira_search", "crm_lead"}},
			{"latest user message only", userTurns("a ticket", "update the wiki"),
				[]string{"wiki_page"}},
			{"synthetic user message skipped",
				append(userTurns("edit the docs now"), model.Message{Role: model.RoleUser, Content: "ticket", Meta: map[string]any{"hidden": true}}),
				[]string{"wiki_edit"}},
			{"off override and no keyword hit", userTurns("comment on something"), nil},
			{"no user message", nil, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if diff := cmp.Diff(tt.want, r.Match(tt.messages)); diff != "" {
					t.Errorf("Match (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("top_k clamp", func(t *testing.T) {
		msgs := userTurns("ticket bug lead wiki edit the docs")
		for _, tt := range []struct{ topK, want int }{{0, 3}, {1, 1}, {2, 2}, {9, 5}, {-4, 3}} {
			if got := len(newRouter(tools, servers, tt.topK, c).Match(msgs)); got != tt.want {
				t.Errorf("top_k %d: %d routed, want %d", tt.topK, got, tt.want)
			}
		}
	})

	t.Run("routing before filter", func(t *testing.T) {
		d, err := SetupRouted(tools, config.ToolSearch{Enabled: true, AutoPromoteTopK: 2}, servers)
		if err != nil {
			t.Fatal(err)
		}
		st := &thread.State{Messages: userTurns("file a bug")}
		var seen []string
		final := func(_ context.Context, call *tool.ModelCall) (*model.Response, error) {
			seen = seen[:0]
			for _, def := range call.Request.Tools {
				seen = append(seen, def.Name)
			}
			return &model.Response{}, nil
		}
		req := &model.Request{Messages: st.Messages}
		for _, tl := range tools {
			req.Tools = append(req.Tools, tl.Definition())
		}
		call := &tool.ModelCall{Request: req, State: st}

		h := tool.ChainModel(final, d.ModelMiddlewares()...)
		if _, err := h(t.Context(), call); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"jira_create_ticket", "jira_search"}, seen); diff != "" {
			t.Errorf("routed schemas (-want +got):\n%s", diff)
		}

		// The routed tool may be called in this turn; others stay guarded.
		guard := d.GuardTools(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Text("ran"), nil
		})
		for name, wantErr := range map[string]bool{"jira_create_ticket": false, "wiki_page": true} {
			res, err := guard(t.Context(), &tool.Call{Name: name, State: st}, nil)
			if err != nil || res.IsError != wantErr {
				t.Errorf("call %s: IsError %v, err %v; want IsError %v", name, res.IsError, err, wantErr)
			}
		}

		// The filter alone, or before routing, refuses to run.
		for _, order := range [][]tool.ModelMiddleware{{d.FilterModel}, {d.FilterModel, d.Routing}} {
			if _, err := tool.ChainModel(final, order...)(t.Context(), call); !errors.Is(err, ErrRoutingOrder) {
				t.Errorf("misordered chain: err %v, want ErrRoutingOrder", err)
			}
		}
		if !strings.Contains(ErrRoutingOrder.Error(), "McpRoutingMiddleware must be installed before DeferredToolFilterMiddleware") {
			t.Errorf("order error text: %q", ErrRoutingOrder)
		}
	})
}

func TestRoutingPromptSection(t *testing.T) {
	tools, servers := routedTools()
	deferredOnly := NewCatalog(tools[:3]) // jira deferred, the rest bound
	got := newRouter(tools, servers, 3, deferredOnly).PromptSection()
	want := strings.Join([]string{
		"<mcp_routing_hints>",
		"When the user's request involves ticket or bug:",
		"  use `tool_search` to fetch `jira_create_ticket`, then prefer that MCP tool.",
		"When the user's request involves ticket or bug:",
		"  use `tool_search` to fetch `jira_search`, then prefer that MCP tool.",
		"When the user's request involves edit the docs:",
		"  prefer the `wiki_edit` tool.",
		"When the user's request involves wiki:",
		"  prefer the `wiki_page` tool.",
		"When the user's request involves lead or ticket:",
		"  prefer the `crm_lead` tool.",
		"</mcp_routing_hints>",
	}, "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PromptSection (-want +got):\n%s", diff)
	}
	if newRouter(tools, map[string]config.MCPServer{}, 3, nil) != nil {
		t.Error("router without routed tools is not nil")
	}
	if s := (*Router)(nil).PromptSection(); s != "" {
		t.Errorf("nil router prompt %q", s)
	}
	if got := orList([]string{"a", "b", "c"}); got != "a, b, or c" {
		t.Errorf("orList = %q", got)
	}
}

func ExampleRouter() {
	tools := []*tool.Tool{
		{Name: "jira_create_ticket", Meta: map[string]string{"mcp_server": "jira", "mcp_tool": "create_ticket"}},
		{Name: "jira_search", Meta: map[string]string{"mcp_server": "jira", "mcp_tool": "search"}},
	}
	servers := map[string]config.MCPServer{
		"jira": {Routing: &config.Routing{Mode: "prefer", Priority: 10, Keywords: []string{"ticket", "jira"}},
			Tools: map[string]json.RawMessage{"create_ticket": json.RawMessage(`{"routing":{"priority":20}}`)}},
	}
	r := newRouter(tools, servers, 3, NewCatalog(tools))
	fmt.Println(r.Match([]model.Message{model.UserText("Open a Jira TICKET for the outage")}))
	fmt.Println(r.PromptSection())
	// Output:
	// [jira_create_ticket jira_search]
	// <mcp_routing_hints>
	// When the user's request involves ticket or jira:
	//   use `tool_search` to fetch `jira_create_ticket`, then prefer that MCP tool.
	// When the user's request involves ticket or jira:
	//   use `tool_search` to fetch `jira_search`, then prefer that MCP tool.
	// </mcp_routing_hints>
}
