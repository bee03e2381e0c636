package subagent_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/subagent"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// baseConfig has a lead model, a worker model, a vision model and config
// tools in three groups.
const baseConfig = `
models:
  - name: lead
    use: test:model
    model: lead
  - name: worker
    use: test:model
    model: worker
  - name: vision
    use: test:model
    model: vision
    supports_vision: true
tools:
  - name: ls
    group: file:read
    use: test:ls
  - name: web_search
    group: web
    use: test:web
  - name: hang
    group: file:read
    use: test:hang
`

// harness wires an executor over a test registry. Models are looked up
// by name in models.
type harness struct {
	cfg    *config.Config
	asm    *toolset.Assembler
	exec   *subagent.Executor
	task   *tool.Tool
	models map[string]model.ChatModel
	// release unblocks every running call of the hang tool, which
	// ignores cancellation.
	release chan struct{}
	// skills records the allowlists the skills section was asked for.
	mu     sync.Mutex
	skills [][]string
}

func parseConfig(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("config.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func textTool(name, text string) *tool.Tool {
	return &tool.Tool{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return tool.Text(text), nil }}
}

func newHarness(t testing.TB, yaml string, models map[string]model.ChatModel, edit func(*subagent.Options)) *harness {
	t.Helper()
	h := &harness{cfg: parseConfig(t, yaml), models: models, release: make(chan struct{})}
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(ctx context.Context, env *toolset.Env, m config.Model) (model.ChatModel, error) {
		return models[m.Name], nil
	}, "test:model")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) {
		return textTool("ls", "uploads workspace outputs"), nil
	}, "test:ls")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) {
		return textTool("web_search", "[]"), nil
	}, "test:web")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) {
		return textTool("bash", "ok"), nil
	}, "test:bash")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) {
		return &tool.Tool{Name: "hang", Description: "hangs", InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler: func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
				<-h.release // deliberately deaf to cancellation
				return tool.Text("released"), nil
			}}, nil
	}, "test:hang")
	builtins := toolset.Builtins{
		PresentFiles:     textTool(builtin.PresentFilesName, "presented"),
		AskClarification: textTool(builtin.AskClarificationName, "asked"),
		ViewImage:        textTool(builtin.ViewImageName, "image"),
	}
	h.asm = &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: h.cfg}, Builtins: builtins}
	opts := subagent.Options{
		Assembler: h.asm,
		Skills: func(ctx context.Context, user string, allowed []string) (string, error) {
			h.mu.Lock()
			h.skills = append(h.skills, allowed)
			h.mu.Unlock()
			return "<skills/>", nil
		},
	}
	if edit != nil {
		edit(&opts)
	}
	exec, err := subagent.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.exec = exec
	h.task = builtin.NewTask(exec)
	h.asm.Builtins.Task = h.task // before the first assembly: subagents must still never bind it
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		exec.Close()
	})
	return h
}

// event is one task event seen by a test's Emit.
type event struct {
	name string
	data map[string]any
	at   time.Time
}

// recorder collects events from tool.Call.Emit.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) emit(name string, data any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, _ := data.(map[string]any)
	r.events = append(r.events, event{name: name, data: m, at: time.Now()})
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.name
	}
	return out
}

func (r *recorder) last() event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		return event{}
	}
	return r.events[len(r.events)-1]
}

// callTask calls the task tool directly, as the lead's loop would.
func (h *harness) callTask(ctx context.Context, rec *recorder, rc map[string]any, args string) (*tool.Result, error) {
	if rc == nil {
		rc = map[string]any{"model_name": "worker"}
	}
	call := &tool.Call{ID: "call_1", Name: builtin.TaskName, ThreadID: "t1", UserID: "u1", RunID: "run1",
		State:   &thread.State{Sandbox: &thread.Sandbox{SandboxID: "local"}, ThreadData: &thread.ThreadData{WorkspacePath: "/w"}},
		Context: rc, Emit: rec.emit}
	return h.task.Handler(ctx, call, json.RawMessage(args))
}

// waitFor polls cond (the executor's registry drains asynchronously).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
