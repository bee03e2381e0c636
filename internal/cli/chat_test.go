package cli

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

func TestParseChatCommand(t *testing.T) {
	tests := []struct {
		name, line, cmd, arg string
		ok                   bool
	}{
		{"help", "/help", "help", "", true},
		{"upper case", "/HELP", "help", "", true},
		{"with an argument", "/model  gpt-4o ", "model", "gpt-4o", true},
		{"exit alone", "exit", "quit", "", true},
		{"quit alone", "Quit", "quit", "", true},
		{"unknown is still a command", "/frobnicate", "frobnicate", "", true},
		{"exit in a sentence is text", "exit the loop early", "", "", false},
		{"a path is text", "/mnt/user-data/a.txt summarise it", "", "", false},
		{"a double slash is text", "//help", "", "", false},
		{"a lone slash is text", "/", "", "", false},
		{"plain text", "hello", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, arg, ok := parseChatCommand(tt.line)
			if cmd != tt.cmd || arg != tt.arg || ok != tt.ok {
				t.Errorf("parseChatCommand(%q) = %q, %q, %v; want %q, %q, %v", tt.line, cmd, arg, ok, tt.cmd, tt.arg, tt.ok)
			}
		})
	}
}

// chatConfig is a config with two scripted models and one command tool.
func chatConfig(t *testing.T, url string) (cfg, home string) {
	dir := t.TempDir()
	cfg = writeFile(t, dir, "config.yaml", `models:
  - name: first
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: `+url+`
  - name: second
    use: langchain_openai:ChatOpenAI
    model: scripted-too
    api_key: modeltest
    base_url: `+url+`
tools:
  - {name: echo, group: exec, use: "antler:command", command: ["cat"]}
`)
	return cfg, filepath.Join(dir, "home")
}

func chatCLI(t *testing.T, cfg, home, input string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	opts := Options{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(input), Getenv: func(string) string { return "" }}
	code := Main(t.Context(), append([]string{"--config", cfg, "--home", home, "chat"}, args...), opts)
	return code, out.String(), errOut.String()
}

// The slash commands answer without asking the model; exit ends the
// chat; //x reaches the model as /x.
func TestChatSlashCommands(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Func: echoLast})
	cfg, home := chatConfig(t, srv.URL)
	input := "/help\n/thread\n/model\n/model nope\n/model second\n/tools\n/frobnicate\n/thread t9\n/new\n//help me\nexit\nnever sent\n"
	code, out, errOut := chatCLI(t, cfg, home, input, "--thread", "t1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"thread t1 · model first", // the banner, after the preflight
		"/new             start a new thread",
		"> thread t1\n",
		"model first; configured:\n * first (scripted)\n   second (scripted-too)\n",
		`error: no model named "nope"`,
		"model second\n",
		"5 tools:\n  echo (exec)\n  present_files (builtin)\n",
		"unknown command /frobnicate: /help lists the commands",
		"> thread t9\n",
		"new thread t-",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if got := len(srv.Requests()); got != 1 {
		t.Fatalf("the model was asked %d times, want once (for //help me)", got)
	}
	req := srv.LastRequest()
	if last := modeltest.LastMessage(req).Content; !strings.Contains(last, "/help me") || strings.Contains(last, "//help") {
		t.Errorf("//help me sent as %q", last)
	}
	if bodies := srv.Bodies(); len(bodies) != 1 || !strings.Contains(string(bodies[0]), `"model":"scripted-too"`) {
		t.Errorf("the turn after /model second was not sent to its model: %s", bodies)
	}
	if !strings.Contains(out, "saw: ") || strings.Contains(out+errOut, "never sent") {
		t.Errorf("stdout %q", out)
	}
}

// The missing key is reported before the first prompt (exit 2), not
// after the first message.
func TestChatPreflightMissingKey(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "never"})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `models:
  - name: nokey
    use: langchain_openai:ChatOpenAI
    model: scripted
    base_url: `+srv.URL+`
`)
	code, _, errOut := chatCLI(t, cfg, filepath.Join(dir, "home"), "hello\n")
	if code != 2 || !strings.Contains(errOut, "no API key") || !strings.Contains(errOut, "OPENAI_API_KEY") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming the key to set", code, errOut)
	}
	if strings.Contains(errOut, "> ") || len(srv.Requests()) != 0 {
		t.Errorf("the chat prompted or called the model before failing: %q", errOut)
	}
}

func TestToolEndLine(t *testing.T) {
	failed := func(content string) agent.Event {
		return agent.Event{Type: agent.EventToolEnd, Name: "read_file", IsError: true,
			Message: &model.Message{Role: model.RoleTool, Content: content}}
	}
	long := strings.Repeat("x", 300)
	tests := []struct {
		name    string
		ev      agent.Event
		verbose bool
		want    string
	}{
		{"success", agent.Event{Type: agent.EventToolEnd, Name: "ls", DurationMS: 1234}, false, "✓ ls (1.234s)"},
		{"failure shows its reason", failed("Error: Only paths under /mnt/user-data are allowed"), false,
			"✗ read_file (0s): Only paths under /mnt/user-data are allowed"},
		{"only the first line", failed("Error: deferred tool\ncall tool_search first\nthen retry"), false,
			"✗ read_file (0s): deferred tool …"},
		{"verbose shows all", failed("Error: deferred tool\ncall tool_search first"), true,
			"✗ read_file (0s): deferred tool\n  call tool_search first"},
		{"a long line is cut", failed(long), false, "✗ read_file (0s): " + strings.Repeat("x", toolFailureMaxRunes-1) + "…"},
		{"no text", failed(""), false, "✗ read_file (0s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, toolEndLine(tt.ev, tt.verbose, nil)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := toolEndLine(failed("Error: no"), false, &painter{on: true}); got != "\x1b[31m✗\x1b[0m read_file (0s): no" {
		t.Errorf("coloured: %q", got)
	}
}

func TestHumanLogHandler(t *testing.T) {
	var b bytes.Buffer
	l := slog.New(newHumanHandler(&b, slog.LevelInfo, nil)).With("server", "ghost")
	l.Debug("hidden")
	l.Warn("MCP server 'ghost' skipped: command not found", "path", "/a b")
	l.WithGroup("mcp").Error("failed", "n", 2)
	want := "warning: MCP server 'ghost' skipped: command not found server=ghost path=\"/a b\"\n" +
		"error: failed server=ghost mcp.n=2\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLogFormat(t *testing.T) {
	tests := []struct {
		name, format, want string
		server             bool
	}{
		{"auto off a terminal is slog text", "auto", "level=WARN", false},
		{"json", "json", `"level":"WARN"`, false},
		{"text", "text", "level=WARN", false},
		{"serve", "auto", "level=WARN", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			l, err := newLogger(&b, "warn", tt.format, tt.server, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			l.Warn("w")
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("%q lacks %q", b.String(), tt.want)
			}
		})
	}
	if _, err := newLogger(&bytes.Buffer{}, "warn", "yaml", false, os.Getenv); err == nil || exitCode(err) != 2 {
		t.Errorf("--log-format yaml: %v", err)
	}
}

func TestChatHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "antler", chatHistoryName)
	h, err := loadChatHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range chatHistoryMax + 5 {
		h.add(strings.Repeat("a", i%3+1) + string(rune('a'+i%26)))
	}
	if first := h.add("same"); !first {
		t.Error("a new line was not kept")
	}
	if again := h.add("same"); again {
		t.Error("a repeated line was kept twice")
	}
	for _, l := range []string{"", "  ", "two\nlines", strings.Repeat("x", chatHistoryMaxLine+1)} {
		if h.add(l) {
			t.Errorf("kept %q", l)
		}
	}
	if err := h.save(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v %v, want mode 0600", fi, err)
	}
	again, err := loadChatHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.lines) != chatHistoryMax || again.lines[len(again.lines)-1] != "same" {
		t.Errorf("reloaded %d lines ending %q, want %d ending \"same\"", len(again.lines), again.lines[len(again.lines)-1], chatHistoryMax)
	}
	if got := chatHistoryPath(func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }); got != "/home/u/.local/state/antler/chat_history" {
		t.Errorf("default path %q", got)
	}
	if got := chatHistoryPath(func(k string) string { return map[string]string{"XDG_STATE_HOME": "/s"}[k] }); got != "/s/antler/chat_history" {
		t.Errorf("XDG path %q", got)
	}
}
