package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

func ExampleNewPresentFiles() {
	home, _ := os.MkdirTemp("", "antler-example")
	defer os.RemoveAll(home)
	layout, _ := vpath.New(vpath.Options{Home: home})
	tp, _ := layout.EnsureThreadDirs("alice", "t1")
	_ = os.WriteFile(filepath.Join(tp.Outputs, "report.md"), []byte("# Report"), 0o644)

	present := builtin.NewPresentFiles(layout)
	call := &tool.Call{ID: "call_1", UserID: "alice", ThreadID: "t1", State: &thread.State{}}
	res, _ := present.Handler(context.Background(), call, json.RawMessage(`{"filepaths": ["/mnt/user-data/outputs/report.md"]}`))
	fmt.Println(res.TextContent())
	fmt.Println(res.Update.Artifacts)
	res, _ = present.Handler(context.Background(), call, json.RawMessage(`{"filepaths": ["/mnt/user-data/workspace/draft.md"]}`))
	fmt.Println(res.TextContent())
	// Output:
	// Successfully presented files
	// [/mnt/user-data/outputs/report.md]
	// Error: Only files in /mnt/user-data/outputs can be presented: /mnt/user-data/workspace/draft.md
}

func ExampleNewUpdateAgent() {
	home, _ := os.MkdirTemp("", "antler-example")
	defer os.RemoveAll(home)
	layout, _ := vpath.New(vpath.Options{Home: home})
	store := customagent.New(layout, customagent.Options{})
	cfg := &config.Config{Models: []config.Model{{Name: "fast"}}}

	setup := builtin.NewSetupAgent(store, nil)
	update := builtin.NewUpdateAgent(builtin.UpdateAgentOptions{Store: store, Config: cfg})
	call := &tool.Call{ID: "call_1", UserID: "alice", AgentName: "reviewer"}

	res, _ := setup.Handler(context.Background(), call, json.RawMessage(`{"soul": "You review code.", "description": "Reviews code"}`))
	fmt.Println(res.TextContent())
	res, _ = update.Handler(context.Background(), call, json.RawMessage(`{"model": "fast", "skills": [], "description": "null"}`))
	fmt.Println(res.TextContent())
	res, _ = update.Handler(context.Background(), call, json.RawMessage(`{"model": "slow"}`))
	fmt.Println(res.TextContent())
	// Output:
	// Agent 'reviewer' created successfully!
	// Agent 'reviewer' updated successfully. Changed: model, skills. The new configuration takes effect on the next user turn.
	// Error: Unknown model 'slow'. Pass a model name that exists in config.yaml's models section.
}
