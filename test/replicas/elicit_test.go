package replicas_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// TestInProcessElicitationAnswerOnOtherReplica: an MCP server's question
// asked during a run on replica A waits there; the frontend's answer
// landing on replica B fails at once with 409 naming the replicas
// (nothing hangs, no run starts), and the same answer on A reaches the
// server and finishes the run.
func TestInProcessElicitationAnswerOnOtherReplica(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "confirm", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Go ahead?", RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	extJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"asker": map[string]any{"enabled": true, "type": "http", "url": hs.URL}}})
	ext, err := config.ParseExtensions("extensions_config.json", extJSON, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	m := modeltest.FromScript(modeltest.Script{NoRecord: true, Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "asker_confirm", Arguments: json.RawMessage(`{}`)}}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "done: {last}"}},
	}})
	url, schema := pgtest.Schema(t)
	home := t.TempDir()
	a := startInprocOpts(t, url, schema, home, m, inprocOptions{elicit: ext})
	b := startInprocOpts(t, url, schema, home, m, inprocOptions{elicit: ext})
	ca, cb := newClient(t, a.url), newClient(t, b.url)

	resp := ca.do("POST", "/api/langgraph/threads/t-ask/runs/stream", runBody("book it"))
	rid := runIDOf(resp)
	frames, err := readStream(resp.Body)
	resp.Body.Close()
	if err != nil || len(frames) == 0 || frames[len(frames)-1].Event != "end" {
		t.Fatalf("A's stream: %v %v", eventsOf(frames), err)
	}
	requestID := ""
	for _, f := range frames {
		if f.Event != "values" {
			continue
		}
		var v struct {
			Messages []struct {
				Name     string `json:"name"`
				Artifact struct {
					HumanInput struct {
						RequestID string `json:"request_id"`
						Source    string `json:"source"`
					} `json:"human_input"`
				} `json:"artifact"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(f.Data), &v); err != nil {
			t.Fatal(err)
		}
		for _, msg := range v.Messages {
			if msg.Name == "ask_clarification" && msg.Artifact.HumanInput.Source == "mcp_elicitation" {
				requestID = msg.Artifact.HumanInput.RequestID
			}
		}
	}
	if requestID == "" {
		t.Fatalf("no card in A's stream: %v", eventsOf(frames))
	}
	answer := runBody(`For your clarification "Go ahead?", my answer is: accept`)
	answer["input"] = map[string]any{"messages": []any{map[string]any{"type": "human",
		"content": []any{map[string]any{"type": "text", "text": "accept"}},
		"additional_kwargs": map[string]any{"hide_from_ui": true, "human_input_response": map[string]any{
			"version": 1, "kind": "human_input_response", "source": "mcp_elicitation", "request_id": requestID,
			"response_kind": "option", "option_id": "accept", "value": "accept"}}}}}

	onB := cb.do("POST", "/api/langgraph/threads/t-ask/runs/stream", answer)
	body, _ := io.ReadAll(onB.Body)
	onB.Body.Close()
	if onB.StatusCode != http.StatusConflict || !strings.Contains(string(body), "another gateway replica") {
		t.Fatalf("answer on B: status %d: %s", onB.StatusCode, body)
	}

	onA := ca.do("POST", "/api/langgraph/threads/t-ask/runs/stream", answer)
	rest, err := readStream(onA.Body)
	onA.Body.Close()
	if onA.StatusCode != 200 || err != nil || len(rest) == 0 || rest[len(rest)-1].Event != "end" {
		t.Fatalf("answer on A: status %d, %v %v", onA.StatusCode, eventsOf(rest), err)
	}
	var run map[string]any
	cb.json("GET", "/api/threads/t-ask/runs/"+rid, nil, 200, &run)
	if run["status"] != "success" {
		t.Errorf("run status after the answer = %v, want success", run["status"])
	}
	var state struct {
		Values struct {
			Messages []map[string]any `json:"messages"`
		} `json:"values"`
	}
	cb.json("GET", "/api/threads/t-ask/state", nil, 200, &state)
	if n := len(state.Values.Messages); n == 0 || state.Values.Messages[n-1]["content"] != "done: accept" {
		t.Errorf("final state messages = %v", state.Values.Messages)
	}
}
