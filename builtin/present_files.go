package builtin

import (
	"context"
	_ "embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// PresentFilesName is the name of the present_files tool.
const PresentFilesName = "present_files"

//go:embed present_files.md
var presentFilesDescription string

type presentFilesArgs struct {
	Filepaths []string `json:"filepaths" jsonschema:"Absolute paths of the files to present. Only files in /mnt/user-data/outputs can be presented."`
}

// NewPresentFiles returns the present_files tool (DeerFlow's
// present_file_tool.py). Each path may be a virtual path (/mnt/user-data/...) or a host
// path inside the thread's outputs folder; it is resolved through layout
// for the call's user and thread, with symlinks resolved, and must lie in
// the outputs folder. All or nothing: one bad path rejects the call. On
// success the result carries a thread.Update adding the paths, normalised
// to /mnt/user-data/outputs/..., to the thread's artifacts.
//
// Beyond DeerFlow, a path that does not exist is an error instead of an
// artifact the user cannot open.
//
// NewPresentFiles panics if layout is nil (a wiring mistake).
func NewPresentFiles(layout *vpath.Layout) *tool.Tool {
	if layout == nil {
		panic("builtin.NewPresentFiles: layout is nil")
	}
	return tool.New(PresentFilesName, strings.TrimSpace(presentFilesDescription),
		func(ctx context.Context, call *tool.Call, in presentFilesArgs) (*tool.Result, error) {
			return presentFiles(layout, call, in.Filepaths), nil
		})
}

func presentFiles(layout *vpath.Layout, call *tool.Call, paths []string) *tool.Result {
	if call == nil || call.State == nil {
		return tool.Errorf("Thread runtime state is not available")
	}
	threadID := callThreadID(call)
	if threadID == "" {
		return tool.Errorf("Thread ID is not available in runtime context or runtime config")
	}
	user := callUserID(call)
	tp, err := layout.ThreadPaths(user, threadID)
	if err != nil {
		return pathErrorResult(err)
	}
	base, outputs, res := threadOutputs(tp)
	if res != nil {
		return res
	}
	// A thread without a folder yet has no files: root stays nil.
	root, err := os.OpenRoot(base)
	if err == nil {
		defer root.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return tool.Errorf("Cannot access %s: %s", vpath.Outputs, errorKind(err))
	}
	artifacts := make([]string, 0, len(paths))
	for _, p := range paths {
		a, res := presentedPath(layout, user, threadID, root, base, outputs, p)
		if res != nil {
			return res
		}
		artifacts = append(artifacts, a)
	}
	r := tool.Text("Successfully presented files")
	r.Update = &thread.Update{Artifacts: artifacts}
	return r
}

// threadOutputs returns the thread's folder and its outputs folder with
// symlinks resolved, or the error result when the outputs folder (or
// user-data) is a symlink that leads out of the thread's folder: files
// there are not the thread's, and the artifacts route would refuse them.
func threadOutputs(tp vpath.ThreadPaths) (base, outputs string, res *tool.Result) {
	base = realPath(tp.Base)
	rel, err := filepath.Rel(tp.Base, tp.Outputs)
	if err != nil {
		return "", "", tool.Errorf("Cannot access %s: %s", vpath.Outputs, errorKind(err))
	}
	outputs = realPath(tp.Outputs)
	if outputs != filepath.Join(base, rel) {
		return "", "", tool.Errorf("Cannot present files: %s is a symbolic link out of the thread's folder", vpath.Outputs)
	}
	return base, outputs, nil
}

// presentedPath returns the artifact path of p, or the error result that
// rejects the call. The file is looked at through root, the thread's
// folder (base, resolved), so no symlink swapped in leads out of it.
func presentedPath(layout *vpath.Layout, user, threadID string, root *os.Root, base, outputs, p string) (string, *tool.Result) {
	var host string
	if stripped := strings.TrimLeft(p, "/"); stripped == strings.TrimPrefix(vpath.UserData, "/") ||
		strings.HasPrefix(stripped, strings.TrimPrefix(vpath.UserData, "/")+"/") {
		t, err := layout.ResolveTarget(user, threadID, "/"+stripped, vpath.Read)
		if err != nil {
			if errors.Is(err, vpath.ErrNotAllowed) {
				return "", outsideOutputs(p)
			}
			return "", pathErrorResult(err)
		}
		host = t.Host
	} else {
		host = expandHome(p)
		abs, err := filepath.Abs(host)
		if err != nil {
			return "", outsideOutputs(p)
		}
		host = abs
	}
	real := realPath(host)
	rel, err := filepath.Rel(outputs, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", outsideOutputs(p)
	}
	inBase, err := filepath.Rel(base, real)
	if err != nil || !filepath.IsLocal(inBase) {
		return "", outsideOutputs(p)
	}
	if root == nil {
		return "", notFound(p)
	}
	if _, err := root.Stat(inBase); err != nil {
		if strings.Contains(err.Error(), "path escapes from parent") {
			return "", tool.Errorf("%s", vpath.TraversalMessage)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", notFound(p)
		}
		return "", tool.Errorf("Cannot access %s: %s", p, errorKind(err))
	}
	return vpath.Outputs + "/" + filepath.ToSlash(rel), nil
}

func notFound(p string) *tool.Result {
	return tool.Errorf("File not found: %s. Write it to %s first, then present it.", p, vpath.Outputs)
}

func outsideOutputs(p string) *tool.Result {
	return tool.Errorf("Only files in %s can be presented: %s", vpath.Outputs, p)
}

// callThreadID is the call's thread, or the runtime context's thread_id.
func callThreadID(call *tool.Call) string {
	if call.ThreadID != "" {
		return call.ThreadID
	}
	return call.ContextString("thread_id")
}

// callUserID is the call's user, or the runtime context's user_id, or
// DeerFlow's "default".
func callUserID(call *tool.Call) string {
	if call.UserID != "" {
		return call.UserID
	}
	if u := call.ContextString("user_id"); u != "" {
		return u
	}
	return "default"
}

// pathErrorResult is the result for a path the layout refused.
func pathErrorResult(err error) *tool.Result {
	var ve *vpath.Error
	if errors.As(err, &ve) {
		return tool.Errorf("%s", ve.Msg)
	}
	return tool.Errorf("%s", err.Error())
}

// expandHome expands a leading ~ or ~/ to the user's home directory, as
// Python's Path.expanduser does for the current user.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~"))
}

// realPath resolves every symlink of p; for a path that does not exist,
// the deepest existing ancestor is resolved and the rest kept as it is.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir := filepath.Dir(p)
	if dir == p {
		return p
	}
	return filepath.Join(realPath(dir), filepath.Base(p))
}

// errorKind describes an OS error without its path (which may be a host
// path).
func errorKind(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
