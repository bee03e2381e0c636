package builtin

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

func viewCall(t *testing.T, e *threadEnv, p string) *tool.Result {
	t.Helper()
	return callTool(t, NewViewImage(e.layout), e.call(), map[string]any{"image_path": p})
}

// Paths outside the three roots, symlink escapes
// from uploads, spoofed extensions, mismatched magic bytes and files over
// 20 MiB are refused; GIF is accepted; read errors do not leak host paths.
func TestViewImage(t *testing.T) {
	e := newThreadEnv(t)
	e.write(t, e.tp.Workspace, "ok.png", pngData)
	e.write(t, e.tp.Uploads, "anim.gif", gifData)
	e.write(t, e.tp.Outputs, "photo.JPG", jpegData)
	e.write(t, e.tp.Outputs, "pic.webp", webpData)
	e.write(t, e.tp.Workspace, "spoof.png", jpegData)
	e.write(t, e.tp.Workspace, "text.png", []byte("hello, not an image"))
	e.write(t, e.tp.Workspace, "notes.txt", []byte("hello"))
	e.write(t, e.tp.Workspace, "noext", pngData)
	big := e.write(t, e.tp.Workspace, "big.png", pngData)
	if err := os.Truncate(big, maxImageBytes+1); err != nil {
		t.Fatal(err)
	}
	edge := e.write(t, e.tp.Workspace, "edge.png", pngData)
	if err := os.Truncate(edge, maxImageBytes); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(outside, pngData, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.tp.Uploads, "escape.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../workspace/ok.png", filepath.Join(e.tp.Uploads, "inside.png")); err != nil {
		t.Fatal(err)
	}
	// os.Root refuses absolute link targets, even inside the thread (as the
	// sandbox's file tools do).
	if err := os.Symlink(filepath.Join(e.tp.Workspace, "ok.png"), filepath.Join(e.tp.Uploads, "absolute.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(e.tp.Workspace, "dir.png"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path string
		mime       string // success
		size       int64
		wantErr    string
	}{
		{name: "png in workspace", path: "/mnt/user-data/workspace/ok.png", mime: "image/png", size: int64(len(pngData))},
		{name: "gif accepted", path: "/mnt/user-data/uploads/anim.gif", mime: "image/gif", size: int64(len(gifData))},
		{name: "upper-case extension", path: "/mnt/user-data/outputs/photo.JPG", mime: "image/jpeg", size: int64(len(jpegData))},
		{name: "webp", path: "/mnt/user-data/outputs/pic.webp", mime: "image/webp", size: int64(len(webpData))},
		{name: "symlink inside the thread", path: "/mnt/user-data/uploads/inside.png", mime: "image/png", size: int64(len(pngData))},
		{name: "absolute symlink", path: "/mnt/user-data/uploads/absolute.png", wantErr: "Error: Access denied: path traversal detected"},
		{name: "exactly 20 MiB", path: "/mnt/user-data/workspace/edge.png", mime: "image/png", size: maxImageBytes},
		{name: "outside the roots", path: "/etc/passwd",
			wantErr: "Error: Only image paths under /mnt/user-data/workspace, /mnt/user-data/uploads, /mnt/user-data/outputs are allowed"},
		{name: "acp workspace", path: "/mnt/acp-workspace/x.png",
			wantErr: "Error: Only image paths under /mnt/user-data/workspace, /mnt/user-data/uploads, /mnt/user-data/outputs are allowed"},
		{name: "sibling prefix", path: "/mnt/user-data/workspace-x/a.png",
			wantErr: "Error: Only image paths under /mnt/user-data/workspace, /mnt/user-data/uploads, /mnt/user-data/outputs are allowed"},
		{name: "traversal", path: "/mnt/user-data/workspace/../../../etc/x.png", wantErr: "Error: Access denied: path traversal detected"},
		{name: "symlink escape from uploads", path: "/mnt/user-data/uploads/escape.png", wantErr: "Error: Access denied: path traversal detected"},
		{name: "missing", path: "/mnt/user-data/workspace/none.png", wantErr: "Error: Image file not found: /mnt/user-data/workspace/none.png"},
		{name: "directory", path: "/mnt/user-data/workspace/dir.png", wantErr: "Error: Path is not a file: /mnt/user-data/workspace/dir.png"},
		{name: "unsupported extension", path: "/mnt/user-data/workspace/notes.txt",
			wantErr: "Error: Unsupported image format: .txt. Supported formats: .jpg, .jpeg, .png, .webp, .gif"},
		{name: "no extension", path: "/mnt/user-data/workspace/noext",
			wantErr: "Error: Unsupported image format: . Supported formats: .jpg, .jpeg, .png, .webp, .gif"},
		{name: "over 20 MiB", path: "/mnt/user-data/workspace/big.png",
			wantErr: "Error: Image file is too large: 20971521 bytes. Maximum supported size is 20971520 bytes"},
		{name: "spoofed extension", path: "/mnt/user-data/workspace/spoof.png",
			wantErr: "Error: Image contents are image/jpeg, but file extension indicates image/png"},
		{name: "not an image", path: "/mnt/user-data/workspace/text.png", wantErr: "Error: File contents do not match a supported image format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := viewCall(t, e, tc.path)
			if tc.wantErr != "" {
				wantError(t, res, tc.wantErr)
				if strings.Contains(res.TextContent(), e.home) {
					t.Errorf("error leaks a host path: %q", res.TextContent())
				}
				return
			}
			if res.IsError || res.TextContent() != "Successfully read image" {
				t.Fatalf("result %q", res.TextContent())
			}
			host, _ := e.layout.Resolve(e.user, e.thread, tc.path, 0)
			want := map[string]thread.ViewedImage{tc.path: {MIMEType: tc.mime, Size: tc.size, ActualPath: host}}
			if diff := cmp.Diff(want, res.Update.ViewedImages); diff != "" {
				t.Errorf("viewed_images (-want +got):\n%s", diff)
			}
			for _, b := range res.Content {
				if b.Type != tool.BlockText || len(b.Data) > 0 {
					t.Errorf("the result carries image data: %+v", b.Type)
				}
			}
		})
	}
}

// OS errors are reported with DeerFlow's prefix and the thread's host
// paths masked to virtual ones.
func TestViewImageReadErrorsAreMasked(t *testing.T) {
	e := newThreadEnv(t)
	host := filepath.Join(e.tp.Uploads, "x.png")
	err := &fs.PathError{Op: "open", Path: host, Err: fs.ErrPermission}
	res := osErrorResult("Error reading image file", err, func(err error) string { return e.layout.Mask(e.user, e.thread, err.Error()) })
	want := "Error reading image file: PermissionError: open /mnt/user-data/uploads/x.png: permission denied"
	if !res.IsError || res.TextContent() != want {
		t.Errorf("got %q, want %q", res.TextContent(), want)
	}
	res = osErrorResult("Error reading image metadata", errors.New("stat "+host+": input/output error"), func(err error) string { return e.layout.Mask(e.user, e.thread, err.Error()) })
	if strings.Contains(res.TextContent(), e.home) {
		t.Errorf("host path leaked: %q", res.TextContent())
	}
}

func TestDetectImageMIME(t *testing.T) {
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{pngData, "image/png"}, {jpegData, "image/jpeg"}, {gifData, "image/gif"}, {webpData, "image/webp"},
		{[]byte("GIF87a"), "image/gif"}, {[]byte("RIFF\x00\x00\x00\x00WAVE"), ""}, {[]byte("RIFF"), ""}, {nil, ""},
	} {
		if got := detectImageMIME(tc.data); got != tc.want {
			t.Errorf("detectImageMIME(%q) = %q, want %q", tc.data, got, tc.want)
		}
	}
}

func FuzzViewImagePath(f *testing.F) {
	for _, s := range []string{"/mnt/user-data/workspace/a.png", "/mnt/user-data/uploads/../x", "/mnt/user-data/outputs/\x00.png", "/mnt/user-data/workspace\\..\\..\\x.gif"} {
		f.Add(s)
	}
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, p string) {
		e := &threadEnv{home: home, user: "alice", thread: "t1"}
		var err error
		if e.layout, err = newLayout(home); err != nil {
			t.Fatal(err)
		}
		res := viewCall(t, e, p)
		if !res.IsError {
			t.Fatalf("%q: viewed a file in an empty home", p)
		}
		if strings.Contains(res.TextContent(), home) {
			t.Fatalf("%q: host path leaked: %q", p, res.TextContent())
		}
	})
}
