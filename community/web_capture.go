package community

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/antlerhq/antler/community/netguard"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

//go:embed web_capture.md
var webCaptureDescription string

// outputsVirtual is where captures appear to the model and the user.
const outputsVirtual = "/mnt/user-data/outputs"

// Limits of web_capture.
const (
	defaultCaptureMaxBytes = 20 << 20 // a full-page PNG can be large
	maxCaptureNameProbes   = 1000     // -1 .. -1000 before a timestamp suffix
	maxViewport            = 16384
)

// CaptureOptions configure web_capture, which renders a page with
// Browserless's POST /screenshot and writes the image into the thread's
// outputs folder. The zero value captures a full-page 1280x720 PNG from
// http://localhost:3032 with the SSRF guard on.
type CaptureOptions struct {
	// APIKey is unused (Browserless takes Token); BaseURL is the
	// Browserless instance; Timeout defaults to 30 s.
	ProviderOptions    `yaml:",inline"`
	BrowserlessOptions `yaml:",inline"`
	// OutputFormat is "png" (default), "jpeg" or "webp".
	OutputFormat string `yaml:"output_format"`
	// FullPage (default true) captures the whole page, not the viewport.
	FullPage *bool `yaml:"full_page"`
	// ViewportWidth and ViewportHeight default to 1280 and 720.
	ViewportWidth  int `yaml:"viewport_width"`
	ViewportHeight int `yaml:"viewport_height"`
	// Quality (0..100) applies to jpeg and webp; nil is Browserless's.
	Quality *int `yaml:"quality"`
	// BestAttempt captures the current state when a wait times out.
	BestAttempt bool `yaml:"best_attempt"`
	// MaxBytes caps the screenshot read (default 20 MiB); a larger one is
	// an error, not a cut image.
	MaxBytes int64 `yaml:"max_bytes"`
	// AllowPrivateAddresses turns the SSRF guard off for the target.
	AllowPrivateAddresses bool `yaml:"allow_private_addresses"`

	// Resolver resolves the target host for the guard; nil is
	// net.DefaultResolver.
	Resolver netguard.Resolver `yaml:"-"`
	// Now stamps default file names; nil is time.Now.
	Now func() time.Time `yaml:"-"`
}

// Capturer takes screenshots through Browserless. Safe for concurrent use.
type Capturer struct {
	opts   CaptureOptions
	guard  *netguard.Guard
	client *http.Client
}

// NewCapturer validates o and returns a Capturer.
func NewCapturer(o CaptureOptions) (*Capturer, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := o.validateWaits(); err != nil {
		return nil, err
	}
	switch o.OutputFormat = strings.ToLower(cmp.Or(o.OutputFormat, "png")); o.OutputFormat {
	case "png", "jpeg", "webp":
	default:
		return nil, fmt.Errorf("output_format %q: want png, jpeg or webp", o.OutputFormat)
	}
	if o.ViewportWidth < 0 || o.ViewportHeight < 0 || o.ViewportWidth > maxViewport || o.ViewportHeight > maxViewport {
		return nil, fmt.Errorf("viewport_width and viewport_height must be within 0..%d", maxViewport)
	}
	if o.Quality != nil && (*o.Quality < 0 || *o.Quality > 100) {
		return nil, errors.New("quality must be within 0..100")
	}
	if o.MaxBytes < 0 {
		return nil, errors.New("max_bytes must not be negative")
	}
	o.MaxBytes = cmpOrInt(o.MaxBytes, defaultCaptureMaxBytes)
	return &Capturer{opts: o, client: o.client(defaultBrowserlessTimeout),
		guard: &netguard.Guard{AllowPrivate: o.AllowPrivateAddresses, Resolver: o.Resolver, Action: "capture"}}, nil
}

// NewWebCapture returns the web_capture tool configured by opts.
func NewWebCapture(opts CaptureOptions) (*tool.Tool, error) {
	c, err := NewCapturer(opts)
	if err != nil {
		return nil, err
	}
	return c.Tool(), nil
}

type captureArgs struct {
	URL            string `json:"url" jsonschema:"The http(s) URL to capture."`
	Filename       string `json:"filename,omitempty" jsonschema:"Optional output file name. Directories are ignored and the extension comes from output_format."`
	FullPage       *bool  `json:"full_page,omitempty" jsonschema:"Optional override for full-page capture."`
	OutputFormat   string `json:"output_format,omitempty" jsonschema:"Optional image format: png, jpeg or webp."`
	ViewportWidth  int    `json:"viewport_width,omitempty" jsonschema:"Optional viewport width in pixels."`
	ViewportHeight int    `json:"viewport_height,omitempty" jsonschema:"Optional viewport height in pixels."`
}

// Tool returns the web_capture tool backed by c.
func (c *Capturer) Tool() *tool.Tool {
	return tool.New("web_capture", strings.TrimSpace(webCaptureDescription),
		func(ctx context.Context, call *tool.Call, in captureArgs) (*tool.Result, error) {
			return c.capture(ctx, call, in)
		})
}

func (c *Capturer) capture(ctx context.Context, call *tool.Call, in captureArgs) (*tool.Result, error) {
	u, err := c.guard.CheckURLString(in.URL)
	if err == nil {
		_, err = c.guard.Resolve(ctx, u.Hostname())
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return tool.Errorf("%s", err), nil
	}
	if call == nil || call.State == nil || call.State.ThreadData == nil || call.State.ThreadData.OutputsPath == "" {
		return tool.Errorf("Thread outputs path is not available"), nil
	}
	format := strings.ToLower(cmp.Or(in.OutputFormat, c.opts.OutputFormat))
	if format != "png" && format != "jpeg" && format != "webp" {
		format = "png" // as DeerFlow: an unknown format falls back
	}
	body := c.body(u, in, format)
	img, header, err := c.post(ctx, body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return tool.Errorf("%s", err), nil
	}
	name, err := writeCapture(call.State.ThreadData.OutputsPath, captureName(in.Filename, u, format, c.now()), img)
	if err != nil {
		return nil, fmt.Errorf("web_capture: write the screenshot: %w", err)
	}
	virtual := outputsVirtual + "/" + name
	msg := "Captured screenshot: " + virtual
	if w := targetWarning(header); w != "" {
		msg += " (" + w + ")"
	}
	res := tool.Text(msg)
	res.Update = &thread.Update{Artifacts: []string{virtual}}
	return res, nil
}

func (c *Capturer) now() time.Time {
	if c.opts.Now != nil {
		return c.opts.Now()
	}
	return time.Now()
}

// body is Browserless's /screenshot request for u.
func (c *Capturer) body(u *url.URL, in captureArgs, format string) map[string]any {
	full := c.opts.FullPage == nil || *c.opts.FullPage
	if in.FullPage != nil {
		full = *in.FullPage
	}
	options := map[string]any{"fullPage": full, "type": format}
	if c.opts.Quality != nil && format != "png" {
		options["quality"] = *c.opts.Quality
	}
	w := cmp.Or(min(max(in.ViewportWidth, 0), maxViewport), c.opts.ViewportWidth, 1280)
	h := cmp.Or(min(max(in.ViewportHeight, 0), maxViewport), c.opts.ViewportHeight, 720)
	body := map[string]any{"url": u.String(), "options": options, "viewport": map[string]int{"width": w, "height": h}}
	c.opts.waits(body)
	delete(body, "waitForEvent") // /screenshot waits by selector and time
	if c.opts.BestAttempt {
		body["bestAttempt"] = true
	}
	return body
}

func (c *Capturer) post(ctx context.Context, body map[string]any) ([]byte, http.Header, error) {
	payload, _ := json.Marshal(body)
	endpoint := browserlessEndpoint(c.opts.baseURL(defaultBrowserlessBase), "/screenshot", c.opts.token(c.opts.Getenv))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, nil, fmt.Errorf("Browserless screenshot request failed: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if os.IsTimeout(err) {
			return nil, nil, fmt.Errorf("Browserless screenshot request timed out after %s", c.opts.timeout(defaultBrowserlessTimeout))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("Browserless screenshot request failed: %v", err)
	}
	defer resp.Body.Close()
	data, cut, err := readCapped(resp.Body, c.opts.MaxBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("Browserless screenshot request failed: %v", err)
	}
	switch {
	case resp.StatusCode != http.StatusOK:
		msg, _ := truncateRunes(string(bytes.ToValidUTF8(data, nil)), 200)
		return nil, nil, fmt.Errorf("Browserless HTTP %d: %s", resp.StatusCode, msg)
	case cut:
		return nil, nil, fmt.Errorf("the screenshot is larger than %d bytes (max_bytes); capture the viewport instead of the full page", c.opts.MaxBytes)
	case len(data) == 0:
		return nil, nil, errors.New("Browserless returned empty screenshot response")
	}
	return data, resp.Header, nil
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// captureName is the file name for a capture: the model's name without
// its directories and extension, or the URL's host and path with a UTC
// timestamp; unsafe characters become "_", and the extension is format's.
func captureName(filename string, u *url.URL, format string, now time.Time) string {
	var stem string
	if filename != "" {
		base := path.Base(strings.ReplaceAll(filename, `\`, "/"))
		stem = strings.TrimSuffix(base, path.Ext(base))
	} else {
		parts := []string{u.Host}
		for _, p := range strings.Split(u.Path, "/") {
			if p != "" {
				parts = append(parts, p)
			}
		}
		raw, _ := truncateRunes(strings.Join(parts, "-"), 80)
		stem = raw + "-" + now.UTC().Format("20060102-150405")
	}
	stem = strings.Trim(unsafeNameChars.ReplaceAllString(stem, "_"), "._-")
	if len(stem) > 100 {
		stem = stem[:100]
	}
	return cmp.Or(stem, "web-capture") + "." + format
}

// writeCapture writes data into dir (created if missing) under name, or
// name-1, name-2, ... if taken, through a temporary file renamed into
// place, inside an os.Root so that a symlink cannot lead it out of dir.
// It returns the name used.
func writeCapture(dir, name string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	final := ""
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 0; i <= maxCaptureNameProbes && final == ""; i++ {
		cand := name
		if i > 0 {
			cand = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		if _, err := root.Lstat(cand); errors.Is(err, fs.ErrNotExist) {
			final = cand
		}
	}
	if final == "" {
		final = stem + "-" + time.Now().UTC().Format("20060102-150405.000000") + ext
	}
	tmp := "." + final + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, final)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return "", werr
	}
	return final, nil
}
