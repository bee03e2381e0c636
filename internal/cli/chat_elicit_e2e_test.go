package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// startElicitMCP serves, over streamable HTTP on 127.0.0.1, the MCP
// server "asker": its tool "signup" asks a form (name required, age an
// optional integer, color an enum with a default) and "link" asks in url
// mode; each answers with the elicitation's result as JSON.
func startElicitMCP(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	answer := func(res *mcp.ElicitResult, err error) (*mcp.CallToolResult, error) {
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicit: " + err.Error()}}}, nil
		}
		b, _ := json.Marshal(res)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "got " + string(b)}}}, nil
	}
	s.AddTool(&mcp.Tool{Name: "signup", Description: "Sign up.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return answer(req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?\x1b[2J", RequestedSchema: map[string]any{
				"type": "object", "required": []any{"name"},
				"properties": map[string]any{
					"name":  map[string]any{"type": "string"},
					"age":   map[string]any{"type": "integer", "minimum": 0, "maximum": 150},
					"color": map[string]any{"type": "string", "enum": []any{"red", "blue"}, "default": "blue"},
				}}}))
		})
	s.AddTool(&mcp.Tool{Name: "link", Description: "Link an account.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return answer(req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Link your account.",
				URL: "https://auth.example.com/link?state=s3cret", ElicitationID: "e1"}))
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// elicitConfig is a config with the scripted model at url and the asker
// server as MCP server "asker".
func elicitConfig(t *testing.T, modelURL string) (cfg, home string) {
	cfg, home = e2eConfig(t, modelURL)
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"asker": map[string]any{"type": "http", "url": startElicitMCP(t)}}})
	writeFile(t, filepath.Dir(cfg), "extensions_config.json", string(ext))
	return cfg, home
}

// toolTexts are the tool messages of a request, in order.
func toolTexts(req *model.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == model.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// capture is a scripted turn that keeps the request it answers.
type capture struct {
	mu  sync.Mutex
	req *model.Request
}

func (c *capture) turn(text string) modeltest.Turn {
	return modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
		c.mu.Lock()
		c.req = req
		c.mu.Unlock()
		return modeltest.Turn{Text: text}
	}}
}

func (c *capture) tools() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.req == nil {
		return nil
	}
	return toolTexts(c.req)
}

// antler chat on a terminal asks an MCP server's elicitation in the
// middle of the turn: the message (its escape sequence dropped), each
// field with its hint and default (a bad answer is asked again), then
// accept; a url-mode request shows the address, opens nothing, and is
// declined here. The server gets exactly those answers and the turn goes
// on to the model's answer.
func TestE2EChat_elicitationAsksTheFormOnTheTerminal(t *testing.T) {
	var last capture
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "asker_signup", `{}`)}},
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c2", "asker_link", `{}`)}},
		last.turn("signed up"))
	cfg, home := elicitConfig(t, srv.URL)
	cmd := antlerCmd(t, "--config", cfg, "--home", home, "chat", "--thread", "t1")
	cmd.Env = append(cmd.Env, "TERM=xterm", "XDG_STATE_HOME="+t.TempDir())
	tty, out, copied := startOnPTY(t, cmd, &pty.Winsize{Rows: 50, Cols: 200})
	defer tty.Close()

	out.expect(t, "> ", 1)
	io.WriteString(tty, "sign me up\r")
	out.expect(t, `MCP server "asker" asks: Who are you?`, 1)
	out.expect(t, "   name: ", 1)
	io.WriteString(tty, "Ada\r")
	out.expect(t, "   age (integer 0..150, optional): ", 1)
	io.WriteString(tty, "old\r")
	out.expect(t, "answer a number", 1)
	out.expect(t, "   age (integer 0..150, optional): ", 2)
	io.WriteString(tty, "36\r")
	out.expect(t, "     2) blue", 1)
	out.expect(t, "   color (1-2, optional) [blue]: ", 1)
	io.WriteString(tty, "\r")
	out.expect(t, "send? [y] accept, [n] decline, [c] cancel: ", 1)
	io.WriteString(tty, "y\r")

	out.expect(t, "https://auth.example.com/link?state=s3cret", 1)
	out.expect(t, "opened it? [y] yes (accept), [n] decline, [c] cancel: ", 1)
	io.WriteString(tty, "n\r")
	out.expect(t, "signed up", 1)
	out.expectAfter(t, "signed up", "> ")
	endChat(t, cmd, tty, out)
	tty.Close()
	<-copied
	got := last.tools()
	want := []string{`got {"action":"accept","content":{"age":36,"color":"blue","name":"Ada"}}`, `got {"action":"decline"}`}
	if len(got) != 2 || !strings.Contains(got[0], want[0]) || !strings.Contains(got[1], want[1]) {
		t.Errorf("the tool results the model saw:\n%q\nwant them to hold\n%q", got, want)
	}
	if strings.Contains(out.String(), "\x1b[2J") {
		t.Error("the server's escape sequence reached the terminal")
	}
}

// antler run has no human: an elicitation is declined at once, with a
// warning line naming the server and its message, and the run goes on.
func TestE2ERun_elicitationIsDeclined(t *testing.T) {
	var last capture
	srv := modeltest.NewServer(t, modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "asker_signup", `{}`)}}, last.turn("ok"))
	cfg, home := elicitConfig(t, srv.URL)
	cmd := antlerCmd(t, "--config", cfg, "--home", home, "run", "--thread", "t1", "sign me up")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		t.Fatalf("run: %v (%v)\n%s", err, ee, stderr.String())
	}
	if got := last.tools(); len(got) != 1 || !strings.Contains(got[0], `got {"action":"decline"}`) {
		t.Errorf("tool results %q, want the declined elicitation", got)
	}
	if s := stderr.String(); !strings.Contains(s, "no human is here to answer: declined") || !strings.Contains(s, "asker") ||
		!strings.Contains(s, "Who are you?") {
		t.Errorf("no warning naming the server and the message:\n%s", s)
	}
}

// antler serve: an MCP server's elicitation reaches the run's stream as
// DeerFlow's clarification card (a form), the stream ends while the call
// waits, and the frontend's answer, the next run request, reaches the
// server and finishes the same run.
func TestE2EServe_elicitationCard(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "asker_signup", `{}`)}},
		modeltest.Turn{Func: echoLast})
	cfg, home := elicitConfig(t, srv.URL)
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()

	stream := postRun(t, url, "t1", map[string]any{"type": "human", "content": "sign me up"})
	for _, want := range []string{`"name":"ask_clarification"`, `"source":"mcp_elicitation"`, `"input_mode":"form"`,
		`"title":"MCP server asker"`} {
		if !strings.Contains(stream, want) {
			t.Errorf("the stream lacks %s:\n%s", want, stream)
		}
	}
	_, rest, ok := strings.Cut(stream, `"request_id":"`)
	requestID, _, _ := strings.Cut(rest, `"`)
	if !ok || !strings.HasPrefix(requestID, "mcp_elicitation:") {
		t.Fatalf("no request id in the card:\n%s", stream)
	}
	value := `name: Ada; age: 36 [values: {"name":"Ada","age":"36"}]`
	answer := map[string]any{"type": "human", "content": `For your clarification "Who are you?", my answer is: ` + value,
		"additional_kwargs": map[string]any{"hide_from_ui": true, "human_input_response": map[string]any{"version": 1,
			"kind": "human_input_response", "source": "mcp_elicitation", "request_id": requestID, "response_kind": "text", "value": value}}}
	stream = postRun(t, url, "t1", answer)
	if want := `saw: got {\"action\":\"accept\",\"content\":{\"age\":36,\"color\":\"blue\",\"name\":\"Ada\"}}`; !strings.Contains(stream, want) {
		t.Errorf("the server did not get the answer (want %s):\n%s", want, stream)
	}
}
