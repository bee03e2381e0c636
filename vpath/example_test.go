package vpath_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/antlerhq/antler/vpath"
)

func Example() {
	home, _ := os.MkdirTemp("", "antler-home")
	defer os.RemoveAll(home)

	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		panic(err)
	}

	// Virtual → host, checked.
	host, err := layout.Resolve("alice", "t1", "/mnt/user-data/outputs/report.md", vpath.Write)
	if err != nil {
		panic(err)
	}
	rel, _ := filepath.Rel(home, host)
	fmt.Println(filepath.ToSlash(rel))

	// Refused paths carry the text the model reads.
	_, err = layout.Resolve("alice", "t1", "/mnt/user-data/workspace/../../../etc/passwd", vpath.Read)
	fmt.Println(err)
	_, err = layout.Resolve("alice", "t1", "/mnt/skills/public/x/SKILL.md", vpath.Write)
	fmt.Println(err)

	// Host → virtual, for anything the model reads back.
	fmt.Println(layout.Mask("alice", "t1", "wrote "+host))
	// Output:
	// users/alice/threads/t1/user-data/outputs/report.md
	// Access denied: path traversal detected
	// Write access to skills path is not allowed: /mnt/skills/public/x/SKILL.md
	// wrote /mnt/user-data/outputs/report.md
}
