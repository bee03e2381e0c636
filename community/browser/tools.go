package browser

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/antlerhq/antler/tool"
)

// The tools' names, DeerFlow's.
const (
	NavigateName   = "browser_navigate"
	SnapshotName   = "browser_snapshot"
	ClickName      = "browser_click"
	TypeName       = "browser_type"
	GetTextName    = "browser_get_text"
	BackName       = "browser_back"
	ScreenshotName = "browser_screenshot"
	CloseName      = "browser_close"
)

var (
	//go:embed browser_navigate.md
	navigateDescription string
	//go:embed browser_snapshot.md
	snapshotDescription string
	//go:embed browser_click.md
	clickDescription string
	//go:embed browser_type.md
	typeDescription string
	//go:embed browser_get_text.md
	getTextDescription string
	//go:embed browser_back.md
	backDescription string
	//go:embed browser_screenshot.md
	screenshotDescription string
	//go:embed browser_close.md
	closeDescription string
)

// Tools makes the browser tools over one Manager with one Options (those
// of browser_navigate's entry). A Tools is immutable and its tools are
// safe for concurrent use: calls of one thread take turns.
type Tools struct {
	m *Manager
	o Options
	// now stamps default screenshot names.
	now func() time.Time
}

// NewTools validates o and returns the tools' maker. m must not be nil.
func NewTools(m *Manager, o Options) (*Tools, error) {
	if m == nil {
		return nil, fmt.Errorf("browser tools need a browser manager")
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Tools{m: m, o: o, now: time.Now}, nil
}

// threadOf is the call's thread, or DeerFlow's "default" without one.
func threadOf(call *tool.Call) string {
	if call != nil && call.ThreadID != "" {
		return call.ThreadID
	}
	if id := call.ContextString("thread_id"); id != "" {
		return id
	}
	return "default"
}

// withSession runs f in the call's session (made first when create),
// and turns its failure into an error result; a cancelled ctx stays a Go
// error. The result gets a note of the requests the guard refused.
func (t *Tools) withSession(ctx context.Context, call *tool.Call, create bool, what string,
	f func(s *session) (*tool.Result, error)) (*tool.Result, error) {
	if msg := t.o.cdpRefusal(); msg != "" {
		return tool.Errorf("%s", msg), nil
	}
	s, err := t.m.acquire(ctx, threadOf(call), t.o, create)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return tool.Errorf("%s", err), nil
	}
	defer t.m.release(s)
	res, err := f(s)
	blocked := s.proxy.takeBlocked()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		call.Log().Warn("browser action failed", "tool", what, "err", err)
		res = tool.Errorf("browser %s failed: %s%s", what, describe(err), blockedNote(blocked))
		return res, nil
	}
	if len(blocked) > 0 && len(res.Content) > 0 && !res.IsError {
		res.Content[0].Text += blockedNote(blocked)
	}
	return res, nil
}

// blockedNote tells the model which requests the SSRF guard refused.
func blockedNote(blocked []string) string {
	if len(blocked) == 0 {
		return ""
	}
	return "\n\nThe SSRF guard refused these requests of the page: " + strings.Join(blocked, "; ")
}

// snapshotResult reads the page and renders it after prefix.
func snapshotResult(ctx context.Context, s *session, prefix string) (*tool.Result, error) {
	snap, err := runAction(ctx, s, 0, takeSnapshot())
	if err != nil {
		return nil, err
	}
	body := snap.render()
	if prefix != "" {
		body = prefix + "\n\n" + body
	}
	return tool.Text(body), nil
}

type navigateArgs struct {
	URL string `json:"url" jsonschema:"The http(s) URL to open, with its scheme, e.g. https://example.com."`
}

// Navigate is browser_navigate: it opens a URL, starting the thread's
// session if needed, and returns the page's snapshot.
func (t *Tools) Navigate() *tool.Tool {
	return tool.New(NavigateName, strings.TrimSpace(navigateDescription),
		func(ctx context.Context, call *tool.Call, in navigateArgs) (*tool.Result, error) {
			if msg := t.o.cdpRefusal(); msg != "" {
				return tool.Errorf("%s", msg), nil
			}
			guard := t.o.guard()
			u, err := guard.CheckURLString(in.URL)
			if err == nil {
				_, err = guard.Resolve(ctx, u.Hostname())
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return tool.Errorf("%s", err), nil
			}
			return t.withSession(ctx, call, true, "navigation", func(s *session) (*tool.Result, error) {
				if _, err := runAction(ctx, s, 0, navigate(u.String())); err != nil {
					return nil, err
				}
				return snapshotResult(ctx, s, "Navigated to "+redactURL(u.String())+".")
			})
		})
}

type noArgs struct{}

// Snapshot is browser_snapshot: the current page's elements, again.
func (t *Tools) Snapshot() *tool.Tool {
	return tool.New(SnapshotName, strings.TrimSpace(snapshotDescription),
		func(ctx context.Context, call *tool.Call, _ noArgs) (*tool.Result, error) {
			return t.withSession(ctx, call, false, "snapshot", func(s *session) (*tool.Result, error) {
				return snapshotResult(ctx, s, "")
			})
		})
}

type clickArgs struct {
	Ref int `json:"ref" jsonschema:"The [ref] number of the element to click, from the latest snapshot."`
}

// Click is browser_click: it clicks a snapshot's element and returns the
// new snapshot.
func (t *Tools) Click() *tool.Tool {
	return tool.New(ClickName, strings.TrimSpace(clickDescription),
		func(ctx context.Context, call *tool.Call, in clickArgs) (*tool.Result, error) {
			return t.withSession(ctx, call, false, "click", func(s *session) (*tool.Result, error) {
				n, err := runAction(ctx, s, 0, refCount(in.Ref))
				if err != nil {
					return nil, err
				}
				if n == 0 {
					return nil, modelError{fmt.Sprintf("element [%d] is no longer on the page; call browser_snapshot to get fresh refs", in.Ref)}
				}
				if _, err := runAction(ctx, s, clickTimeout, clickRef(in.Ref)); err != nil {
					if ctx.Err() == nil && strings.HasPrefix(err.Error(), "timed out") {
						return nil, modelError{fmt.Sprintf("element [%d] was not clickable within %s; the page may have changed, call browser_snapshot and retry", in.Ref, clickTimeout)}
					}
					return nil, err
				}
				return snapshotResult(ctx, s, fmt.Sprintf("Clicked element [%d].", in.Ref))
			})
		})
}

type typeArgs struct {
	Ref    int    `json:"ref" jsonschema:"The [ref] number of the input or textarea to type into."`
	Text   string `json:"text" jsonschema:"The text to enter; it replaces the field's content."`
	Submit bool   `json:"submit,omitempty" jsonschema:"When true, press Enter after typing, e.g. to run a search or send a form."`
}

// Type is browser_type: it replaces a field's text, optionally presses
// Enter, and returns the new snapshot.
func (t *Tools) Type() *tool.Tool {
	return tool.New(TypeName, strings.TrimSpace(typeDescription),
		func(ctx context.Context, call *tool.Call, in typeArgs) (*tool.Result, error) {
			if n := len([]rune(in.Text)); n > maxTypeChars {
				return tool.Errorf("text has %d characters; browser_type takes at most %d", n, maxTypeChars), nil
			}
			return t.withSession(ctx, call, false, "typing", func(s *session) (*tool.Result, error) {
				if _, err := runAction(ctx, s, 0, typeInto(in.Ref, in.Text, in.Submit)); err != nil {
					return nil, err
				}
				done := fmt.Sprintf("Typed into element [%d].", in.Ref)
				if in.Submit {
					done = fmt.Sprintf("Typed into element [%d] and submitted.", in.Ref)
				}
				return snapshotResult(ctx, s, done)
			})
		})
}

// GetText is browser_get_text: the page's visible text, at most maxChars
// characters (0 means DefaultMaxChars).
func (t *Tools) GetText(maxChars int) *tool.Tool {
	if maxChars <= 0 {
		maxChars = DefaultMaxChars
	}
	maxChars = min(maxChars, MaxMaxChars)
	return tool.New(GetTextName, strings.TrimSpace(getTextDescription),
		func(ctx context.Context, call *tool.Call, _ noArgs) (*tool.Result, error) {
			return t.withSession(ctx, call, false, "text read", func(s *session) (*tool.Result, error) {
				r, err := runAction(ctx, s, 0, pageText(maxChars))
				if err != nil {
					return nil, err
				}
				text := r.text
				if strings.TrimSpace(text) == "" {
					text = "(page has no visible text)"
				}
				if r.cut {
					text += fmt.Sprintf("\n\n[cut at %d characters]", maxChars)
				}
				return tool.Text(text), nil
			})
		})
}

// Back is browser_back: one page back, and its snapshot.
func (t *Tools) Back() *tool.Tool {
	return tool.New(BackName, strings.TrimSpace(backDescription),
		func(ctx context.Context, call *tool.Call, _ noArgs) (*tool.Result, error) {
			return t.withSession(ctx, call, false, "back", func(s *session) (*tool.Result, error) {
				if _, err := runAction(ctx, s, 0, back()); err != nil {
					return nil, err
				}
				return snapshotResult(ctx, s, "Went back.")
			})
		})
}

// Close is browser_close: it closes the thread's session.
func (t *Tools) Close() *tool.Tool {
	return tool.New(CloseName, strings.TrimSpace(closeDescription),
		func(_ context.Context, call *tool.Call, _ noArgs) (*tool.Result, error) {
			if t.m.CloseThread(threadOf(call)) {
				return tool.Text("Browser session closed."), nil
			}
			return tool.Text("No active browser session to close."), nil
		})
}

// All returns the eight tools, maxChars being browser_get_text's.
func (t *Tools) All(maxChars int) []*tool.Tool {
	return []*tool.Tool{t.Navigate(), t.Snapshot(), t.Click(), t.Type(), t.GetText(maxChars), t.Back(),
		t.Screenshot(), t.Close()}
}
