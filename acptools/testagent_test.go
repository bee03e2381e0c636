package acptools

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

func echoAgent(t *testing.T) config.ACPAgent {
	return config.ACPAgent{Command: testAgentBin(t), Args: []string{"echo"}, Description: "echoes"}
}

func TestEchoCollectsMessageTextWithoutThoughts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	res := h.run(t, echoAgent(t), "hello there")
	want := "echo: hello there\ncwd=/mnt/acp-workspace"
	if got := resultText(res); got != want || res.IsError {
		t.Errorf("result = %q (error %v), want %q", got, res.IsError, want)
	}
	assertGone(t, h.started()...)
}

func TestEmptyOutputIsNoResponse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	res := h.run(t, config.ACPAgent{Command: testAgentBin(t), Args: []string{"empty"}}, "x")
	if got := resultText(res); got != "(no response)" || res.IsError {
		t.Errorf("result = %q, want (no response)", got)
	}
}

func TestUnknownAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	agents := map[string]config.ACPAgent{"codex": {Command: "x"}, "claude": {Command: "y"}}
	res, err := h.call(t, t.Context(), nil, agents, "gemini", "hi")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resultText(res), "Error: Unknown agent 'gemini'. Available: claude, codex"; got != want || !res.IsError {
		t.Errorf("result = %q, want %q", got, want)
	}
}

func TestCrashingAgentReportsExitAndStderr(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	res := h.run(t, config.ACPAgent{Command: testAgentBin(t), Args: []string{"crash"}}, "x")
	got := resultText(res)
	for _, want := range []string{"Error invoking ACP agent 'a': initialize failed:", "(agent exited with status 3)", "agent stderr: testagent: fatal: cannot start"} {
		if !strings.Contains(got, want) {
			t.Errorf("result %q lacks %q", got, want)
		}
	}
	if !res.IsError {
		t.Error("IsError not set")
	}
}

// The enabled MCP servers reach session/new in ACP
// list form; an invalid configuration sends [] and the call proceeds.
func TestMCPServersOnTheWire(t *testing.T) {
	t.Parallel()
	good := func() (*config.Extensions, error) {
		return config.ParseExtensions("extensions_config.json", []byte(`{"mcpServers": {
			"fs": {"command": "npx", "args": ["-y", "server-filesystem"], "env": {"B": "2", "A": "1"}},
			"web": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer t"}},
			"old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
			"off": {"command": "nope", "enabled": false}
		}}`), nil)
	}
	bad := func() (*config.Extensions, error) {
		return config.ParseExtensions("extensions_config.json", []byte(`{"mcpServers": {
			"fs": {"command": "npx"},
			"broken": {"type": "http"}
		}}`), nil)
	}
	unreadable := func() (*config.Extensions, error) { return nil, os.ErrPermission }
	tests := []struct {
		name string
		ext  func() (*config.Extensions, error)
		want string
	}{
		{"enabled servers", good, `[` +
			`{"args":["-y","server-filesystem"],"command":"npx","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"name":"fs"},` +
			`{"headers":[],"name":"old","type":"sse","url":"http://127.0.0.1:1/sse"},` +
			`{"headers":[{"name":"Authorization","value":"Bearer t"}],"name":"web","type":"http","url":"http://127.0.0.1:1/mcp"}]`},
		{"invalid server empties the list", bad, `[]`},
		{"unreadable extensions", unreadable, `[]`},
		{"no extensions", nil, `[]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOptions{ext: tc.ext})
			res := h.run(t, echoAgent(t), "go")
			if !strings.HasPrefix(resultText(res), "echo: go") {
				t.Fatalf("call did not proceed: %q", resultText(res))
			}
			params := wireParams(t, h.workspace(t, "u1", "t1"), "session/new")
			var got struct {
				MCPServers json.RawMessage `json:"mcpServers"`
			}
			if err := json.Unmarshal(params, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canonJSON(t, tc.want), canonJSON(t, string(got.MCPServers))); diff != "" {
				t.Errorf("mcpServers (-want +got):\n%s", diff)
			}
		})
	}
}

// canonJSON decodes s so that key order does not matter, keeping list
// order.
func canonJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return v
}

// wireParams returns the params of the first request for method that the
// test agent received (it records its stdin in wire.jsonl).
func wireParams(t *testing.T, dir, method string) json.RawMessage {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "wire.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == method {
			return m.Params
		}
	}
	t.Fatalf("no %s request in wire.jsonl", method)
	return nil
}

// Over the protocol: auto-approve prefers
// allow_once, then allow_always; without one, or when disabled, the
// request is cancelled (denied).
func TestPermissionPolicyOverACP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		options     string
		autoApprove bool
		want        string
	}{
		{"prefers allow_once", "reject_once:r1,allow_always:aa,allow_once:ao", true, "selected:ao"},
		{"falls back to allow_always", "reject_always:ra,allow_always:aa", true, "selected:aa"},
		{"no allow option", "reject_once:r1,reject_always:ra", true, "cancelled"},
		{"no options", "", true, "cancelled"},
		{"disabled", "allow_once:ao,allow_always:aa", false, "cancelled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOptions{})
			a := config.ACPAgent{Command: testAgentBin(t), Args: []string{"permission", tc.options}, AutoApprovePermissions: tc.autoApprove}
			if got := resultText(h.run(t, a, "edit")); got != tc.want {
				t.Errorf("result = %q, want %q", got, tc.want)
			}
		})
	}
}

// One workspace per thread (created, used as the
// process's cwd and the session cwd), the global one for a missing or
// invalid thread id; either is shown to the model as /mnt/acp-workspace,
// never as a host path.
func TestWorkspacePerThreadAndGlobalFallback(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	tests := []struct {
		name       string
		call       *tool.Call
		wantDir    string
		wantResult string
	}{
		{"thread", &tool.Call{ThreadID: "t-42", UserID: "alice"},
			filepath.Join(h.home, "users", "alice", "threads", "t-42", "acp-workspace"), "cwd=/mnt/acp-workspace"},
		{"default user", &tool.Call{ThreadID: "t-43"},
			filepath.Join(h.home, "users", "default", "threads", "t-43", "acp-workspace"), "cwd=/mnt/acp-workspace"},
		{"missing thread", &tool.Call{UserID: "alice"},
			filepath.Join(h.home, "acp-workspace"), "cwd=/mnt/acp-workspace"},
		{"invalid thread", &tool.Call{ThreadID: "../../etc", UserID: "alice"},
			filepath.Join(h.home, "acp-workspace"), "cwd=/mnt/acp-workspace"},
		{"nil call", nil, filepath.Join(h.home, "acp-workspace"), "cwd=/mnt/acp-workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Sequential: the global fallback workspace is shared.
			call := tc.call
			if call == nil {
				call = &tool.Call{}
			}
			if tc.call == nil {
				res, err := h.inv.Invoke(t.Context(), nil, "a", withTimeout(echoAgent(t)), "x")
				if err != nil {
					t.Fatal(err)
				}
				checkWorkspace(t, tc.wantDir, tc.wantResult, resultText(res))
				return
			}
			res, err := h.call(t, t.Context(), call, map[string]config.ACPAgent{"a": withTimeout(echoAgent(t))}, "a", "x")
			if err != nil {
				t.Fatal(err)
			}
			checkWorkspace(t, tc.wantDir, tc.wantResult, resultText(res))
		})
	}
}

func withTimeout(a config.ACPAgent) config.ACPAgent {
	a.TimeoutSeconds = 60
	return a
}

func checkWorkspace(t *testing.T, wantDir, wantResultSuffix, got string) {
	t.Helper()
	if !strings.HasSuffix(got, wantResultSuffix) {
		t.Errorf("result = %q, want suffix %q", got, wantResultSuffix)
	}
	rep := readReport(t, wantDir)
	if rep.Getwd != wantDir {
		t.Errorf("agent cwd = %q, want %q", rep.Getwd, wantDir)
	}
	params := wireParams(t, wantDir, "session/new")
	var p struct{ Cwd string }
	_ = json.Unmarshal(params, &p)
	if p.Cwd != wantDir {
		t.Errorf("session/new cwd = %q, want %q", p.Cwd, wantDir)
	}
}

type report struct {
	Getwd string   `json:"getwd"`
	Env   []string `json:"env"`
	Pid   int      `json:"pid"`
}

func readReport(t *testing.T, dir string) report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Configured env values reach the agent, $VAR
// resolved from the host (a missing one becomes ""); without env the
// agent gets only the inherited defaults. Host secrets never leak.
func TestEnvPassthrough(t *testing.T) {
	t.Parallel()
	hostEnv := []string{"PATH=/usr/bin:/bin", "HOME=/home/alice", "USER=alice", "TERM=()fn", "SECRET_TOKEN=hunter2", "ACP_KEY=k-123"}
	lookup := func(name string) (string, bool) {
		for _, kv := range hostEnv {
			if k, v, _ := strings.Cut(kv, "="); k == name {
				return v, true
			}
		}
		return "", false
	}
	yaml := `acp_agents:
  withenv:
    command: ` + strconv.Quote(testAgentBin(t)) + `
    args: [echo]
    description: with env
    env:
      API_KEY: $ACP_KEY
      MISSING: $NOT_SET_ANYWHERE
      LITERAL: plain
      PATH: /opt/agent/bin
  noenv:
    command: ` + strconv.Quote(testAgentBin(t)) + `
    args: [echo]
    description: without env
`
	cfg, err := config.Parse("config.yaml", []byte(yaml), lookup)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent string
		want  []string
	}{
		{"withenv", []string{"API_KEY=k-123", "HOME=/home/alice", "LITERAL=plain", "MISSING=", "PATH=/opt/agent/bin", "USER=alice"}},
		{"noenv", []string{"HOME=/home/alice", "PATH=/usr/bin:/bin", "USER=alice"}},
	}
	for _, tc := range tests {
		t.Run(tc.agent, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOptions{environ: func() []string { return hostEnv }})
			res, err := h.inv.Invoke(t.Context(), &tool.Call{ThreadID: "t1", UserID: "u1"}, tc.agent, cfg.ACPAgents[tc.agent], "x")
			if err != nil || res.IsError {
				t.Fatalf("invoke: %v %q", err, resultText(res))
			}
			got := readReport(t, h.workspace(t, "u1", "t1")).Env
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("agent environment (-want +got):\n%s", diff)
			}
		})
	}
}

// A hung agent is killed at the timeout, with its
// whole process group, and the reference's text is returned.
func TestHungAgentTimesOutAndGroupIsKilled(t *testing.T) {
	t.Parallel()
	const want = "Error: ACP agent 'a' timed out after 1 seconds without responding. The agent subprocess has been terminated. " +
		"If this agent handles long-running tasks, increase acp_agents.a.timeout_seconds in config.yaml."
	for _, mode := range []string{"hang", "hang-init"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOptions{})
			start := time.Now()
			res := h.run(t, config.ACPAgent{Command: testAgentBin(t), Args: []string{mode}, TimeoutSeconds: 1}, "x")
			if got := resultText(res); got != want || !res.IsError {
				t.Errorf("result = %q, want %q", got, want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("call took %v", d)
			}
			pids := h.started()
			if mode == "hang" {
				data, err := os.ReadFile(filepath.Join(h.workspace(t, "u1", "t1"), "pids.txt"))
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range strings.Fields(string(data)) {
					pid, _ := strconv.Atoi(f)
					pids = append(pids, pid)
				}
				if len(pids) != 3 { // leader seen by onStart, leader and grandchild from the file
					t.Fatalf("pids = %v", pids)
				}
			}
			assertGone(t, pids...)
		})
	}
}

// A missing executable gets DeerFlow's message
// and hints (generic, codex, mcode).
func TestMissingExecutableMessages(t *testing.T) {
	// Not parallel: the codex case puts a fake codex on PATH.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	h := newHarness(t, harnessOptions{})
	tests := []struct {
		agent, command, want string
	}{
		{"claude", "claude-agent-acp-missing",
			"Error invoking ACP agent 'claude': Command 'claude-agent-acp-missing' was not found on PATH. Install the agent binary or update `acp_agents.claude.command` in config.yaml."},
		{"codex", "codex-acp",
			"Error invoking ACP agent 'codex': Command 'codex-acp' was not found on PATH. The installed `codex` CLI does not speak ACP directly. Install a Codex ACP adapter (for example `npx @zed-industries/codex-acp`) or update `acp_agents.codex.command` and `args` in config.yaml."},
		{"mcode", "mcode",
			"Error invoking ACP agent 'mcode': Command 'mcode' was not found on PATH. Install it with `npm install --global @minimax-ai/code`, run `mcode login`, and restart Antler so it inherits the updated PATH. If Antler runs in a container, ensure `mcode` is installed and authenticated inside it."},
		{"abs", "/nonexistent/dir/agent",
			"Error invoking ACP agent 'abs': Command '/nonexistent/dir/agent' was not found on PATH. Install the agent binary or update `acp_agents.abs.command` in config.yaml."},
	}
	for _, tc := range tests {
		t.Run(tc.agent, func(t *testing.T) {
			res, err := h.call(t, t.Context(), nil, map[string]config.ACPAgent{tc.agent: {Command: tc.command}}, tc.agent, "x")
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(res); got != tc.want || !res.IsError {
				t.Errorf("result:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The agent's fs/* requests are served inside its workspace only.
func TestFSRequestsConfinedToWorkspace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	tp, err := h.layout.EnsureThreadDirs("u1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	ws := tp.ACPWorkspace
	outside := filepath.Dir(ws)
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(ws, "input.txt"), []byte("one\ntwo\nthree\nfour\n"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link-out")))
	must(t, os.Symlink(outside, filepath.Join(ws, "dir-out")))

	res := h.run(t, config.ACPAgent{Command: testAgentBin(t), Args: []string{"fs"}}, "x")
	want := strings.Join([]string{
		`write-inside: ok ""`,
		`read-back: ok "written by the agent\n"`,
		`read-lines: ok "two\nthree\n"`,
		`read-missing: error -32002`,
		`read-outside: error -32602`,
		`read-dotdot: error -32602`,
		`read-symlink: error -32602`,
		`read-relative: error -32602`,
		`write-outside: error -32602`,
		`write-symlink-dir: error -32602`,
	}, "\n")
	if diff := cmp.Diff(want, resultText(res)); diff != "" {
		t.Errorf("fs steps (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(filepath.Join(ws, "out", "result.txt"))
	if err != nil || string(data) != "written by the agent\n" {
		t.Errorf("result.txt = %q, %v", data, err)
	}
	for _, p := range []string{filepath.Join(outside, "escape.txt")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused write", p)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "out"))
	if len(entries) != 1 {
		t.Errorf("out/ holds %d entries, want only result.txt (no temp files)", len(entries))
	}
	if !h.logs.contains("ACP agent read refused", "secret.txt") {
		t.Errorf("refused read not logged:\n%s", h.logs)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A call cancelled by its caller returns the context's error and leaves
// no process behind.
func TestCancelledCallKillsAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	_, err := h.call(t, ctx, nil, map[string]config.ACPAgent{"a": {Command: testAgentBin(t), Args: []string{"hang"}, TimeoutSeconds: 60}}, "a", "x")
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertGone(t, h.started()...)
}

// initialize carries Antler's client info and the fs capabilities;
// session/new carries the configured model in _meta, as DeerFlow's Python
// client sends extra session arguments.
func TestInitializeAndSessionWire(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := echoAgent(t)
	a.Model = new("gpt-5-codex")
	h.run(t, a, "x")
	dir := h.workspace(t, "u1", "t1")
	var init struct {
		ProtocolVersion    int `json:"protocolVersion"`
		ClientCapabilities struct {
			Fs       map[string]bool `json:"fs"`
			Terminal bool            `json:"terminal"`
		} `json:"clientCapabilities"`
		ClientInfo struct{ Name, Title string } `json:"clientInfo"`
	}
	must(t, json.Unmarshal(wireParams(t, dir, "initialize"), &init))
	if init.ProtocolVersion != 1 || !init.ClientCapabilities.Fs["readTextFile"] || !init.ClientCapabilities.Fs["writeTextFile"] ||
		init.ClientCapabilities.Terminal || init.ClientInfo.Name != "antler" {
		t.Errorf("initialize params = %+v", init)
	}
	var sess struct {
		Meta map[string]string `json:"_meta"`
	}
	must(t, json.Unmarshal(wireParams(t, dir, "session/new"), &sess))
	if sess.Meta["model"] != "gpt-5-codex" {
		t.Errorf("session/new _meta = %v", sess.Meta)
	}
}
