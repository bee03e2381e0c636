package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// outputsVirtual is where screenshots appear to the model and the user.
const outputsVirtual = "/mnt/user-data/outputs"

type screenshotArgs struct {
	Filename string `json:"filename,omitempty" jsonschema:"Optional file name; directories are dropped and the extension is always .png."`
	FullPage bool   `json:"full_page,omitempty" jsonschema:"Capture the whole scrollable page instead of the visible viewport."`
}

// Screenshot is browser_screenshot: a PNG of the session's page written
// into the thread's outputs folder, returned as its virtual path and
// recorded as an artifact.
func (t *Tools) Screenshot() *tool.Tool {
	return tool.New(ScreenshotName, strings.TrimSpace(screenshotDescription),
		func(ctx context.Context, call *tool.Call, in screenshotArgs) (*tool.Result, error) {
			dir, rel := t.outputsDir(call)
			if dir == "" {
				return tool.Errorf("Thread outputs path is not available"), nil
			}
			return t.withSession(ctx, call, false, "screenshot", func(s *session) (*tool.Result, error) {
				png, err := runAction(ctx, s, 0, screenshot(in.FullPage))
				if err != nil {
					return nil, err
				}
				name := t.screenshotName(in.Filename)
				if err := writeFile(dir, rel, name, png); err != nil {
					return nil, fmt.Errorf("cannot write the screenshot: %w", err)
				}
				virtual := outputsVirtual + "/" + name
				res := tool.Text("Saved browser screenshot: " + virtual)
				res.Update = &thread.Update{Artifacts: []string{virtual}}
				return res, nil
			})
		})
}

// outputsDir locates the call's thread outputs: Options.Outputs, else
// the state's thread_data (as a folder of its own); "" when neither
// knows it.
func (t *Tools) outputsDir(call *tool.Call) (dir, rel string) {
	if t.o.Outputs != nil {
		user := "default"
		if call != nil && call.UserID != "" {
			user = call.UserID
		} else if u := call.ContextString("user_id"); u != "" {
			user = u
		}
		dir, rel, err := t.o.Outputs(user, threadOf(call))
		if err == nil {
			return dir, rel
		}
		call.Log().Warn("browser_screenshot: no outputs folder for the thread", "err", err)
	}
	if call != nil && call.State != nil && call.State.ThreadData != nil && call.State.ThreadData.OutputsPath != "" {
		return call.State.ThreadData.OutputsPath, "."
	}
	return "", ""
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// screenshotName is the model's file name without directories and
// extension, or browser-capture-<UTC time>; unsafe characters become
// "_", at most 100 of them, then ".png" (DeerFlow's rule).
func (t *Tools) screenshotName(filename string) string {
	stem := ""
	if filename != "" {
		base := path.Base(strings.ReplaceAll(filename, `\`, "/"))
		stem = strings.TrimSuffix(base, path.Ext(base))
	} else {
		stem = "browser-capture-" + t.now().UTC().Format("20060102-150405")
	}
	stem = strings.Trim(unsafeName.ReplaceAllString(stem, "_"), "._-")
	if len(stem) > 100 {
		stem = stem[:100]
	}
	if stem == "" {
		stem = "browser-capture"
	}
	return stem + ".png"
}

// writeFile writes data to rel/name under dir (rel made if missing)
// through a temporary file renamed into place, all inside an os.Root at
// dir, so that no symlink can lead it out of dir. An existing file of
// that name is replaced, as DeerFlow replaces it.
func writeFile(dir, rel, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(rel, 0o755); err != nil {
		return err
	}
	final := path.Join(rel, name)
	tmp := path.Join(rel, "."+name+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	werr = errors.Join(werr, f.Close())
	if werr == nil {
		werr = root.Rename(tmp, final)
	}
	if werr != nil {
		_ = root.Remove(tmp)
	}
	return werr
}
