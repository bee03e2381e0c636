package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model/modeltest"
)

// unenforcedConfig is runConfig with extra sections appended.
func unenforcedConfig(t *testing.T, url, extra string) (cfg, home string) {
	t.Helper()
	dir := t.TempDir()
	return writeFile(t, dir, "config.yaml", runConfig(url)+extra), filepath.Join(dir, "home")
}

// restrictive is a DeerFlow section that restricts and that Antler does
// not implement; it starts on line 12 of unenforcedConfig.
const restrictive = "auth:\n  local: {allow_registration: false}\n"

func TestDoctor_namesIgnoredSections(t *testing.T) {
	cfg, home := unenforcedConfig(t, "http://127.0.0.1:1/v1", restrictive+"memory:\n  enabled: true\nmiddlewares: [acme.mw:Guard]\nallow_unenforced: [middlewares]\n")
	_, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "doctor", "--json", "--timeout", "1s")
	var checks []check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("%v: %s %s", err, out, errOut)
	}
	got := map[string]check{}
	for _, c := range checks {
		if c.Check == "section" {
			got[c.Name] = c
		}
	}
	for name, want := range map[string]struct{ status, detail string }{
		"auth":        {"fail", "config.yaml:12: restricts and is not enforced; serve, run and chat refuse to start"},
		"middlewares": {"warn", "restricts and is NOT enforced (accepted by allow_unenforced)"},
	} {
		c, ok := got[name]
		if !ok || c.Status != want.status || !strings.Contains(c.Detail, want.detail) {
			t.Errorf("section %s = %+v, want %s with %q", name, c, want.status, want.detail)
		}
	}
	if c, ok := got["memory"]; ok {
		t.Errorf("memory is run now, yet named as a section line: %+v", c)
	}
	if len(got) != 2 {
		t.Errorf("section lines = %v, want 2", got)
	}
}

func TestToolsList_namesIgnoredSections(t *testing.T) {
	cfg, home := unenforcedConfig(t, "http://127.0.0.1:1/v1", restrictive+"tracing:\n  langfuse: {enabled: true, public_key: pk, secret_key: sk}\n")
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "tools", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !json.Valid([]byte(out)) {
		t.Errorf("stdout is not the JSON tool list: %s", out)
	}
	if want := "config.yaml:12: auth: restricts and is not enforced"; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	// The tracing section is run now (serve, run and chat export to
	// Langfuse), so it is no longer named.
	if strings.Contains(errOut, "tracing") {
		t.Errorf("stderr names the tracing section, which is run now:\n%s", errOut)
	}
}

// TestServeRunChat_refuseUnenforcedRestrictiveSection: exit 2 with the
// file, line, section and why, before anything runs.
func TestServeRunChat_refuseUnenforcedRestrictiveSection(t *testing.T) {
	srv := modeltest.NewServer(t)
	for _, args := range [][]string{{"run", "hello"}, {"chat"}, {"serve", "--addr", "127.0.0.1:0"}} {
		t.Run(args[0], func(t *testing.T) {
			cfg, home := unenforcedConfig(t, srv.URL, restrictive)
			code, _, errOut := runCLI(t, nil, append([]string{"--config", cfg, "--home", home}, args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", code, errOut)
			}
			for _, want := range []string{cfg + ":12: auth:", "local accounts", "allow_unenforced"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
}

func TestRun_refusesExtensionsMiddlewares(t *testing.T) {
	srv := modeltest.NewServer(t)
	cfg, home := unenforcedConfig(t, srv.URL, "")
	ext := writeFile(t, filepath.Dir(cfg), "extensions_config.json", "{\n  \"mcpServers\": {},\n  \"middlewares\": [\"acme.mw:DomainGuard\"]\n}\n")
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--extensions", ext, "--home", home, "run", "hello")
	if code != 2 || !strings.Contains(errOut, ext+":3: middlewares:") || !strings.Contains(errOut, "acme.mw:DomainGuard") {
		t.Errorf("exit %d, stderr %s; want 2 naming the extensions file's middlewares", code, errOut)
	}
}

// TestRun_allowUnenforcedStartsWithWarning: the opt-out lets the run
// start, and the log says what is not enforced.
func TestRun_allowUnenforcedStartsWithWarning(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "hi"})
	cfg, home := unenforcedConfig(t, srv.URL, restrictive+"allow_unenforced: [auth]\n")
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "level=WARN") || !strings.Contains(errOut, "section=auth") || !strings.Contains(errOut, "NOT enforced") {
		t.Errorf("stderr lacks the warning:\n%s", errOut)
	}
}

// TestServe_allowUnenforcedStartsWithWarning: serve starts with the
// opt-out and names the section in its log before it listens.
func TestServe_allowUnenforcedStartsWithWarning(t *testing.T) {
	srv := modeltest.NewServer(t)
	cfg, home := unenforcedConfig(t, srv.URL, restrictive+"allow_unenforced: [auth]\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		opts := Options{Stdout: io.Discard, Stderr: pw, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
		code := Main(ctx, []string{"--config", cfg, "--home", home, "serve", "--addr", "127.0.0.1:0"}, opts)
		pw.Close()
		done <- code
	}()
	var before []string
	listening := false
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "listening on") {
			listening = true
			break
		}
		before = append(before, sc.Text())
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if code := <-done; !listening || code != 0 {
		t.Fatalf("serve did not start and stop cleanly (exit %d): %v", code, before)
	}
	if log := strings.Join(before, "\n"); !strings.Contains(log, "section=auth") || !strings.Contains(log, "NOT enforced") {
		t.Errorf("serve's start does not name the unenforced section:\n%s", log)
	}
}

// TestRun_memorySectionIsRun: memory turned on is built by run, so it is
// no longer named as a section the command line ignores.
func TestRun_memorySectionIsRun(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "hi"})
	cfg, home := unenforcedConfig(t, srv.URL, "memory:\n  enabled: true\n")
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(errOut, "section=memory") {
		t.Errorf("stderr still names memory as not implemented:\n%s", errOut)
	}
}
