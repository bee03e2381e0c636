package mcptools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// The word rules of the path translation, without a server.
func TestTranslateTextWords(t *testing.T) {
	layout, err := vpath.New(vpath.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Layout: layout})
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

func TestLooksLikeFileName(t *testing.T) {
	tests := []struct {
		w    string
		want bool
	}{
		{"notes.txt", true},
		{"report.md", true},
		{"archive.tar.gz", true},
		{"photo.JPEG", true},
		{"data.mp3", true},
		{"3.14", false},
		{"v1.2", false},
		{"Done.", false},
		{".bashrc", false},
		{"Makefile", false},
		{"a/b.txt", false},
		{"name.averyverylongext", false},
		{"odd.e-x", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.w, func(t *testing.T) {
			if got := looksLikeFileName(tt.w); got != tt.want {
				t.Errorf("looksLikeFileName(%q) = %v, want %v", tt.w, got, tt.want)
			}
		})
	}
}

// A result whose words do not look like file names never walks the
// workspace a second time.
func TestNoSecondWalkWithoutFileNames(t *testing.T) {
	layout, err := vpath.New(vpath.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Layout: layout})
	defer m.Close()
	place, err := m.prepareThread("u", "t1")
	if err != nil {
		t.Fatal(err)
	}
	tr := place.translator(place.paths.Workspace)
	if got := tr.text("Done. Wrote 3.14 units to the Makefile"); got != "Done. Wrote 3.14 units to the Makefile" {
		t.Errorf("text changed: %q", got)
	}
	if tr.looked {
		t.Error("the workspace was walked again for words that are not file names")
	}
	tr.text("see notes.txt")
	if !tr.looked {
		t.Error("a file name did not look at the workspace")
	}
}

// The URI of a binary block (an embedded blob's source) is masked like
// text: the line that names its saved file must not show a host path.
func TestMaskResultMasksBinaryURIs(t *testing.T) {
	layout, err := vpath.New(vpath.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Layout: layout})
	defer m.Close()
	place, err := m.prepareThread("u", "t1")
	if err != nil {
		t.Fatal(err)
	}
	res := &tool.Result{Content: []tool.Block{{Type: tool.BlockBinary, MIMEType: "audio/wav", Data: []byte("RIFF"), URI: "file://" + place.paths.Workspace + "/take.wav"}}}
	place.maskResult(res)
	if got := res.Content[0].URI; strings.Contains(got, place.paths.Workspace) {
		t.Errorf("URI %q shows the host path", got)
	}
}
