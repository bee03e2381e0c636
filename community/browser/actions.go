package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Timeouts of the interactions, as DeerFlow's: a click that cannot
// happen fails fast so that the model re-reads the page, and the wait
// for a page that a click or a submit loads is best effort.
const (
	clickTimeout = 8 * time.Second
	// navStartGrace is how long after a click or Enter a navigation may
	// take to start; settleTimeout how long its document may take to load.
	navStartGrace = 500 * time.Millisecond
	settleTimeout = 3 * time.Second
	// maxTypeChars bounds browser_type's text.
	maxTypeChars = 10_000
	// maxScreenshotBytes bounds a screenshot; maxFullPageHeight the
	// height a full-page screenshot covers, in CSS pixels.
	maxScreenshotBytes = 20 << 20
	maxFullPageHeight  = 16384
)

// navigate opens url and waits for its document (DOMContentLoaded), not
// for every subresource.
func navigate(url string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		loaded := cdp.Events(lctx, t, page.DomContentEventFired)
		res, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: url})
		if err != nil {
			return chromedp.Void{}, err
		}
		if res.ErrorText != "" {
			return chromedp.Void{}, fmt.Errorf("navigation failed: %s", res.ErrorText)
		}
		if res.LoaderID == "" {
			return chromedp.Void{}, nil // same-document navigation: nothing loads
		}
		for _, err := range loaded {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, nil
	}
}

// settle runs trigger and then, if a navigation starts within
// navStartGrace, waits up to settleTimeout for its document. Neither
// wait is an error: a single-page app may never load a new document.
func settle(trigger chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		started := cdp.Events(lctx, t, page.FrameStartedLoading)
		loaded := cdp.Events(lctx, t, page.DomContentEventFired)
		if _, err := trigger(ctx, t); err != nil {
			return chromedp.Void{}, err
		}
		if !firstWithin(ctx, started, navStartGrace) {
			return chromedp.Void{}, ctx.Err()
		}
		firstWithin(ctx, loaded, settleTimeout)
		return chromedp.Void{}, ctx.Err()
	}
}

// firstWithin reports whether events yields a payload within d.
func firstWithin[E any](ctx context.Context, events func(func(E, error) bool), d time.Duration) bool {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	got := make(chan bool, 1)
	go func() {
		for _, err := range events {
			got <- err == nil
			return
		}
		got <- false
	}()
	select {
	case ok := <-got:
		return ok
	case <-wctx.Done():
		return false
	}
}

// takeSnapshot reads the page's interactive elements.
func takeSnapshot() chromedp.Action[pageSnapshot] {
	return chromedp.Evaluate[pageSnapshot](snapshotJS)
}

// refSelector is the CSS selector of a snapshot's element ref.
func refSelector(ref int) string { return fmt.Sprintf(`[%s="%d"]`, refAttr, ref) }

// refCount is how many elements carry ref.
func refCount(ref int) chromedp.Action[int] {
	return chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, refSelector(ref)))
}

// clickRef clicks the element of ref with the mouse, at its centre.
func clickRef(ref int) chromedp.Action[chromedp.Void] {
	return settle(chromedp.Click(chromedp.CSS(refSelector(ref))))
}

// fillJS focuses a text field, empties it and selects nothing, returning
// "" or why it cannot be typed into.
const fillJS = `((sel) => {
  const el = document.querySelector(sel);
  if (!el) return "is no longer on the page; call browser_snapshot to get fresh refs";
  const tag = el.tagName.toLowerCase();
  if (el.isContentEditable) {
    el.focus();
    document.getSelection().selectAllChildren(el);
    document.execCommand("delete");
    return "";
  }
  if (tag !== "input" && tag !== "textarea") return "is a " + tag + ", not a text field";
  if (el.disabled || el.readOnly) return "is disabled or read-only";
  el.focus();
  el.value = "";
  el.dispatchEvent(new Event("input", {bubbles: true}));
  return "";
})(%q)`

// typeInto empties ref's field and inserts text as typed input; with
// submit it presses Enter after.
func typeInto(ref int, text string, submit bool) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		why, err := chromedp.Evaluate[string](fmt.Sprintf(fillJS, refSelector(ref)))(ctx, t)
		if err != nil {
			return chromedp.Void{}, err
		}
		if why != "" {
			return chromedp.Void{}, modelError{fmt.Sprintf("element [%d] %s", ref, why)}
		}
		if text != "" {
			if _, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
				return chromedp.Void{}, err
			}
		}
		if !submit {
			return chromedp.Void{}, nil
		}
		return settle(chromedp.KeyEvent(kb.Enter))(ctx, t)
	}
}

// textJS returns the page's visible text, cut to %d UTF-16 units in the
// page so that a huge page never crosses the protocol whole.
const textJS = `(document.body ? document.body.innerText : "").slice(0, %d)`

// pageText is the page's visible text, at most maxChars characters, and
// whether it was cut.
func pageText(maxChars int) chromedp.Action[textResult] {
	return func(ctx context.Context, t *chromedp.Target) (textResult, error) {
		// 2 units per character covers any text; one more tells a cut.
		s, err := chromedp.Evaluate[string](fmt.Sprintf(textJS, 2*maxChars+1))(ctx, t)
		if err != nil {
			return textResult{}, err
		}
		if utf8.RuneCountInString(s) <= maxChars {
			return textResult{text: s}, nil
		}
		r := []rune(s)
		return textResult{text: string(r[:maxChars]), cut: true}, nil
	}
}

type textResult struct {
	text string
	cut  bool
}

// back goes one entry back in the tab's history.
func back() chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		h, err := cdp.Call(ctx, t, page.GetNavigationHistory, cdp.Empty{})
		if err != nil {
			return chromedp.Void{}, err
		}
		// The tab's first entry is the blank page it opened with.
		if h.CurrentIndex <= 0 || int(h.CurrentIndex) >= len(h.Entries) ||
			h.CurrentIndex == 1 && h.Entries[0].URL == "about:blank" {
			return chromedp.Void{}, modelError{"there is no previous page in this browser session's history"}
		}
		entry := h.Entries[h.CurrentIndex-1].ID
		return settle(func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, t, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: entry})
			return chromedp.Void{}, err
		})(ctx, t)
	}
}

// screenshot captures the viewport, or the page up to maxFullPageHeight
// CSS pixels, as PNG.
func screenshot(fullPage bool) chromedp.Action[[]byte] {
	return func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, FromSurface: new(true)}
		if fullPage {
			m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
			if err != nil {
				return nil, err
			}
			if cs := m.CSSContentSize; cs != nil {
				p.CaptureBeyondViewport = new(true)
				p.Clip = &page.Viewport{X: 0, Y: 0, Width: min(cs.Width, maxFullPageHeight),
					Height: min(cs.Height, maxFullPageHeight), Scale: 1}
			}
		}
		r, err := cdp.Call(ctx, t, page.CaptureScreenshot, p)
		if err != nil {
			return nil, err
		}
		if len(r.Data) > maxScreenshotBytes {
			return nil, modelError{fmt.Sprintf("the screenshot is larger than %d bytes; capture the viewport instead of the full page", maxScreenshotBytes)}
		}
		return r.Data, nil
	}
}

// modelError is a failure the model can act on, reported as it is.
type modelError struct{ msg string }

func (e modelError) Error() string { return e.msg }

// describe turns an action's error into the text of an error result.
func describe(err error) string {
	var me modelError
	if errors.As(err, &me) {
		return me.msg
	}
	return strings.TrimPrefix(err.Error(), "chromedp: ")
}
