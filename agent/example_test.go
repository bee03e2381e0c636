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
