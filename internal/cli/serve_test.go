package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antlerhq/antler/model/modeltest"
)

// startServe runs `antler serve --addr 127.0.0.1:0` in process and returns
// the base URL and a function that stops it and returns the exit code.
func startServe(t *testing.T, env map[string]string, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		opts := Options{Stdout: io.Discard, Stderr: pw, Stdin: strings.NewReader(""),
			Getenv: func(k string) string { return env[k] }}
		code := Main(ctx, append(args, "serve", "--addr", "127.0.0.1:0"), opts)
		pw.Close()
		done <- code
	}()
	addrRE := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(pr)
	var url string
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if url == "" {
		cancel()
		t.Fatalf("serve did not start (exit %d)", <-done)
	}
	// stop may be called more than once (a deferred stop beside one that
	// checks the exit code): the later calls return the first one's code.
	var once sync.Once
	code := -1
	return url, func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop")
			}
		})
		return code
	}
}

// TestServeChatRun starts the real command with the OpenAI provider
// against the modeltest server, streams one run and shuts down.
func TestServeChatRun(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "hello from serve"})
	cfg, home := e2eConfig(t, srv.URL)
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)

	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), "extensions_config.json")); err != nil {
		t.Errorf("no extensions file created beside the config: %v", err)
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	body := `{"input":{"messages":[{"type":"human","content":"hi"}]},"stream_mode":["values"]}`
	resp, err = http.Post(url+"/api/langgraph/threads/t1/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(resp.Header.Get("Content-Location"), "/threads/t1/runs/") || !strings.Contains(string(data), "hello from serve") {
		t.Fatalf("stream: %s %s", resp.Header.Get("Content-Location"), data)
	}
	var th map[string]any
	resp, _ = http.Get(url + "/api/threads/t1")
	json.NewDecoder(resp.Body).Decode(&th)
	resp.Body.Close()
	if th["thread_id"] != "t1" {
		t.Errorf("thread = %v", th)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exit = %d", code)
	}
}

// TestServeTokens: gateway.tokens ($VAR resolved) map bearer tokens to
// users; without a token the answer is 401.
func TestServeTokens(t *testing.T) {
	srv := modeltest.NewServer(t)
	cfg, home := e2eConfig(t, srv.URL)
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(data, []byte("gateway:\n  tokens:\n    - {token: $ALICE_TOKEN, user_id: alice}\n")...), 0o644)
	t.Setenv("ALICE_TOKEN", "s3cret-token")
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()
	resp, _ := http.Get(url + "/api/v1/auth/me")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("without a token: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", url+"/api/v1/auth/me", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var me map[string]any
	json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if me["id"] != "alice" {
		t.Errorf("me = %v", me)
	}
}

// TestServeLoopbackOnlyWithoutTokens: without tokens a non-loopback
// address is a usage error (exit 2), before anything listens.
func TestServeLoopbackOnlyWithoutTokens(t *testing.T) {
	srv := modeltest.NewServer(t)
	cfg, home := e2eConfig(t, srv.URL)
	code, _, stderr := runCLI(t, nil, "--config", cfg, "--home", home, "serve", "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(stderr, "loopback only") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
