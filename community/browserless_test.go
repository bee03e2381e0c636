package community

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\nfake-image")

// browserlessAPI answers in the shapes of Browserless's POST /content
// (rendered HTML, the target's status in X-Response-Code) and POST
// /screenshot (the image), with ?token= required.
func browserlessAPI(t *testing.T) (string, *[]apiRequest) {
	article, err := os.ReadFile("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	srv, got := fakeAPI(t, func(w http.ResponseWriter, r apiRequest) (int, string) {
		if r.Query != "token=bl-token" {
			return 401, `Unauthorized`
		}
		target, _ := r.Body["url"].(string)
		if strings.Contains(target, "missing") {
			w.Header().Set("X-Response-Code", "404")
			w.Header().Set("X-Response-Status", "Not Found")
		}
		switch r.Path {
		case "/content":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			return 200, string(article)
		case "/screenshot":
			w.Header().Set("Content-Type", "image/png")
			return 200, string(pngBytes)
		}
		return 404, "no route"
	})
	return srv.URL, got
}

func TestBrowserlessFetch(t *testing.T) {
	base, got := browserlessAPI(t)
	opts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "browserless", BaseURL: base, Getenv: envOf(map[string]string{"BROWSERLESS_TOKEN": "bl-token"})},
		BrowserlessOptions: BrowserlessOptions{WaitForEvent: "networkidle", WaitForSelector: "article", WaitForTimeoutMS: 200},
		Resolver:           fakeResolver{"notes.example": {publicIP}, "rebind.test": {"127.0.0.1"}}}
	doc, err := fetch(t, opts, "https://notes.example/2026/deer/")
	if err != nil || !strings.HasPrefix(doc, "# The Migration of Antlered Deer\n\n") {
		t.Errorf("fetch = %.200q, %v", doc, err)
	}
	wantBody := map[string]any{"url": "https://notes.example/2026/deer/", "waitForEvent": map[string]any{"event": "networkidle"},
		"waitForTimeout": 200.0, "waitForSelector": map[string]any{"selector": "article", "timeout": 5000.0}}
	if d := cmp.Diff(wantBody, (*got)[0].Body); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	doc, err = fetch(t, opts, "https://notes.example/missing")
	if err != nil || !strings.HasPrefix(doc, "(warning: target page responded 404 Not Found)\n\n# ") {
		t.Errorf("target 404 = %.120q, %v", doc, err)
	}
	if _, err := fetch(t, opts, "https://rebind.test/"); err == nil || err.Error() != refused {
		t.Errorf("loopback host: %v", err)
	}
	o := *opts
	o.Getenv = noEnv
	if _, err := fetch(t, &o, "https://notes.example/"); err == nil || err.Error() != "Browserless returned HTTP 401: Unauthorized" {
		t.Errorf("no token: %v", err)
	}
}

func TestWebCapture(t *testing.T) {
	base, got := browserlessAPI(t)
	outputs := filepath.Join(t.TempDir(), "outputs")
	c, err := NewCapturer(CaptureOptions{ProviderOptions: ProviderOptions{BaseURL: base, Getenv: noEnv},
		BrowserlessOptions: BrowserlessOptions{Token: "bl-token", WaitForSelector: "main"},
		OutputFormat:       "png", ViewportWidth: 1024, Quality: new(80),
		Resolver: fakeResolver{"notes.example": {publicIP}, "rebind.test": {"10.1.2.3"}},
		Now:      func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	call := &tool.Call{State: &thread.State{ThreadData: &thread.ThreadData{OutputsPath: outputs}}}
	run := func(in captureArgs) *tool.Result {
		t.Helper()
		res, err := c.capture(t.Context(), call, in)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := run(captureArgs{URL: "https://notes.example/a/b"})
	if txt := res.TextContent(); txt != "Captured screenshot: /mnt/user-data/outputs/notes.example-a-b-20260304-050607.png" {
		t.Errorf("result = %q", txt)
	}
	if res.Update == nil || !cmp.Equal(res.Update.Artifacts, []string{"/mnt/user-data/outputs/notes.example-a-b-20260304-050607.png"}) {
		t.Errorf("update = %+v", res.Update)
	}
	data, err := os.ReadFile(filepath.Join(outputs, "notes.example-a-b-20260304-050607.png"))
	if err != nil || !bytes.Equal(data, pngBytes) {
		t.Errorf("written = %q, %v", data, err)
	}
	wantBody := map[string]any{"url": "https://notes.example/a/b", "options": map[string]any{"fullPage": true, "type": "png"},
		"viewport": map[string]any{"width": 1024.0, "height": 720.0}, "waitForSelector": map[string]any{"selector": "main", "timeout": 5000.0}}
	if d := cmp.Diff(wantBody, (*got)[0].Body); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}

	// An explicit name loses its directories, takes the format's
	// extension, and never overwrites an earlier capture.
	for i, want := range []string{"shot.jpeg", "shot-1.jpeg"} {
		res := run(captureArgs{URL: "https://notes.example/missing", Filename: "../../etc/shot.png", OutputFormat: "jpeg", FullPage: new(false)})
		wantText := "Captured screenshot: /mnt/user-data/outputs/" + want + " (warning: target page responded 404 Not Found)"
		if res.TextContent() != wantText {
			t.Errorf("capture %d = %q, want %q", i, res.TextContent(), wantText)
		}
	}
	if opts := (*got)[1].Body["options"]; !cmp.Equal(opts, map[string]any{"fullPage": false, "type": "jpeg", "quality": 80.0}) {
		t.Errorf("jpeg options = %v", opts)
	}

	for name, tc := range map[string]struct {
		call *tool.Call
		url  string
		want string
	}{
		"private host": {call, "https://rebind.test/", "Error: Refusing to capture a private, loopback, or metadata address"},
		"no scheme":    {call, "notes.example", "Error: Only http:// and https:// URLs are supported"},
		"no outputs":   {&tool.Call{State: &thread.State{}}, "https://notes.example/", "Error: Thread outputs path is not available"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := c.capture(t.Context(), tc.call, captureArgs{URL: tc.url})
			if err != nil || !res.IsError || res.TextContent() != tc.want {
				t.Errorf("got %q (error %v), %v", res.TextContent(), res.IsError, err)
			}
		})
	}
	if len(*got) != 3 {
		t.Errorf("Browserless saw %d requests, want 3", len(*got))
	}
	if _, err := NewCapturer(CaptureOptions{OutputFormat: "gif"}); err == nil {
		t.Error("output_format gif accepted")
	}
}
