package sandbox_test

import (
	"context"
	"fmt"
	"os"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/sandbox"
	"github.com/antlerhq/antler/tool"
)

func Example() {
	home, _ := os.MkdirTemp("", "antler-home")
	defer os.RemoveAll(home)

	cfg := config.Default()
	provider, err := sandbox.FromConfig(home, cfg, nil)
	if err != nil {
		panic(err)
	}
	tools := sandbox.NewTools(provider, sandbox.ToolsOptions{Config: cfg})
	ctx := context.Background()
	call := &tool.Call{UserID: "alice", ThreadID: "t1"}

	run := func(t *tool.Tool, args string) {
		res, err := t.Handler(ctx, call, []byte(args))
		if err != nil {
			panic(err)
		}
		fmt.Println(res.TextContent())
	}
	run(tools.WriteFile(), `{"description":"draft","path":"/mnt/user-data/outputs/notes.md","content":"first\n"}`)
	run(tools.WriteFile(), `{"description":"rewrite","path":"/mnt/user-data/outputs/notes.md","content":"second\n"}`)
	run(tools.ReadFile(), `{"description":"check","path":"/mnt/user-data/outputs/notes.md"}`)
	run(tools.StrReplace(), `{"description":"edit","path":"/mnt/user-data/outputs/notes.md","old_str":"first","new_str":"second"}`)
	run(tools.Ls(), `{"description":"look","path":"/mnt/user-data/outputs"}`)
	run(tools.ReadFile(), `{"description":"escape","path":"/mnt/user-data/outputs/../../../../etc/passwd"}`)
	// Output:
	// OK
	// Error: write_file blocked — /mnt/user-data/outputs/notes.md already exists (1 line) and you have not read its current version. Any write invalidates earlier reads, so re-read before every modification. Call read_file on it first (e.g. start_line=1, end_line=1), check what is already there, then retry.
	// first
	//
	// OK
	// /mnt/user-data/outputs/notes.md
	// Error: Access denied: path traversal detected
}
