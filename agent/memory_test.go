package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/memory"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/toolset"
)

// memoryFactory is a factory with a real memory manager, whose
// extractions the scripted model extract answers.
func memoryFactory(t *testing.T, mode string, extract model.ChatModel) (*agent.Factory, *memory.Manager) {
	t.Helper()
	cfg, err := config.Parse("config.yaml", []byte(factoryConfig+"memory:\n  mode: "+mode+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := memory.New(memory.Options{Config: cfg.Memory, Home: t.TempDir(), Model: extract})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(context.Background()) })
	asm := &toolset.Assembler{Registry: testRegistry(), Env: &toolset.Env{Config: cfg},
		Builtins: toolset.Builtins{AskClarification: builtin.AskClarification()}}
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm, Memory: mgr,
		Now: func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return f, mgr
}

func TestMemory_turnIsExtractedAndInjectedIntoTheNextThread(t *testing.T) {
	extract := modeltest.New(modeltest.Turn{Text: `{"newFacts": [{"content": "User prefers metric units", "category": "preference",
		"confidence": 0.95, "scope": "user", "durability": "durable", "authority": "descriptive"}]}`})
	f, mgr := memoryFactory(t, "middleware", extract)
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(lead.Prompt, "<memory>") {
		t.Fatalf("memory block before anything was remembered:\n%s", lead.Prompt)
	}
	if _, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("Always use metric units.")), nil); err != nil {
		t.Fatal(err)
	}
	if mgr.Pending() != 1 {
		t.Fatalf("pending extractions %d, want the completed turn", mgr.Pending())
	}
	if err := mgr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	next, err := f.Build(t.Context(), agent.Request{ThreadID: "t2", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(next.Prompt, "<memory>\nFacts:\n- [preference | 0.95] User prefers metric units\n</memory>") {
		t.Errorf("next thread's prompt lacks the fact:\n%s", next.Prompt)
	}
	other, _ := f.Build(t.Context(), agent.Request{ThreadID: "t3", UserID: "someone-else"})
	if strings.Contains(other.Prompt, "metric") {
		t.Errorf("another user's prompt carries the fact")
	}
	if strings.Contains(next.Prompt, "memory_tool_system") || strings.Contains(strings.Join(next.Agent.Tools(), ","), "memory_") {
		t.Errorf("middleware mode binds memory tools: %v", next.Agent.Tools())
	}
}

func TestMemory_toolModeBindsTools(t *testing.T) {
	f, _ := memoryFactory(t, "tool", nil)
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	tools := strings.Join(lead.Agent.Tools(), ",")
	for _, name := range []string{"memory_search", "memory_add", "memory_update", "memory_delete"} {
		if !strings.Contains(tools, name) {
			t.Errorf("tool mode lacks %s: %s", name, tools)
		}
	}
	if !strings.Contains(lead.Prompt, "<memory_tool_system>") {
		t.Errorf("prompt lacks the memory tool section:\n%s", lead.Prompt)
	}
	boot, _ := f.Build(t.Context(), agent.Request{AgentName: "x", IsBootstrap: true})
	if strings.Contains(strings.Join(boot.Agent.Tools(), ","), "memory_") {
		t.Errorf("the agent builder binds memory tools")
	}
}
