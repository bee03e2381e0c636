package vpath_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/antlerhq/antler/vpath"
)

func TestMaskFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "acp-workspace")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, host, text, want string
	}{
		{"the folder", dir, "cwd=" + dir, "cwd=/mnt/acp-workspace"},
		{"a file inside", dir, "wrote " + dir + "/a/b.txt.", "wrote /mnt/acp-workspace/a/b.txt."},
		{"a sibling folder is left alone", dir, dir + "-backup/x", dir + "-backup/x"},
		{"glued to a name is left alone", dir, "x" + dir, "x" + dir},
		{"the resolved spelling of a symlinked folder", link, "at " + dir + "/f", "at /mnt/acp-workspace/f"},
		{"the symlink itself", link, "at " + link + "/f", "at /mnt/acp-workspace/f"},
		{"no path", dir, "nothing here", "nothing here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := vpath.MaskFolder(tt.text, tt.host, vpath.ACPWorkspace); got != tt.want {
				t.Errorf("MaskFolder(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
