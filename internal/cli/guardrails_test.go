package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// DeerFlow's example section (backend/docs/GUARDRAILS.md, option 1).
const deerFlowGuardrails = `guardrails:
  enabled: true
  provider:
    use: deerflow.guardrails.builtin:AllowlistProvider
    config:
      denied_tools: ["write_file"]
`

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// toolMessage returns the tool message answering call id in the model's
// requests ("" if none).
func toolMessage(reqs []*model.Request, id string) *model.Message {
	for _, r := range reqs {
		for i := range r.Messages {
			if m := &r.Messages[i]; m.Role == model.RoleTool && m.ToolCallID == id {
				return m
			}
		}
	}
	return nil
}

const writeFileDenied = "Guardrail denied: tool 'write_file' was blocked (oap.tool_not_allowed). " +
	"Reason: tool 'write_file' is denied. Choose an alternative approach."

// `antler run` with DeerFlow's example config: write_file never runs and
// the model receives the deny as an error tool message.
func TestGuardrails_runDeniesWriteFileAndTheModelReadsWhy(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("w1", "write_file",
			`{"description":"save","path":"/mnt/user-data/outputs/a.txt","content":"hi"}`)}},
		modeltest.Turn{Text: "I may not write files"})
	cfg, home := e2eConfig(t, srv.URL)
	appendFile(t, cfg, deerFlowGuardrails)
	code, out, errOut := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "save hi")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if msg := toolMessage(srv.Requests(), "w1"); msg == nil || msg.Content != writeFileDenied {
		t.Fatalf("tool message the model read: %+v", msg)
	}
	// The thread's tool message is an error one (DeerFlow's status="error").
	var status string
	for _, ev := range parseEvents(t, out) {
		if ev.Type == "tool_end" && ev.Message != nil && ev.Message.ToolCallID == "w1" {
			status = ev.Message.Status
		}
	}
	if status != "error" {
		t.Errorf("tool message status %q, want error\n%s", status, out)
	}
	if _, err := os.Stat(filepath.Join(home, "users", "default", "threads", "t1", "user-data", "outputs", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("write_file ran: stat err %v", err)
	}
}

// `antler tools call` evaluates the call too: the deny is printed as an
// error result (exit 1) and the tool does not run.
func TestGuardrails_toolsCallPrintsTheDeny(t *testing.T) {
	cfg, home := e2eConfig(t, "http://127.0.0.1:1/v1")
	appendFile(t, cfg, deerFlowGuardrails)
	code, out, _ := runCLI(t, nil, "--config", cfg, "--home", home, "tools", "call", "write_file", "--thread", "t1",
		"--args", `{"description":"save","path":"/mnt/user-data/outputs/a.txt","content":"hi"}`)
	if code != 1 || strings.TrimSpace(out) != writeFileDenied {
		t.Errorf("exit %d, out %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(home, "users", "default", "threads", "t1", "user-data", "outputs", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("write_file ran: stat err %v", err)
	}
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "tools", "call", "read_file", "--thread", "t1",
		"--args", `{"description":"look","path":"/mnt/user-data/outputs/none.txt"}`)
	if strings.Contains(out, "Guardrail denied") {
		t.Errorf("read_file denied: exit %d, out %q %s", code, out, errOut)
	}
}

// A provider use string naming a Python class Antler does not have stops
// every command with exit 2, naming file, line and key.
func TestGuardrails_unknownProviderIsAConfigError(t *testing.T) {
	cfg, home := e2eConfig(t, "http://127.0.0.1:1/v1")
	before, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	useLine := strings.Count(string(before), "\n") + 4
	appendFile(t, cfg, "guardrails:\n  enabled: true\n  provider:\n    use: aport_guardrails.providers.generic:OAPGuardrailProvider\n")
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "tools", "list")
	if want := fmt.Sprintf("config.yaml:%d: guardrails.provider.use: unknown guardrail provider", useLine); code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// recordMCPCall appends name to the file ANTLER_CLI_TEST_MCP_CALLS names,
// so that a test knows which calls reached the fake MCP server.
func recordMCPCall(name string) {
	if log := os.Getenv("ANTLER_CLI_TEST_MCP_CALLS"); log != "" {
		if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.WriteString(name + "\n")
			f.Close()
		}
	}
}

// A denied MCP tool never reaches its server, while an allowed one of the
// same server does; the model reads the deny.
func TestGuardrails_deniedMCPToolNeverRuns(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{
			toolCall("m1", "fake_get_weather", `{"city":"Oslo"}`),
			toolCall("m2", "fake_list_issues", `{"repo":"a/b"}`)}},
		modeltest.Turn{Text: "done"})
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.log")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": exe, "env": map[string]string{"ANTLER_CLI_TEST_MCP_SERVER": "1", "ANTLER_CLI_TEST_MCP_CALLS": calls}},
	}})
	writeFile(t, dir, "extensions_config.json", string(ext))
	cfg := writeFile(t, dir, "config.yaml", "models:\n  - {name: m, use: langchain_openai:ChatOpenAI, model: x, api_key: k, base_url: "+srv.URL+"}\n"+
		"sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n"+
		"guardrails:\n  enabled: true\n  provider:\n    use: deerflow.guardrails.builtin:AllowlistProvider\n    config: {denied_tools: [fake_get_weather]}\n")
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "run", "weather and issues")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, _ := os.ReadFile(calls)
	if got := strings.Fields(string(data)); !slices.Equal(got, []string{"list_issues"}) {
		t.Errorf("calls that reached the MCP server: %v, want only list_issues", got)
	}
	reqs := srv.Requests()
	if m := toolMessage(reqs, "m1"); m == nil || !strings.HasPrefix(m.Content, "Guardrail denied: tool 'fake_get_weather' was blocked (oap.tool_not_allowed)") {
		t.Errorf("denied call's tool message %+v", m)
	}
	if m := toolMessage(reqs, "m2"); m == nil || m.Content != "no issues in a/b" {
		t.Errorf("allowed call's tool message %+v", m)
	}
}

// A subagent's call is evaluated with is_subagent set: an antler:command
// provider that denies write_file to subagents only stops the subagent's
// write, which never runs, and the subagent's model reads the deny.
func TestGuardrails_deniedSubagentCallNeverRuns(t *testing.T) {
	var subReqs []*model.Request
	answer := func(req *model.Request) modeltest.Turn {
		isLead := slices.ContainsFunc(req.Tools, func(d model.ToolDefinition) bool { return d.Name == "task" })
		last := req.Messages[len(req.Messages)-1]
		switch {
		case !isLead && last.Role == model.RoleUser:
			return modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("s1", "write_file",
				`{"description":"save","path":"/mnt/user-data/outputs/sub.txt","content":"hi"}`)}}
		case !isLead:
			subReqs = append(subReqs, req)
			return modeltest.Turn{Text: "subagent: " + last.Content}
		case last.Role == model.RoleUser:
			return modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("t1", "task",
				`{"description":"save a file","prompt":"save hi","subagent_type":"general-purpose"}`)}}
		default:
			return modeltest.Turn{Text: "lead saw: " + last.Content}
		}
	}
	server := modeltest.NewScriptServer(t, modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: answer}}}})
	cfg, home := e2eConfig(t, server.URL)
	dir := filepath.Dir(cfg)
	seen := filepath.Join(dir, "requests.jsonl")
	writeFile(t, dir, "policy.sh", `#!/bin/sh
req=$(cat)
printf '%s\n' "$req" >> "$SEEN"
case "$req" in
  *'"tool_name":"write_file"'*'"is_subagent":true'*)
    echo '{"allow":false,"reasons":[{"code":"oap.tool_not_allowed","message":"subagents may not write"}],"policy_id":"sub.v1"}' ;;
  *) echo '{"allow":true,"reasons":[{"code":"oap.allowed"}]}' ;;
esac
`)
	appendFile(t, cfg, "guardrails:\n  enabled: true\n  provider:\n    use: antler:command\n    config:\n"+
		"      command: [./policy.sh]\n      timeout: 30\n      env: {SEEN: "+seen+"}\n")
	code, out, errOut := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--subagents", "--thread", "t1", "save via a subagent")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if _, err := os.Stat(filepath.Join(home, "users", "default", "threads", "t1", "user-data", "outputs", "sub.txt")); !os.IsNotExist(err) {
		t.Errorf("the subagent's write_file ran: stat err %v", err)
	}
	m := toolMessage(subReqs, "s1")
	want := "Guardrail denied: tool 'write_file' was blocked (oap.tool_not_allowed). Reason: subagents may not write. Choose an alternative approach."
	if m == nil || m.Content != want {
		t.Errorf("subagent's tool message %+v", m)
	}
	data, _ := os.ReadFile(seen)
	var tools []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			ToolName   string `json:"tool_name"`
			IsSubagent bool   `json:"is_subagent"`
			ThreadID   string `json:"thread_id"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("request %q: %v", line, err)
		}
		tools = append(tools, r.ToolName+":"+map[bool]string{true: "subagent", false: "lead"}[r.IsSubagent]+":"+r.ThreadID)
	}
	if !slices.Equal(tools, []string{"task:lead:t1", "write_file:subagent:t1"}) {
		t.Errorf("requests the provider saw: %v", tools)
	}
}

// Through `antler serve` (DeerFlow's frontend path): the deny is the
// tool message of the stream and the model reads it; the file is not
// written.
func TestGuardrails_serveRunStreamsTheDeny(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("w1", "write_file",
			`{"description":"save","path":"/mnt/user-data/outputs/a.txt","content":"hi"}`)}},
		modeltest.Turn{Text: "I may not write files"})
	cfg, home := e2eConfig(t, srv.URL)
	appendFile(t, cfg, deerFlowGuardrails)
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()
	body := `{"input":{"messages":[{"type":"human","content":"save hi"}]},"stream_mode":["values"]}`
	resp, err := http.Post(url+"/api/langgraph/threads/t1/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(data), `"content":"`+writeFileDenied+`"`) || !strings.Contains(string(data), `"status":"error"`) {
		t.Errorf("stream lacks the error tool message:\n%s", data)
	}
	if m := toolMessage(srv.Requests(), "w1"); m == nil || m.Content != writeFileDenied {
		t.Errorf("tool message the model read: %+v", m)
	}
	if _, err := os.Stat(filepath.Join(home, "users", "default", "threads", "t1", "user-data", "outputs", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("write_file ran: stat err %v", err)
	}
}
