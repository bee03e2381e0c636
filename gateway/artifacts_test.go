package gateway_test

import (
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/vpath"
)

// Content types the artifacts route may answer.
const (
	ctText  = "text/plain; charset=utf-8"
	ctOctet = "application/octet-stream"
	ctSVG   = "image/svg+xml"
)

// activePayload is what every file of the table holds: a page that runs
// script if a browser renders it as HTML, XHTML or SVG.
const activePayload = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body>` +
	`<script>alert(document.cookie)</script><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/></body></html>`

// newThread creates a thread of the default user and returns its id and
// folders.
func (e *env) newThread() (string, vpath.ThreadPaths) {
	e.t.Helper()
	tid := uuid.NewString()
	e.json("POST", "/api/threads", "", map[string]any{"thread_id": tid}, 200, nil)
	tp, err := e.layout.EnsureThreadDirs("default", tid)
	if err != nil {
		e.t.Fatal(err)
	}
	return tid, tp
}

// artifactPath is the artifacts route of a file in the outputs folder.
func artifactPath(tid, name string) string {
	return "/api/threads/" + tid + "/artifacts/mnt/user-data/outputs/" + url.PathEscape(name)
}

// TestArtifacts_onlyPassiveTypesAreInline walks awkward names: only the
// passive types (text, raster images, PDF, audio, video) are inline, with
// a type decided from the name (case, trailing dots and spaces, last
// extension); everything else, every active type among them, is an
// attachment of type application/octet-stream (SVG keeps its type, as an
// attachment, for <img>). No answer is sniffed, and each carries nosniff
// and a Content-Security-Policy that forbids script.
func TestArtifacts_onlyPassiveTypesAreInline(t *testing.T) {
	e := newEnv(t, envOptions{})
	tid, tp := e.newThread()
	cases := []struct {
		name        string
		contentType string
		inline      bool
	}{
		// The names of the report: served as pages before.
		{"report", ctOctet, false},
		{"report.shtml", ctOctet, false},
		{"page.xhtm", ctOctet, false},
		{"page.html.", ctOctet, false},
		{"page.xht", ctOctet, false},
		{"style.xsl", ctOctet, false},
		// Every active type of a MIME database.
		{"x.html", ctOctet, false},
		{"x.HTML", ctOctet, false},
		{"x.HtM", ctOctet, false},
		{"x.html...", ctOctet, false},
		{"x.html . .", ctOctet, false},
		{"x.xhtml", ctOctet, false},
		{"x.xml", ctOctet, false},
		{"x.XmL", ctOctet, false},
		{"x.xslt", ctOctet, false},
		{"x.svg", ctSVG, false},
		{"x.SVG.", ctSVG, false},
		{"x.svgz", ctOctet, false},
		{"x.js", ctOctet, false},
		{"x.mjs", ctOctet, false},
		{"x.cjs", ctOctet, false},
		{"x.es", ctOctet, false},
		{"x.swf", ctOctet, false},
		{"x.hta", ctOctet, false},
		{"x.mht", ctOctet, false},
		{"x.mhtml", ctOctet, false},
		{"x.rdf", ctOctet, false},
		{"x.rss", ctOctet, false},
		{"x.atom", ctOctet, false},
		{"x.mml", ctOctet, false},
		{"x.xul", ctOctet, false},
		{"x.htc", ctOctet, false},
		{"x.wasm", ctOctet, false},
		{"x.xsd", ctOctet, false},
		{"x.dtd", ctOctet, false},
		{"x.vml", ctOctet, false},
		{"x.xbl", ctOctet, false},
		{"x.jsp", ctOctet, false},
		{"x.aspx", ctOctet, false},
		// Double extensions: the last one counts.
		{"x.txt.html", ctOctet, false},
		{"x.png.svg", ctSVG, false},
		{"x.html.txt", ctText, true},
		{"x.svg.png", "image/png", true},
		{"x.js.md", ctText, true},
		// Dotfiles and names without an extension.
		{".html", ctOctet, false},
		{".htaccess", ctOctet, false},
		{".env", ctText, true},
		{".gitignore", ctText, true},
		{"Makefile", ctText, true},
		{"Dockerfile", ctText, true},
		{"x.", ctOctet, false},
		{"README", ctOctet, false},
		// Passive types.
		{"notes.md", ctText, true},
		{"NOTES.MD", ctText, true},
		{"notes.txt ", ctText, true},
		{"data.csv", ctText, true},
		{"data.json", ctText, true},
		{"main.py", ctText, true},
		{"main.go", ctText, true},
		{"app.tsx", ctText, true},
		{"page.vue", ctText, true},
		{"style.css", "text/css; charset=utf-8", true},
		{"chart.png", "image/png", true},
		{"photo.JPG", "image/jpeg", true},
		{"photo.jpeg", "image/jpeg", true},
		{"anim.gif", "image/gif", true},
		{"pic.webp", "image/webp", true},
		{"pic.avif", "image/avif", true},
		{"pic.bmp", "image/bmp", true},
		{"favicon.ico", "image/x-icon", true},
		{"anim.apng", "image/apng", true},
		{"paper.pdf", "application/pdf", true},
		{"paper.PDF.", "application/pdf", true},
		{"résumé.pdf", "application/pdf", true},
		{"song.mp3", "audio/mpeg", true},
		{"sound.wav", "audio/wav", true},
		{"clip.mp4", "video/mp4", true},
		{"clip.webm", "video/webm", true},
		{"clip.mov", "video/quicktime", true},
		// Other binaries.
		{"archive.zip", ctOctet, false},
		{"deck.pptx", ctOctet, false},
		{"photo.tiff", ctOctet, false},
		{`quote"and;semi.txt`, ctText, true},
	}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(tp.Outputs, c.name), []byte(activePayload), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, download := range []bool{false, true} {
				p := artifactPath(tid, c.name)
				if download {
					p += "?download=true"
				}
				resp := e.do("GET", p, "", nil)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(body) != activePayload {
					t.Fatalf("GET %s = %d %q", p, resp.StatusCode, body)
				}
				if got := resp.Header.Get("Content-Type"); got != c.contentType {
					t.Errorf("GET %s: Content-Type %q, want %q", p, got, c.contentType)
				}
				disp, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
				wantDisp := "attachment"
				if c.inline && !download {
					wantDisp = "inline"
				}
				if err != nil || disp != wantDisp || params["filename"] != c.name {
					t.Errorf("GET %s: Content-Disposition %q (%v), want %s with filename %q",
						p, resp.Header.Get("Content-Disposition"), err, wantDisp, c.name)
				}
				checkFileHeaders(t, resp, c.contentType == "application/pdf")
			}
		})
	}
}

// checkFileHeaders checks what every artifacts and uploads answer
// carries: nosniff and a Content-Security-Policy that forbids script
// (sandbox without allow-scripts, except for PDF, which Chromium refuses
// to show in a sandboxed document, and default-src 'none' with no
// script-src).
func checkFileHeaders(t *testing.T, resp *http.Response, pdf bool) {
	t.Helper()
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q", resp.Request.URL.Path, got)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	sandbox, sandboxed := directives["sandbox"]
	if sandboxed == pdf || strings.Contains(sandbox, "allow-scripts") {
		t.Errorf("%s: Content-Security-Policy %q: sandbox %v for pdf %v", resp.Request.URL.Path, csp, sandboxed, pdf)
	}
	if directives["default-src"] != "'none'" || directives["script-src"] != "" || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("%s: Content-Security-Policy %q does not forbid script", resp.Request.URL.Path, csp)
	}
}

// TestArtifacts_rangesAndErrorsKeepTheHeaders: a ranged preview of a text
// artifact is 206 with its type, an unsatisfiable range 416, and error
// answers carry the headers too.
func TestArtifacts_rangesAndErrorsKeepTheHeaders(t *testing.T) {
	e := newEnv(t, envOptions{})
	tid, tp := e.newThread()
	if err := os.WriteFile(filepath.Join(tp.Outputs, "page.html"), []byte(activePayload), 0o644); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", e.url+artifactPath(tid, "page.html"), nil)
	req.Header.Set("Range", "bytes=0-4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 206 || string(body) != activePayload[:5] || resp.Header.Get("Content-Type") != ctOctet {
		t.Errorf("ranged = %d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	checkFileHeaders(t, resp, false)
	req.Header.Set("Range", "bytes=100000-")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 416 {
		t.Errorf("unsatisfiable range = %d", resp.StatusCode)
	}
	checkFileHeaders(t, resp, false)
	for _, p := range []string{artifactPath(tid, "missing.html"), "/api/threads/" + tid + "/artifacts/mnt/user-data/workspace/x"} {
		resp := e.do("GET", p, "", nil)
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("GET %s = %d", p, resp.StatusCode)
		}
		checkFileHeaders(t, resp, false)
	}
}
