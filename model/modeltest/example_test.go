package modeltest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// A two-turn script: a tool call, then an answer computed from the tool
// result.
func Example() {
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data"}`)}}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			return modeltest.Turn{Text: "Found: " + modeltest.LastMessage(req).Content}
		}},
	)
	ctx := context.Background()
	req := &model.Request{
		Messages: []model.Message{model.UserText("What is there?")},
		Tools:    []model.ToolDefinition{{Name: "ls"}},
	}
	resp, _ := model.Collect(ctx, m, req, nil)
	call := resp.Message.ToolCalls[0]
	fmt.Println(resp.FinishReason, call.ID, call.Name, string(call.Arguments))

	req.Messages = append(req.Messages, resp.Message,
		model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: "uploads workspace outputs"})
	resp, _ = model.Collect(ctx, m, req, nil)
	fmt.Println(resp.Message.Content)
	fmt.Println(m.Calls(), modeltest.ToolNames(m.LastRequest()))
	// Output:
	// tool_calls call_1_0 ls {"path":"/mnt/user-data"}
	// Found: uploads workspace outputs
	// 2 [ls]
}

// A stateless rules script shared by any number of concurrent runs.
func ExampleRule() {
	m := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{
			{Name: "echo", Arguments: json.RawMessage(`{"text":"{last}"}`)}}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "echo said {last}"}},
	}})
	ctx := context.Background()
	resp, _ := model.Collect(ctx, m, &model.Request{Messages: []model.Message{model.UserText("ping")}}, nil)
	fmt.Println(string(resp.Message.ToolCalls[0].Arguments))
	resp, _ = model.Collect(ctx, m, &model.Request{Messages: []model.Message{{Role: model.RoleTool, Content: "ping"}}}, nil)
	fmt.Println(resp.Message.Content)
	// Output:
	// {"text":"ping"}
	// echo said ping
}

// A script read from its JSON form.
func ExampleParseScript() {
	s, err := modeltest.ParseScript([]byte(`{
	  "turns": [
	    {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
	    {"status": 429, "error": "Rate limit reached"}
	  ],
	  "chunk_size": 16
	}`))
	if err != nil {
		panic(err)
	}
	m := modeltest.FromScript(s)
	ctx := context.Background()
	req := &model.Request{Messages: []model.Message{model.UserText("go")}}
	resp, _ := model.Collect(ctx, m, req, nil)
	fmt.Println(resp.Message.ToolCalls[0].Name, string(resp.Message.ToolCalls[0].Arguments))
	_, err = model.Collect(ctx, m, req, nil)
	fmt.Println(err)
	// Output:
	// bash {"command": "ls"}
	// model "modeltest" (modeltest): HTTP 429 Too Many Requests: Rate limit reached
}

// The OpenAI-compatible server. A subprocess reaches it through
// srv.Env(): OPENAI_BASE_URL and OPENAI_API_KEY.
func ExampleNewServer() {
	srv := modeltest.NewServer(nil, modeltest.Turn{Text: "Hello from the server."})
	defer srv.Close()

	body := `{"model": "any", "messages": [{"role": "user", "content": "hi"}]}`
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	fmt.Println(out.Choices[0].Message.Content, out.Choices[0].FinishReason)
	fmt.Println(srv.LastRequest().Messages[0].Content)
	// Output:
	// Hello from the server. stop
	// hi
}
