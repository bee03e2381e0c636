package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// antlerProcess runs `antler args...` as a separate process (this test
// binary re-executed as the CLI) and returns exit code, stdout and stderr.
func antlerProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := antlerCmd(t, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

func antlerCmd(t *testing.T, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Env = append(os.Environ(), "ANTLER_CLI_TEST_MAIN=1", "NO_COLOR=1")
	return cmd
}

// e2eConfig binds present_files (built-in) and the sandbox's write_file,
// with the model at a modeltest server.
func e2eConfig(t *testing.T, url string) (cfg, home string) {
	dir := t.TempDir()
	cfg = writeFile(t, dir, "config.yaml", `models:
  - name: test
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: `+url+`
tools:
  - {name: write_file, group: file:write, use: deerflow.sandbox.tools:write_file_tool}
  - {name: read_file, group: file:read, use: deerflow.sandbox.tools:read_file_tool}
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
`)
	return cfg, filepath.Join(dir, "home")
}

func TestE2EToolCallThenAnswer(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "write_file",
			`{"description":"save","path":"/mnt/user-data/outputs/a.txt","content":"hi"}`)}},
		modeltest.Turn{Text: "saved it"})
	cfg, home := e2eConfig(t, srv.URL)
	code, out, errOut := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "save hi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	if got := eventTypes(evs); !strings.Contains(got, "tool_start tool_end") || !strings.HasSuffix(got, "done") {
		t.Fatalf("events: %s", got)
	}
	if last := evs[len(evs)-1]; last.Reason != "completed" {
		t.Errorf("done reason %q", last.Reason)
	}
	data, err := os.ReadFile(filepath.Join(home, "users", "default", "threads", "t1", "user-data", "outputs", "a.txt"))
	if err != nil || string(data) != "hi" {
		t.Errorf("file written by the tool: %q %v", data, err)
	}
}

func TestE2EParallelUpdatesBothSurvive(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{
			toolCall("w1", "write_file", `{"description":"a","path":"/mnt/user-data/outputs/a.md","content":"a"}`),
			toolCall("w2", "write_file", `{"description":"b","path":"/mnt/user-data/outputs/b.md","content":"b"}`)}},
		modeltest.Turn{ToolCalls: []model.ToolCall{
			toolCall("p1", "present_files", `{"filepaths":["/mnt/user-data/outputs/a.md"]}`),
			toolCall("p2", "present_files", `{"filepaths":["/mnt/user-data/outputs/b.md"]}`)}},
		modeltest.Turn{Text: "both presented"})
	cfg, home := e2eConfig(t, srv.URL)
	code, out, errOut := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "make two files")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	// The operator's view of the thread: a no-op call prints its state.
	code, out, errOut = antlerProcess(t, "--config", cfg, "--home", home, "tools", "call", "present_files", "--thread", "t1",
		"--json", "--args", `{"filepaths":["/mnt/user-data/outputs/a.md"]}`)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	st := threadArtifacts(t, cfg, home, "t1")
	if strings.Join(st, ",") != "/mnt/user-data/outputs/a.md,/mnt/user-data/outputs/b.md" {
		t.Errorf("artifacts after two parallel present_files calls: %v", st)
	}
}

// threadArtifacts reads the thread's latest checkpoint through the CLI's
// own store.
func threadArtifacts(t *testing.T, cfg, home, threadID string) []string {
	t.Helper()
	g := &globals{opts: (&Options{Getenv: func(string) string { return "" }}).withDefaults(), config: cfg, home: home, user: "default", logLevel: "error"}
	a, err := newApp(t.Context(), g)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.threadState(t.Context(), threadID)
	if err != nil {
		t.Fatal(err)
	}
	return st.Artifacts
}

func TestE2EClarificationResumesAndSurvivesRestart(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("q1", "ask_clarification",
			`{"question":"Which format?","clarification_type":"approach_choice","options":["csv","json"]}`)}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			// The resumed run sees the whole history: question, answer.
			var texts []string
			for _, m := range req.Messages {
				texts = append(texts, string(m.Role)+":"+m.Content)
			}
			return modeltest.Turn{Text: "history=" + strings.Join(texts, "|")}
		}})
	cfg, home := e2eConfig(t, srv.URL)
	code, out, errOut := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "export my data")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	if got := eventTypes(evs); !strings.Contains(got, "clarification") || evs[len(evs)-1].Reason != "clarification" {
		t.Fatalf("first run events: %s (reason %q)", got, evs[len(evs)-1].Reason)
	}
	// A new process on the same thread: the run resumes with the answer.
	code, out, errOut = antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var final string
	for _, ev := range parseEvents(t, out) {
		if ev.Type == "message" && ev.Message != nil && ev.Message.Role == model.RoleAssistant {
			final = ev.Message.Content
		}
	}
	for _, want := range []string{"user:export my data", "Which format?", "user:--- BEGIN USER INPUT ---\njson"} { // the last user message is framed
		if !strings.Contains(final, want) {
			t.Errorf("resumed history lacks %q: %s", want, final)
		}
	}
}

func TestE2EUnknownToolAndModelError(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "lsls", `{}`)}},
		modeltest.Turn{Text: "partial answer", Error: "upstream overloaded"})
	cfg, home := e2eConfig(t, srv.URL)
	appendFile(t, cfg, "llm_call:\n  retry_max_attempts: 1\n")
	code, out, _ := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "go")
	if code != 1 {
		t.Fatalf("exit %d, want 1 after a model error", code)
	}
	// The failed model call is answered with DeerFlow's error fallback
	// message, which names the failure in its Meta.
	var toolErr, modelErr bool
	for _, ev := range parseEvents(t, out) {
		if ev.Type == "tool_end" && ev.IsError && ev.Message != nil &&
			strings.HasPrefix(ev.Message.Content, "Error: lsls is not a valid tool, try one of [") {
			toolErr = true
		}
		if ev.Type == "message" && ev.Message != nil && ev.Message.Meta["deerflow_error_fallback"] == true {
			detail, _ := ev.Message.Meta["error_detail"].(string)
			modelErr = strings.Contains(detail, "upstream overloaded")
		}
	}
	if !toolErr || !modelErr {
		t.Errorf("unknown-tool error %v, model error %v:\n%s", toolErr, modelErr, out)
	}
}

func TestE2ECancellation(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "never finished", Delay: time.Minute})
	cfg, home := e2eConfig(t, srv.URL)
	cmd := antlerCmd(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "wait")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	// Cancel once the model request is in flight.
	for srv.Calls() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var last string
	for sc.Scan() {
		last = sc.Text()
	}
	_ = cmd.Wait()
	var ev jsonEvent
	_ = json.Unmarshal([]byte(last), &ev)
	if ev.Type != "done" || ev.Reason != "cancelled" {
		t.Errorf("last event %q, want done/cancelled", last)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("cancellation was not prompt: the run waited for the model")
	}
}

// The lead delegates with task; the subagent (which never has task bound)
// answers; the lead receives the result and the task events stream.
func TestE2ESubagentTask(t *testing.T) {
	answer := func(req *model.Request) modeltest.Turn {
		isLead := slices.ContainsFunc(req.Tools, func(d model.ToolDefinition) bool { return d.Name == "task" })
		last := req.Messages[len(req.Messages)-1]
		switch {
		case !isLead:
			return modeltest.Turn{Text: "subagent found 3 files"}
		case last.Role == model.RoleUser:
			return modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("t1", "task",
				`{"description":"count files","prompt":"count the files","subagent_type":"general-purpose"}`)}}
		default:
			return modeltest.Turn{Text: "lead saw: " + last.Content}
		}
	}
	server := modeltest.NewScriptServer(t, modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: answer}}}})
	cfg, home := e2eConfig(t, server.URL)
	code, out, errOut := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--subagents", "--thread", "t1", "how many files?")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	var types []string
	var final string
	for _, ev := range parseEvents(t, out) {
		if strings.HasPrefix(ev.Type, "task_") {
			types = append(types, ev.Type)
		}
		if ev.Type == "message" && ev.Message != nil && ev.Message.Role == model.RoleAssistant {
			final = ev.Message.Content
		}
	}
	if len(types) < 2 || types[0] != "task_started" || types[len(types)-1] != "task_completed" {
		t.Errorf("task events %v", types)
	}
	if !strings.Contains(final, "subagent found 3 files") {
		t.Errorf("lead's final answer %q lacks the subagent's result", final)
	}
}
