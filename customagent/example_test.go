package customagent_test

import (
	"fmt"
	"os"

	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/vpath"
)

func Example() {
	home, _ := os.MkdirTemp("", "antler-example")
	defer os.RemoveAll(home)
	layout, _ := vpath.New(vpath.Options{Home: home})
	store := customagent.New(layout, customagent.Options{})

	soul := "You review Go code. Be brief."
	err := store.Update("alice", "reviewer", customagent.Change{
		Config: &customagent.Config{Name: "reviewer", Description: "Reviews Go code", Skills: []string{}},
		Soul:   &soul,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, _ := store.Load("alice", "reviewer")
	fmt.Println(a.Config.Description, a.Config.Skills != nil, len(a.Config.Skills))
	fmt.Println(a.Soul)
	_, err = store.Load("bob", "reviewer")
	fmt.Println(err)
	// Output:
	// Reviews Go code true 0
	// You review Go code. Be brief.
	// agent not found: "reviewer"
}
