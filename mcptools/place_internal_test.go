package mcptools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/antlerhq/antler/vpath"
)

// The word rules of the path translation, without a server.
func TestTranslateTextWords(t *testing.T) {
	layout, err := vpath.New(vpath.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := New(&Options{Layout: layout})
	defer m.Close()
	place, err := m.prepareThread("u", "t1")
	if err != nil {
		t.Fatal(err)
	}
	ws := place.paths.Workspace
	for _, name := range []string{"a.txt", "odd.", "sp ace.txt"} {
		if err := os.WriteFile(filepath.Join(ws, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link.txt")
	if err := os.Symlink(filepath.Join(ws, "a.txt"), link); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, in, want string }{
		{"trailing punctuation kept", ws + "/a.txt?!", "/mnt/user-data/workspace/a.txt?!"},
		{"a name ending in a dot", ws + "/odd.", "/mnt/user-data/workspace/odd."},
		{"quotes and brackets separate", `["` + ws + `/a.txt"](` + ws + "/a.txt)", `["/mnt/user-data/workspace/a.txt"](/mnt/user-data/workspace/a.txt)`},
		{"relative with dot", "./a.txt", "/mnt/user-data/workspace/a.txt"},
		{"file URI with an escape", "file://" + ws + "/sp%20ace.txt", "/mnt/user-data/workspace/sp ace.txt"},
		{"file URI of another host", "file://example.com" + ws + "/a.txt", "file://example.com" + ws + "/a.txt"},
		{"the thread's root folder", ws, "/mnt/user-data/workspace"},
		{"bare name without changes", "a.txt", "a.txt"},
		{"a missing relative path", "nope/a.txt", "nope/a.txt"},
		{"a link from outside into the folder", link, link},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := place.translator(ws)
			if got := tr.text(tt.in); got != tt.want {
				t.Errorf("text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
