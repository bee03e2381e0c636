package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/thread"
)

// plantOutside makes a folder outside the home holding rel with data, and
// replaces the thread folder dir with a symlink to it (host bash or an MCP
// stdio server can plant one).
func plantOutside(t *testing.T, dir, rel string, data []byte) string {
	t.Helper()
	outside := t.TempDir()
	p := filepath.Join(outside, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	return outside
}

// TestViewImage_symlinkedThreadFolderIsRefused: with the thread's
// user-data folder, or its uploads folder, replaced by a symlink to a
// folder outside, view_image and the middleware's re-read never read the
// image there.
func TestViewImage_symlinkedThreadFolderIsRefused(t *testing.T) {
	for _, c := range []struct{ name, rel string }{
		{"user-data", "uploads/x.png"},
		{"uploads", "x.png"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newThreadEnv(t)
			dir := e.tp.UserData
			if c.name == "uploads" {
				dir = e.tp.Uploads
			}
			plantOutside(t, dir, c.rel, pngData)
			res := viewCall(t, e, "/mnt/user-data/uploads/x.png")
			if !res.IsError || !strings.Contains(res.TextContent(), "path traversal") {
				t.Errorf("view_image = %q (error %v), want a traversal error", res.TextContent(), res.IsError)
			}
			if data, ok := rereadImage(e.layout, e.user, e.thread, "/mnt/user-data/uploads/x.png",
				thread.ViewedImage{MIMEType: "image/png", Size: int64(len(pngData))}); ok {
				t.Errorf("the middleware re-read %d bytes from outside", len(data))
			}
		})
	}
}

// TestPresentFiles_symlinkedOutputsIsRefused: with the outputs folder, or
// the whole user-data folder, a symlink out of the thread's folder, no
// file there is presented (the artifacts route would refuse it, and the
// answer would tell whether an outside file exists).
func TestPresentFiles_symlinkedOutputsIsRefused(t *testing.T) {
	for _, c := range []struct{ name, rel string }{
		{"user-data", "outputs/report.md"},
		{"outputs", "report.md"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newThreadEnv(t)
			dir := e.tp.UserData
			if c.name == "outputs" {
				dir = e.tp.Outputs
			}
			outside := plantOutside(t, dir, c.rel, []byte("# outside"))
			for _, p := range []string{"/mnt/user-data/outputs/report.md", "/mnt/user-data/outputs/missing.md",
				filepath.Join(e.tp.Outputs, "report.md")} {
				wantError(t, presentCall(t, e, e.call(), p),
					"Error: Cannot present files: /mnt/user-data/outputs is a symbolic link out of the thread's folder")
			}
			if _, err := os.Stat(filepath.Join(outside, filepath.FromSlash(c.rel))); err != nil {
				t.Fatal(err)
			}
		})
	}
}
