package toolpolicy_test

import (
	"encoding/json"
	"fmt"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolpolicy"
)

func Example() {
	p, err := toolpolicy.New(config.ToolPolicy{Default: "allow", Rules: []config.ToolPolicyRule{
		{Action: "deny", Command: "rm -rf *", Reason: "no recursive deletes"},
		{Action: "ask", Source: "mcp", Annotations: map[string]bool{"destructiveHint": true}},
	}})
	if err != nil {
		panic(err)
	}
	bash := &tool.Call{Name: "bash", Meta: map[string]string{tool.MetaSource: "config"}}
	for _, line := range []string{"ls -la", `echo ok && bash -c "r''m -rf /tmp/x"`} {
		args, _ := json.Marshal(map[string]string{"command": line})
		d := p.Decide(bash, args)
		fmt.Printf("%s: %s %s %q\n", line, d.Action, d.Rule, d.Command)
	}
	write := &tool.Call{Name: "fs_write", Meta: map[string]string{tool.MetaSource: "mcp", tool.MetaMCPServer: "fs"}}
	fmt.Println(p.Decide(write, json.RawMessage(`{}`)).Action)
	// Output:
	// ls -la: allow  ""
	// echo ok && bash -c "r''m -rf /tmp/x": deny tool_policy.rules[0] "rm -rf /tmp/x"
	// ask
}
