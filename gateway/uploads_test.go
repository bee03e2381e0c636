package gateway_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// outsideDir is a folder outside the gateway's home holding one secret
// file; dirNames lists it, to prove that nothing was written or deleted.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("outside secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// replaceWithSymlink replaces the folder p with a symlink to target.
func replaceWithSymlink(t *testing.T, p, target string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// detail is the FastAPI error text of an answer.
func detail(t *testing.T, body []byte) string {
	t.Helper()
	var out struct {
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	return out.Detail
}

// TestUploads_symlinkedFolderIsRefused: with the thread's uploads folder,
// or its whole user-data folder, replaced by a symlink to a folder outside
// (host bash or an MCP stdio server can plant one), no uploads or
// artifacts route reads, writes or deletes a file there: each answers 403
// naming the problem (404 for the artifact), and the outside folder is
// unchanged.
func TestUploads_symlinkedFolderIsRefused(t *testing.T) {
	for _, which := range []string{"uploads", "user-data"} {
		t.Run(which, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			tid, tp := e.newThread()
			outside := outsideDir(t)
			secret := "secret.txt"
			if which == "uploads" {
				replaceWithSymlink(t, tp.Uploads, outside)
			} else {
				if err := os.MkdirAll(filepath.Join(outside, "uploads"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(outside, "uploads", "secret.txt"), []byte("outside secret"), 0o644); err != nil {
					t.Fatal(err)
				}
				replaceWithSymlink(t, tp.UserData, outside)
			}
			before := dirNames(t, outside)
			var beforeUploads []string
			if which == "user-data" {
				beforeUploads = dirNames(t, filepath.Join(outside, "uploads"))
			}

			resp := e.do("GET", "/api/threads/"+tid+"/uploads/list", "", nil)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 403 || strings.Contains(string(body), secret) || !strings.Contains(detail(t, body), "leave the thread's folder") {
				t.Errorf("list = %d %s, want 403 naming the problem", resp.StatusCode, body)
			}
			checkFileHeaders(t, resp, false)

			code, up := e.upload(tid, "", map[string]string{"planted.txt": "written outside?"})
			if code != 403 || !strings.Contains(up["detail"].(string), "leave the thread's folder") {
				t.Errorf("upload = %d %v, want 403 naming the problem", code, up)
			}

			resp = e.do("DELETE", "/api/threads/"+tid+"/uploads/"+secret, "", nil)
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 403 {
				t.Errorf("delete = %d %s, want 403", resp.StatusCode, body)
			}

			resp = e.do("GET", "/api/threads/"+tid+"/artifacts/mnt/user-data/uploads/"+secret, "", nil)
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if (resp.StatusCode != 403 && resp.StatusCode != 404) || strings.Contains(string(body), "outside secret") {
				t.Errorf("artifact = %d %s, want 403 or 404", resp.StatusCode, body)
			}

			if diff := cmp.Diff(before, dirNames(t, outside)); diff != "" {
				t.Errorf("outside folder changed (-before +after):\n%s", diff)
			}
			if which == "user-data" {
				if diff := cmp.Diff(beforeUploads, dirNames(t, filepath.Join(outside, "uploads"))); diff != "" {
					t.Errorf("outside uploads folder changed (-before +after):\n%s", diff)
				}
			}
		})
	}
}

// TestUploads_fileSymlinkIsNotFollowed: a symlink inside the uploads
// folder to a file outside is not listed, not deleted through, not
// written through by an upload of the same name (the upload replaces the
// link), and not served as an artifact.
func TestUploads_fileSymlinkIsNotFollowed(t *testing.T) {
	e := newEnv(t, envOptions{})
	tid, tp := e.newThread()
	outside := outsideDir(t)
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(tp.Uploads, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tp.Uploads, "dir")); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Files []map[string]any `json:"files"`
		Count int              `json:"count"`
	}
	e.json("GET", "/api/threads/"+tid+"/uploads/list", "", nil, 200, &list)
	if list.Count != 0 {
		t.Errorf("list shows symlinks: %v", list.Files)
	}
	for _, p := range []string{"uploads/link.txt", "uploads/dir/secret.txt"} {
		resp := e.do("GET", "/api/threads/"+tid+"/artifacts/mnt/user-data/"+p, "", nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || strings.Contains(string(body), "outside secret") {
			t.Errorf("artifact %s = %d %s", p, resp.StatusCode, body)
		}
	}
	if got := e.status("DELETE", "/api/threads/"+tid+"/uploads/link.txt", "", nil); got != 404 {
		t.Errorf("delete through the link = %d, want 404", got)
	}
	if code, up := e.upload(tid, "", map[string]string{"link.txt": "new content"}); code != 200 {
		t.Fatalf("upload over the link = %d %v", code, up)
	}
	data, err := os.ReadFile(filepath.Join(outside, "secret.txt"))
	if err != nil || string(data) != "outside secret" {
		t.Errorf("outside file = %q, %v", data, err)
	}
	if fi, err := os.Lstat(filepath.Join(tp.Uploads, "link.txt")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("link.txt after the upload: %v %v, want a regular file", fi, err)
	}
	if diff := cmp.Diff([]string{"secret.txt"}, dirNames(t, outside)); diff != "" {
		t.Errorf("outside folder changed (-want +got):\n%s", diff)
	}
}

// TestUploads_staleTempFilesAreReclaimed: temporary upload files a crash
// left behind are deleted when the thread's uploads are next served (list
// or upload) once they are older than the bound; a recent one, possibly
// an upload in flight, is kept. Neither is ever listed.
func TestUploads_staleTempFilesAreReclaimed(t *testing.T) {
	e := newEnv(t, envOptions{})
	tid, tp := e.newThread()
	old := time.Now().Add(-2 * time.Hour)
	plant := func(name string, mtime time.Time) {
		p := filepath.Join(tp.Uploads, name)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	plant(".upload-crashed", old)
	plant(".upload-in-flight", time.Now())
	plant("kept.txt", old)

	var list struct {
		Files []map[string]any `json:"files"`
	}
	e.json("GET", "/api/threads/"+tid+"/uploads/list", "", nil, 200, &list)
	if len(list.Files) != 1 || list.Files[0]["filename"] != "kept.txt" {
		t.Errorf("list = %v, want kept.txt only", list.Files)
	}
	if diff := cmp.Diff([]string{".upload-in-flight", "kept.txt"}, dirNames(t, tp.Uploads)); diff != "" {
		t.Errorf("after list (-want +got):\n%s", diff)
	}

	plant(".upload-crashed-again", old)
	if code, up := e.upload(tid, "", map[string]string{"new.txt": "n"}); code != 200 {
		t.Fatalf("upload = %d %v", code, up)
	}
	got := dirNames(t, tp.Uploads)
	if slices.Contains(got, ".upload-crashed-again") || !slices.Contains(got, ".upload-in-flight") {
		t.Errorf("after upload: %v", got)
	}
	if diff := cmp.Diff([]string{".upload-in-flight", "kept.txt", "new.txt"}, got); diff != "" {
		t.Errorf("after upload (-want +got):\n%s", diff)
	}
}

// TestUploads_answersCarryTheFileHeaders: every uploads route answers
// with nosniff and the script-forbidding Content-Security-Policy, errors
// included.
func TestUploads_answersCarryTheFileHeaders(t *testing.T) {
	e := newEnv(t, envOptions{})
	tid, _ := e.newThread()
	if code, _ := e.upload(tid, "", map[string]string{"a.txt": "a"}); code != 200 {
		t.Fatalf("upload = %d", code)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/threads/" + tid + "/uploads/list"},
		{"GET", "/api/threads/" + tid + "/uploads/limits"},
		{"DELETE", "/api/threads/" + tid + "/uploads/a.txt"},
		{"DELETE", "/api/threads/" + tid + "/uploads/missing.txt"},
		{"POST", "/api/threads/" + tid + "/uploads"}, // not multipart: 400
		{"GET", "/api/threads/" + tid + "/artifacts/mnt/user-data/uploads/missing.txt"},
	} {
		resp := e.do(c.method, c.path, "", nil)
		resp.Body.Close()
		checkFileHeaders(t, resp, false)
	}
}
