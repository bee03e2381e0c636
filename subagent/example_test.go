package subagent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/subagent"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// An executor behind the task tool. In a program the task tool goes into
// the lead's assembler (toolset.Builtins.Task) and subagent.LimitHook into
// agent.FactoryOptions.SubagentLimit; here the tool is called directly.
func ExampleNew() {
	cfg, _ := config.Parse("config.yaml", []byte("models:\n  - {name: worker, use: test:model, model: w}\n"), nil)
	worker := modeltest.New(modeltest.Turn{Text: "The answer is 42."})
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(context.Context, *toolset.Env, config.Model) (model.ChatModel, error) {
		return worker, nil
	}, "test:model")
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg}}

	exec, err := subagent.New(subagent.Options{Assembler: asm})
	if err != nil {
		panic(err)
	}
	defer exec.Close()
	task := builtin.NewTask(exec)
	// A lead agent's assembler holds the task tool; the subagents'
	// assembler (asm) never does.
	_ = &toolset.Assembler{Registry: reg, Env: asm.Env, Builtins: toolset.Builtins{Task: task}}

	call := &tool.Call{ID: "call_1", ThreadID: "t1", UserID: "u1", RunID: "r1", State: &thread.State{},
		Emit: func(event string, data any) { fmt.Println("event:", event) }}
	args, _ := json.Marshal(map[string]string{"description": "answer", "prompt": "What is 6 x 7?", "subagent_type": "general-purpose"})
	res, _ := task.Handler(context.Background(), call, args)
	fmt.Println(res.TextContent())
	fmt.Println(res.Meta[builtin.MetaSubagentStatus], res.Update.Delegations[0].Status)
	// Output:
	// event: task_started
	// event: task_running
	// event: task_completed
	// Task Succeeded. Result: The answer is 42.
	// completed completed
}
