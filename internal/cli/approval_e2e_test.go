package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// approvalConfig is e2eConfig with a tool_policy that asks before every
// write_file call.
func approvalConfig(t *testing.T, url string) (cfg, home string) {
	dir := t.TempDir()
	cfg = writeFile(t, dir, "config.yaml", `models:
  - name: test
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: `+url+`
tools:
  - {name: write_file, group: file:write, use: deerflow.sandbox.tools:write_file_tool}
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
tool_policy:
  rules:
    - {action: ask, tool: write_file, reason: "writes need a look"}
`)
	return cfg, filepath.Join(dir, "home")
}

func outputFile(home, thread, name string) string {
	return filepath.Join(home, "users", "default", "threads", thread, "user-data", "outputs", name)
}

func writeCall(id, name string) model.ToolCall {
	return toolCall(id, "write_file", `{"description":"save","path":"/mnt/user-data/outputs/`+name+`","content":"hi"}`)
}

// echoLast answers with the content of the last message it was sent.
func echoLast(req *model.Request) modeltest.Turn {
	return modeltest.Turn{Text: "saw: " + modeltest.LastMessage(req).Content}
}

func finalAnswer(t *testing.T, out string) string {
	t.Helper()
	var final string
	for _, ev := range parseEvents(t, out) {
		if ev.Type == "message" && ev.Message != nil && ev.Message.Role == model.RoleAssistant {
			final = ev.Message.Content
		}
	}
	return final
}

// antler run: a call the policy asks about stops the run with an
// approval event and exit code 3; --approve on the thread runs it,
// --reject does not and hands the model the reason.
func TestE2EApproval_runStopsAndTheNextRunAnswers(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("c1", "a.txt")}},
		modeltest.Turn{Func: echoLast},
		modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("c2", "b.txt")}},
		modeltest.Turn{Func: echoLast})
	cfg, home := approvalConfig(t, srv.URL)
	run := func(args ...string) (int, string, string) {
		return antlerProcess(t, append([]string{"--config", cfg, "--home", home, "run", "--json"}, args...)...)
	}

	code, out, errOut := run("--thread", "t1", "save a")
	if code != exitApproval {
		t.Fatalf("exit %d, want %d: %s", code, exitApproval, errOut)
	}
	var approval *jsonEvent
	evs := parseEvents(t, out)
	for i := range evs {
		if evs[i].Type == "approval" {
			approval = &evs[i]
		}
	}
	if approval == nil || approval.Name != "write_file" || evs[len(evs)-1].Reason != "approval" {
		t.Fatalf("no approval event naming write_file: %s", out)
	}
	if !strings.Contains(errOut, "write_file (call c1) waits for approval") || !strings.Contains(errOut, "--approve") {
		t.Errorf("stderr does not say how to answer: %s", errOut)
	}
	if _, err := os.Stat(outputFile(home, "t1", "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file was written before the approval: %v", err)
	}
	if code, _, errOut := run("--thread", "t1", "--approve", "extra prompt"); code != 2 {
		t.Errorf("--approve with a prompt: exit %d, want 2 (%s)", code, errOut)
	}
	if code, _, errOut := run("--thread", "t9", "--approve"); code != 2 || !strings.Contains(errOut, "no tool call on this thread waits for approval") {
		t.Errorf("--approve on a thread that waits for nothing: exit %d, want 2 (%s)", code, errOut)
	}

	code, out, errOut = run("--thread", "t1", "--approve")
	if code != 0 {
		t.Fatalf("--approve: exit %d: %s", code, errOut)
	}
	if data, err := os.ReadFile(outputFile(home, "t1", "a.txt")); err != nil || string(data) != "hi" {
		t.Errorf("approved file: %q %v", data, err)
	}
	if got := finalAnswer(t, out); got != "saw: OK" {
		t.Errorf("the model did not read the tool's result: %q", got)
	}

	if code, _, errOut := run("--thread", "t2", "save b"); code != exitApproval {
		t.Fatalf("second thread: exit %d: %s", code, errOut)
	}
	code, out, errOut = run("--thread", "t2", "--reject", "not that file")
	if code != 0 {
		t.Fatalf("--reject: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(outputFile(home, "t2", "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a rejected call wrote its file: %v", err)
	}
	if got := finalAnswer(t, out); got != "saw: Error: the user rejected this call to write_file; it did not run. The user's reason: not that file" {
		t.Errorf("the model's view of the rejection: %q", got)
	}
}

// ptyOutput collects what the CLI writes to its terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (p *ptyOutput) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *ptyOutput) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

// startOnPTY starts cmd on a new terminal of size (nil: the default)
// and copies what it writes there into out until the terminal closes,
// when copied is closed.
func startOnPTY(t *testing.T, cmd *exec.Cmd, size *pty.Winsize) (tty *os.File, out *ptyOutput, copied <-chan struct{}) {
	t.Helper()
	tty, err := pty.StartWithSize(cmd, size)
	if err != nil {
		t.Fatal(err)
	}
	out = &ptyOutput{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(out, tty)
	}()
	return tty, out, done
}

// expectAfter waits until the output holds then after the first mark: a
// prompt drawn after a message means the line editor has the terminal
// again (keys sent before it reach a terminal in its ordinary mode, where
// Ctrl-C is a signal).
func (p *ptyOutput) expectAfter(t *testing.T, mark, then string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := p.String()
		if i := strings.Index(s, mark); i >= 0 && strings.Contains(s[i+len(mark):], then) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q after %q on the terminal:\n%s", then, mark, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expect waits until the output holds want n times (the CLI is a real
// process: its answers take their time); it fails after a generous bound.
func (p *ptyOutput) expect(t *testing.T, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(p.String(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %q (x%d) on the terminal:\n%s", want, n, p.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// antler chat on a terminal: the inline prompt approves one write_file
// and rejects the next with a reason, and the turn goes on each time.
func TestE2EApproval_chatAsksInlineOnATerminal(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("c1", "a.txt")}},
		modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("c2", "b.txt")}},
		modeltest.Turn{Func: echoLast})
	cfg, home := approvalConfig(t, srv.URL)
	cmd := antlerCmd(t, "--config", cfg, "--home", home, "chat", "--thread", "t1")
	tty, out, copied := startOnPTY(t, cmd, nil)
	defer tty.Close()
	out.expect(t, "> ", 1)
	io.WriteString(tty, "save two files\n")
	out.expect(t, "approve? [y] once", 1)
	if !strings.Contains(out.String(), "write_file needs your approval") {
		t.Errorf("the card does not name the call:\n%s", out.String())
	}
	io.WriteString(tty, "y\n")
	out.expect(t, "approve? [y] once", 2)
	if data, err := os.ReadFile(outputFile(home, "t1", "a.txt")); err != nil || string(data) != "hi" {
		t.Errorf("approved file: %q %v", data, err)
	}
	io.WriteString(tty, "n not that one\n")
	out.expect(t, "saw: Error: the user rejected this call to write_file; it did not run. The user's reason: not that one", 1)
	// "> " may occur in the card itself: wait for the prompt drawn after
	// the answer, or Ctrl-D reaches a terminal in its ordinary mode.
	out.expectAfter(t, "saw: Error:", "> ")
	if _, err := os.Stat(outputFile(home, "t1", "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a rejected call wrote its file: %v", err)
	}
	endChat(t, cmd, tty, out)
	tty.Close()
	<-copied
}

// endChat sends Ctrl-D and waits a bounded time for chat to exit; a chat
// that does not end is killed and the test fails with its terminal.
func endChat(t *testing.T, cmd *exec.Cmd, tty *os.File, out *ptyOutput) {
	t.Helper()
	io.WriteString(tty, "\x04") // Ctrl-D ends the chat
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("chat: %v\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("chat did not end on Ctrl-D:\n%s", out.String())
	}
}

// postRun streams one run of `antler serve` and returns the whole stream.
func postRun(t *testing.T, url, thread string, message map[string]any) string {
	t.Helper()
	return postRunWith(t, url, thread, message, nil)
}

// postRunWith is postRun with a run context (nil: none).
func postRunWith(t *testing.T, url, thread string, message, runContext map[string]any) string {
	t.Helper()
	req := map[string]any{"input": map[string]any{"messages": []any{message}}, "stream_mode": []string{"values", "messages-tuple"}}
	if runContext != nil {
		req["context"] = runContext
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(url+"/api/langgraph/threads/"+thread+"/runs/stream", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("runs/stream: %d %s", resp.StatusCode, data)
	}
	return string(data)
}

// cardAnswer is the hidden message DeerFlow's frontend sends for a card.
func cardAnswer(requestID, value string) map[string]any {
	return map[string]any{"type": "human", "content": `For your clarification "Allow write_file to run?", my answer is: ` + value,
		"additional_kwargs": map[string]any{"hide_from_ui": true, "human_input_response": map[string]any{"version": 1,
			"kind": "human_input_response", "source": "tool_approval", "request_id": requestID, "response_kind": "text", "value": value}}}
}

// antler serve: the ask shows DeerFlow's clarification card in the
// stream; the frontend's "approve" in the next run writes the file, its
// "reject" does not and the model reads the reason.
func TestE2EApproval_serveCardAndAnswers(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("c1", "a.txt")}},
		modeltest.Turn{Func: echoLast},
		modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("c2", "b.txt")}},
		modeltest.Turn{Func: echoLast})
	cfg, home := approvalConfig(t, srv.URL)
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()
	human := func(text string) map[string]any { return map[string]any{"type": "human", "content": text} }

	stream := postRun(t, url, "t1", human("save a"))
	for _, want := range []string{`"name":"ask_clarification"`, `"id":"approval:c1"`, `"kind":"human_input_request"`,
		`"source":"tool_approval"`, `"value":"approve for this thread"`, "writes need a look"} {
		if !strings.Contains(stream, want) {
			t.Errorf("the stream lacks %s", want)
		}
	}
	if _, err := os.Stat(outputFile(home, "t1", "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file was written before the approval: %v", err)
	}
	stream = postRun(t, url, "t1", cardAnswer("approval:c1", "approve"))
	if data, err := os.ReadFile(outputFile(home, "t1", "a.txt")); err != nil || string(data) != "hi" {
		t.Errorf("approved file: %q %v\n%s", data, err, stream)
	}

	postRun(t, url, "t2", human("save b"))
	stream = postRun(t, url, "t2", cardAnswer("approval:c2", "reject: not that file"))
	if _, err := os.Stat(outputFile(home, "t2", "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a rejected call wrote its file: %v", err)
	}
	if !strings.Contains(stream, "saw: Error: the user rejected this call to write_file; it did not run. The user's reason: not that file") {
		t.Errorf("the model did not read the reason:\n%s", stream)
	}
}

// antler tools call: the operator's own call is not asked about, but a
// deny rule of the tool policy refuses it.
func TestApproval_toolsCallHonoursDenyAndSkipsAsk(t *testing.T) {
	tests := []struct {
		name, rule, want string
		code             int
		written          bool
	}{
		{"ask runs: the operator made the call", "{action: ask, tool: write_file}", "OK", 0, true},
		{"deny refuses", `{action: deny, tool: write_file, reason: "read-only here"}`,
			"Error: the tool policy does not allow this call to write_file (tool_policy.rules[0]: read-only here)", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeFile(t, dir, "config.yaml", `tools:
  - {name: write_file, group: file:write, use: deerflow.sandbox.tools:write_file_tool}
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
tool_policy:
  rules:
    - `+tt.rule+"\n")
			home := filepath.Join(dir, "home")
			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "tools", "call", "write_file", "--thread", "t1",
				"--args", `{"description":"save","path":"/mnt/user-data/outputs/a.txt","content":"hi"}`)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d (want %d), output %q %q", code, tt.code, out, errOut)
			}
			if _, err := os.Stat(outputFile(home, "t1", "a.txt")); (err == nil) != tt.written {
				t.Errorf("file written: %v, want %v", err == nil, tt.written)
			}
		})
	}
}
