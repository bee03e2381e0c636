package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// TestElicitation_reachesTheHandlerWithTheServer: a tool that elicits
// reaches Options.ElicitationHandler with the asking server's name in
// its ctx, the form and url capabilities are advertised, and the
// handler's answer (with the schema's default filled in by the SDK)
// reaches the server.
func TestElicitation_reachesTheHandlerWithTheServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	var caps *mcp.ClientCapabilities
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			caps = req.Session.InitializeParams().Capabilities
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{
				"type": "object", "required": []any{"name"},
				"properties": map[string]any{
					"name":  map[string]any{"type": "string"},
					"color": map[string]any{"type": "string", "enum": []any{"red", "blue"}, "default": "blue"},
				}}})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	var server, message string
	m := newManager(t, mcptools.Options{
		Extensions: mcptools.Static(parseExt(t, `{"mem": `+memServerJSON("")+`}`)),
		Dial:       memServers{"mem": srv}.dial,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			server, message = mcptools.ElicitationServer(ctx), req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	tools, err := m.Tools(t.Context())
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %v, %v", names(tools), err)
	}
	res, err := tools[0].Handler(t.Context(), &tool.Call{ID: "c1"}, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if server != "mem" || message != "Who are you?" {
		t.Errorf("handler saw server %q, message %q", server, message)
	}
	if got, want := resultText(res), `{"action":"accept","content":{"color":"blue","name":"Ada"}}`; got != want {
		t.Errorf("the server got %s, want %s", got, want)
	}
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil || caps.Elicitation.URL == nil {
		t.Errorf("elicitation capabilities %+v, want form and url", caps)
	}
}

// TestElicitation_notAdvertisedWithoutAHandler: with no handler the
// client offers no elicitation.
func TestElicitation_notAdvertisedWithoutAHandler(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	var caps *mcp.ClientCapabilities
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			caps = req.Session.InitializeParams().Capabilities
			return &mcp.CallToolResult{}, nil
		})
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"mem": `+memServerJSON("")+`}`)), Dial: memServers{"mem": srv}.dial})
	tools, err := m.Tools(t.Context())
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %v, %v", names(tools), err)
	}
	if _, err := tools[0].Handler(t.Context(), &tool.Call{ID: "c1"}, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if caps == nil || caps.Elicitation != nil {
		t.Errorf("capabilities %+v, want no elicitation", caps)
	}
}

func ptr(f float64) *float64 { return &f }

func TestElicitFields(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    []mcptools.ElicitField
		wantErr string
	}{
		{name: "required first in their order, then by name", schema: `{"type":"object","required":["b","a"],"properties":{
			"z":{"type":"boolean","default":true},"a":{"type":"integer","minimum":1,"maximum":9},"b":{"type":"string","title":"Bee","format":"email","maxLength":50}}}`,
			want: []mcptools.ElicitField{
				{Name: "b", Title: "Bee", Kind: "string", Format: "email", Required: true, Max: ptr(50)},
				{Name: "a", Kind: "integer", Required: true, Min: ptr(1), Max: ptr(9)},
				{Name: "z", Kind: "boolean", Default: true},
			}},
		{name: "enums: legacy enumNames, oneOf, multi-select", schema: `{"type":"object","properties":{
			"c":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]},
			"d":{"type":"string","oneOf":[{"const":"x","title":"Ex"},{"const":"y"}]},
			"e":{"type":"array","minItems":1,"items":{"type":"string","enum":["p","q"]}}}}`,
			want: []mcptools.ElicitField{
				{Name: "c", Kind: "enum", Options: []mcptools.ElicitOption{{"r", "Red"}, {"g", "Green"}}},
				{Name: "d", Kind: "enum", Options: []mcptools.ElicitOption{{"x", "Ex"}, {"y", "y"}}},
				{Name: "e", Kind: "multi", Min: ptr(1), Options: []mcptools.ElicitOption{{"p", "p"}, {"q", "q"}}},
			}},
		{name: "nested object", schema: `{"type":"object","properties":{"n":{"type":"object"}}}`, wantErr: `property "n": type "object"`},
		{name: "not an object", schema: `{"type":"string"}`, wantErr: `type "string", want object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
				t.Fatal(err)
			}
			got, err := mcptools.ElicitFields(schema)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestElicitField_Parse(t *testing.T) {
	opts := []mcptools.ElicitOption{{"r", "Red"}, {"g", "Green"}}
	tests := []struct {
		name    string
		field   mcptools.ElicitField
		text    string
		want    any
		wantErr string
	}{
		{"boolean yes", mcptools.ElicitField{Kind: "boolean"}, "Yes", true, ""},
		{"boolean other", mcptools.ElicitField{Kind: "boolean"}, "maybe", nil, "yes or no"},
		{"integer", mcptools.ElicitField{Kind: "integer", Min: ptr(1)}, "42", int64(42), ""},
		{"integer fraction", mcptools.ElicitField{Kind: "integer"}, "4.5", nil, "whole number"},
		{"number below minimum", mcptools.ElicitField{Kind: "number", Min: ptr(1)}, "0.5", nil, "at least 1"},
		{"enum by label", mcptools.ElicitField{Kind: "enum", Options: opts}, "green", "g", ""},
		{"enum by number", mcptools.ElicitField{Kind: "enum", Options: opts}, "1", "r", ""},
		{"enum unknown", mcptools.ElicitField{Kind: "enum", Options: opts}, "blue", nil, "one of the options"},
		{"multi", mcptools.ElicitField{Kind: "multi", Options: opts}, "2, r", []any{"g", "r"}, ""},
		{"multi too few", mcptools.ElicitField{Kind: "multi", Options: opts, Min: ptr(2)}, "r", nil, "at least 2 choices"},
		{"string too long", mcptools.ElicitField{Kind: "string", Max: ptr(3)}, "abcd", nil, "at most 3 characters"},
		{"email", mcptools.ElicitField{Kind: "string", Format: "email"}, "ada@example.com", "ada@example.com", ""},
		{"bad date", mcptools.ElicitField{Kind: "string", Format: "date"}, "12/01/2026", nil, "valid date"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.field.Parse(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) = %v, %v; want an error with %q", tt.text, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

// TestElicitationCall_attributesTheRun: the handler's ctx names the call
// whose request the elicitation serves when the calls in flight on the
// asking session are one run's (two calls of one run: a copy without
// id), and none when calls of another run share the session, so that an
// elicitation never reaches the wrong user.
func TestElicitationCall_attributesTheRun(t *testing.T) {
	tests := []struct {
		name   string
		holder *tool.Call // a call in flight on the session meanwhile; nil for none
		want   *tool.Call
	}{
		{"one call", nil, &tool.Call{ID: "c1", RunID: "r1", ThreadID: "t1", UserID: "u1"}},
		{"two calls of one run", &tool.Call{ID: "c0", RunID: "r1", ThreadID: "t1", UserID: "u1"},
			&tool.Call{RunID: "r1", ThreadID: "t1", UserID: "u1"}},
		{"a call of another run shares the session", &tool.Call{ID: "c0", RunID: "r2", ThreadID: "t2", UserID: "u2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
			held, release := make(chan struct{}), make(chan struct{})
			srv.AddTool(&mcp.Tool{Name: "hold", InputSchema: map[string]any{"type": "object"}},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					close(held)
					<-release
					return &mcp.CallToolResult{}, nil
				})
			srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "ok?", RequestedSchema: map[string]any{"type": "object"}})
					return &mcp.CallToolResult{}, err
				})
			var got *tool.Call
			m := newManager(t, mcptools.Options{
				Extensions: mcptools.Static(parseExt(t, `{"mem": `+memServerJSON("")+`}`)),
				Dial:       memServers{"mem": srv}.dial,
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if c := mcptools.ElicitationCall(ctx); c != nil {
						got = &tool.Call{ID: c.ID, RunID: c.RunID, ThreadID: c.ThreadID, UserID: c.UserID}
					}
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			})
			tools, err := m.Tools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*toolT{}
			for _, tl := range tools {
				byName[tl.Name] = tl
			}
			if byName["mem_ask"] == nil || byName["mem_hold"] == nil {
				t.Fatalf("tools = %v", names(tools))
			}
			holding := make(chan struct{})
			if tt.holder != nil {
				go func() {
					defer close(holding)
					byName["mem_hold"].Handler(context.Background(), tt.holder, json.RawMessage(`{}`))
				}()
				<-held
			} else {
				close(holding)
			}
			if _, err := byName["mem_ask"].Handler(t.Context(), &tool.Call{ID: "c1", RunID: "r1", ThreadID: "t1", UserID: "u1"}, json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			close(release)
			<-holding
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ElicitationCall (-want +got):\n%s", diff)
			}
		})
	}
}
