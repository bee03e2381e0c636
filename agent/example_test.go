package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

func Example() {
	// A scripted model: first it calls the clock tool, then it answers.
	m := &fakeModel{steps: []step{calls("clock", `{}`), answer("It is noon.")}}
	clock := handlerTool("clock", func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		return tool.Text("12:00"), nil
	})
	a, err := agent.New(agent.Options{Model: m, Tools: []*tool.Tool{clock},
		ToolMiddlewares: []tool.Middleware{agent.Clarification()}})
	if err != nil {
		panic(err)
	}
	for ev, err := range a.Run(context.Background(), agent.Input{Messages: []model.Message{model.UserText("What time is it?")}}) {
		if err != nil {
			panic(err)
		}
		switch ev.Type {
		case agent.EventToolStart:
			fmt.Println("tool:", ev.Name)
		case agent.EventToolEnd:
			fmt.Println("result:", ev.Message.Content)
		case agent.EventMessageDelta:
			fmt.Println("text:", ev.Delta)
		case agent.EventDone:
			fmt.Println("done:", ev.Reason, "after", ev.Turns, "turns")
		}
	}
	// Output:
	// tool: clock
	// result: 12:00
	// text: It is noon.
	// done: completed after 2 turns
}

// A chat without a store keeps its thread in memory: each run continues
// the previous run's outcome, extending its messages in place.
func ExampleInput_continue() {
	m := &fakeModel{steps: []step{answer("Hello."), answer("Still here.")}}
	a, err := agent.New(agent.Options{Model: m, SystemPrompt: "Be brief."})
	if err != nil {
		panic(err)
	}
	var out *agent.Outcome
	for _, line := range []string{"Hi", "Are you there?"} {
		out, err = a.Invoke(context.Background(), agent.Input{Continue: out,
			Messages: []model.Message{model.UserText(line)}}, nil)
		if err != nil {
			panic(err)
		}
		fmt.Println(out.State.Messages[len(out.State.Messages)-1].Content)
	}
	fmt.Println(len(out.State.Messages), "messages")
	// Output:
	// Hello.
	// Still here.
	// 4 messages
}
