package builtin

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// ViewImageName is the name of the view_image tool.
const ViewImageName = "view_image"

// maxImageBytes is the largest image view_image accepts (20 MiB).
const maxImageBytes = 20 * 1024 * 1024

//go:embed view_image.md
var viewImageDescription string

// imageRoots are the virtual roots view_image reads from.
var imageRoots = []string{vpath.Workspace, vpath.Uploads, vpath.Outputs}

// imageExtensions maps the supported extensions to their MIME types, in
// DeerFlow's order (its error text lists them so).
var imageExtensions = []struct{ ext, mime string }{
	{".jpg", "image/jpeg"},
	{".jpeg", "image/jpeg"},
	{".png", "image/png"},
	{".webp", "image/webp"},
	{".gif", "image/gif"},
}

type viewImageArgs struct {
	ImagePath string `json:"image_path" jsonschema:"Absolute /mnt/user-data virtual path to the image file. Supported formats: jpg, jpeg, png, webp, gif."`
}

// NewViewImage returns the view_image tool (DeerFlow's view_image_tool.py),
// bound only when the run's model supports vision. It checks, in order:
// the path is under /mnt/user-data/{workspace,uploads,outputs}; it
// resolves inside the thread's folders (symlink escapes refused); it
// exists and is a file; the extension is .jpg, .jpeg, .png, .webp or .gif;
// the size is at most 20 MiB; the bytes read match the size; the
// magic bytes name a supported format that agrees with the extension.
// The file is opened through os.Root at the thread's folder, so a symlink
// swapped in after the check, even for the user-data folder itself, cannot
// lead outside it.
//
// On success the result's update records only metadata in viewed_images
// ({mime_type, size, actual_path}); the bytes reach the model through
// [ViewImageMiddleware], never the thread state. Error texts never contain
// host paths.
//
// NewViewImage panics if layout is nil (a wiring mistake).
func NewViewImage(layout *vpath.Layout) *tool.Tool {
	if layout == nil {
		panic("builtin.NewViewImage: layout is nil")
	}
	return tool.New(ViewImageName, strings.TrimSpace(viewImageDescription),
		func(ctx context.Context, call *tool.Call, in viewImageArgs) (*tool.Result, error) {
			return viewImage(layout, call, in.ImagePath), nil
		})
}

func viewImage(layout *vpath.Layout, call *tool.Call, imagePath string) *tool.Result {
	if !underImageRoot(imagePath) {
		return tool.Errorf("Only image paths under %s are allowed", strings.Join(imageRoots, ", "))
	}
	user, threadID := callUserID(call), callThreadID(call)
	t, err := layout.ResolveTarget(user, threadID, imagePath, vpath.Read)
	if err != nil {
		return pathErrorResult(err)
	}
	img, res := readImage(t, rootFor(layout, user, threadID, t), imagePath,
		func(err error) string { return layout.Mask(user, threadID, err.Error()) })
	if res != nil {
		return res
	}
	r := tool.Text("Successfully read image")
	r.Update = &thread.Update{ViewedImages: map[string]thread.ViewedImage{
		t.Virtual: {MIMEType: img.mime, Size: img.size, ActualPath: t.Host},
	}}
	return r
}

func underImageRoot(p string) bool {
	for _, r := range imageRoots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

type imageFile struct {
	mime string
	size int64
	data []byte
}

// readImage runs checks 3 to 7 of view_image on a resolved target, opened
// through os.Root at at, and returns the image, or the error result. mask
// turns an OS error into text without host paths.
func readImage(t vpath.Target, at openAt, shown string, mask func(error) string) (*imageFile, *tool.Result) {
	root, err := os.OpenRoot(at.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, tool.Errorf("Image file not found: %s", shown)
		}
		return nil, osErrorResult("Error reading image metadata", err, mask)
	}
	defer root.Close()
	fi, err := root.Stat(at.rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, tool.Errorf("Image file not found: %s", shown)
		}
		if strings.Contains(err.Error(), "escapes from parent") {
			return nil, tool.Errorf("%s", vpath.TraversalMessage)
		}
		return nil, osErrorResult("Error reading image metadata", err, mask)
	}
	if !fi.Mode().IsRegular() {
		return nil, tool.Errorf("Path is not a file: %s", shown)
	}
	suffix := path.Ext(t.Virtual)
	expected := ""
	for _, e := range imageExtensions {
		if strings.EqualFold(suffix, e.ext) {
			expected = e.mime
		}
	}
	if expected == "" {
		exts := make([]string, len(imageExtensions))
		for i, e := range imageExtensions {
			exts[i] = e.ext
		}
		return nil, tool.Errorf("Unsupported image format: %s. Supported formats: %s", suffix, strings.Join(exts, ", "))
	}
	size := fi.Size()
	if size > maxImageBytes {
		return nil, tool.Errorf("Image file is too large: %d bytes. Maximum supported size is %d bytes", size, maxImageBytes)
	}
	f, err := root.Open(at.rel)
	if err != nil {
		return nil, osErrorResult("Error reading image file", err, mask)
	}
	defer f.Close()
	// Read one byte more than expected, so that growth is noticed without
	// reading an unbounded file.
	data, err := io.ReadAll(io.LimitReader(f, size+1))
	if err != nil {
		return nil, osErrorResult("Error reading image file", err, mask)
	}
	if int64(len(data)) != size {
		return nil, tool.Errorf("Image file changed during read")
	}
	detected := detectImageMIME(data)
	if detected == "" {
		return nil, tool.Errorf("File contents do not match a supported image format")
	}
	if detected != expected {
		return nil, tool.Errorf("Image contents are %s, but file extension indicates %s", detected, expected)
	}
	return &imageFile{mime: detected, size: size, data: data}, nil
}

// osErrorResult is DeerFlow's "Error reading image ...: {Kind}: {error}"
// text, with host paths masked.
func osErrorResult(prefix string, err error, mask func(error) string) *tool.Result {
	kind := "OSError"
	switch {
	case errors.Is(err, fs.ErrPermission):
		kind = "PermissionError"
	case errors.Is(err, fs.ErrNotExist):
		kind = "FileNotFoundError"
	}
	return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: fmt.Sprintf("%s: %s: %s", prefix, kind, mask(err))}}, IsError: true}
}

// detectImageMIME returns the MIME type named by data's magic bytes (JPEG,
// PNG, WEBP or GIF), or "".
func detectImageMIME(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case len(data) >= 12 && bytes.HasPrefix(data, []byte("RIFF")) && string(data[8:12]) == "WEBP":
		return "image/webp"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	}
	return ""
}
