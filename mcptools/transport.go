package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
)

// DefaultInheritedEnv returns the variables of Antler's environment a
// stdio server inherits when Options.InheritEnv is nil; the server's own
// env entries are added on top. It is the MCP Python SDK's default list,
// which is what DeerFlow's servers see, so secrets in Antler's environment
// do not leak into every server.
func DefaultInheritedEnv() []string {
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
}

// tempEnv returns the variables that point a thread's stdio server at its
// temporary folder.
func tempEnv() []string { return []string{"TMPDIR", "TMP", "TEMP"} }

// stdioDir returns the working directory of a stdio server: its
// configured cwd (relative to the extensions file), else the thread's
// workspace for a thread's session, else "" (Antler's own).
func stdioDir(s config.MCPServer, baseDir string, place *threadPlace) string {
	switch {
	case s.Cwd != "" && !filepath.IsAbs(s.Cwd) && baseDir != "":
		return filepath.Join(baseDir, s.Cwd)
	case s.Cwd != "":
		return s.Cwd
	case place != nil:
		return place.paths.Workspace
	}
	return ""
}

// headerTransport adds a server's configured headers and its OAuth
// Authorization header to every HTTP request of its session.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	tokens  *tokenSource // nil without OAuth
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	if h.tokens != nil {
		v, err := h.tokens.Header(req.Context())
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		req.Header.Set("Authorization", v)
	}
	return h.base.RoundTrip(req)
}

// lifetimeTransport connects its inner transport with the session's
// lifetime context instead of the caller's: the SSE transport ties its
// event stream to the context passed to Connect, and a session must outlive
// the discovery call that opened it. The Connection is returned unwrapped,
// so the SDK still recognises the transport's own connection type.
type lifetimeTransport struct {
	inner mcp.Transport
	ctx   context.Context
}

func (t lifetimeTransport) Connect(context.Context) (mcp.Connection, error) {
	return t.inner.Connect(t.ctx)
}

// stdioTransport starts a server process in its own process group and
// remembers its pid, so that a hung or finished server can be killed with
// everything it spawned (npx, shells). Its stdout goes through a
// stdoutFilter, so that a banner or log line there does not end the
// session.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	report    stdoutReport
	spool     *spool // nil: stdout is not spooled

	mu  sync.Mutex
	pid int // guarded by mu; 0 until started
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	var stdin io.WriteCloser
	if err == nil {
		stdin, err = t.cmd.StdinPipe()
	}
	if err == nil {
		err = t.cmd.Start()
	}
	// The child has its own copy of the stderr pipe's write end now (or
	// never started): ours must go, so that the reader sees EOF once the
	// server and everything it spawned are gone.
	if w, ok := t.cmd.Stderr.(*os.File); ok {
		w.Close()
	}
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.pid = t.cmd.Process.Pid
	t.mu.Unlock()
	var out io.ReadCloser = io.NopCloser(stdout)
	if t.spool != nil {
		out = t.spool.pipe(stdout, t.spool.stdoutPump(maxStdoutLine, t.report), true)
	}
	return (&mcp.IOTransport{
		Reader: readCloser{newStdoutFilter(out, maxStdoutLine, t.report), out},
		Writer: &serverStdin{cmd: t.cmd, stdin: stdin, grace: t.terminate},
		// The filter bounds every line already.
		MaxLineLength: -1,
	}).Connect(ctx)
}

// serverStdin is the stdin of a stdio server. Closing it ends the session
// as the MCP specification asks: stdin is closed, and a server that has not
// exited within grace is sent SIGTERM, then SIGKILL after as long again.
type serverStdin struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	grace time.Duration
}

func (s *serverStdin) Write(p []byte) (int, error) { return s.stdin.Write(p) }

func (s *serverStdin) Close() error {
	if err := s.stdin.Close(); err != nil {
		return fmt.Errorf("close the server's stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	wait := func() (error, bool) {
		timer := time.NewTimer(s.grace)
		defer timer.Stop()
		select {
		case err := <-exited:
			return err, true
		case <-timer.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if s.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server did not exit after SIGKILL")
}

// processID returns the server's process id, 0 before it started.
func (t *stdioTransport) processID() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pid
}

// kill ends the server's whole process group at once.
func (t *stdioTransport) kill() {
	t.mu.Lock()
	pid := t.pid
	t.mu.Unlock()
	if pid > 0 {
		killGroup(pid)
	}
}

// newStdioCommand builds the command of a stdio server: its args, the
// inherited part of Antler's environment plus its own env, its working
// directory (relative to the extensions file), and a bounded stderr tail.
// A thread's session (place non-nil) runs in the thread's workspace unless
// cwd is configured, and gets TMPDIR, TMP and TEMP in place.tmp unless its
// own env sets them.
func (m *Manager) newStdioCommand(s config.MCPServer, baseDir string, stderr *tailBuffer, place *threadPlace) *exec.Cmd {
	cmd := exec.Command(s.Command, s.Args...)
	inherit := m.opts.InheritEnv
	if inherit == nil {
		inherit = DefaultInheritedEnv()
	}
	placed := map[string]string{}
	if place != nil {
		for _, k := range tempEnv() {
			if _, own := s.Env[k]; !own {
				placed[k] = place.tmp
			}
		}
	}
	env := make([]string, 0, len(inherit)+len(placed)+len(s.Env))
	for _, k := range inherit {
		if v, ok := os.LookupEnv(k); ok {
			_, own := s.Env[k]
			_, set := placed[k]
			if !own && !set {
				env = append(env, k+"="+v)
			}
		}
	}
	for _, k := range tempEnv() {
		if v, ok := placed[k]; ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	cmd.Dir = stdioDir(s, baseDir, place)
	// stderr goes to a pipe of our own rather than through exec's copying
	// goroutine, so that the tail is known to be complete when the pipe
	// ends (see tailBuffer.settle); if the pipe cannot be made, exec copies.
	if r, w, err := os.Pipe(); err == nil {
		cmd.Stderr = w
		stderr.follow(r)
	} else {
		cmd.Stderr = stderr
	}
	// A grandchild that keeps stderr open must not block Wait forever.
	cmd.WaitDelay = time.Second
	setProcessGroup(cmd)
	return cmd
}

// transport returns the MCP transport of server s for a session living as
// long as life; place is the thread of a thread's stdio session (nil for
// the control session, or without Options.Layout). kill, when non-nil, ends a stdio server's process group.
func (m *Manager) transport(life context.Context, rt *server, stderr *tailBuffer, place *threadPlace) (t mcp.Transport, kill func(), err error) {
	s := rt.cfg
	if m.opts.Dial != nil {
		t, err := m.opts.Dial(life, s)
		if err != nil {
			return nil, nil, err
		}
		if t != nil {
			return t, nil, nil
		}
	}
	switch s.Type {
	case "stdio":
		st := &stdioTransport{cmd: m.newStdioCommand(s, rt.baseDir, stderr, place), terminate: m.opts.TerminateGrace,
			report: rt.stdoutReport(), spool: m.spool}
		return st, st.kill, nil
	case "sse":
		return lifetimeTransport{inner: &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: rt.httpClient}, ctx: life}, nil, nil
	case "http":
		t := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: rt.httpClient}
		if err := m.authorize(life, rt, t); err != nil {
			return nil, nil, err
		}
		return lifetimeTransport{inner: t, ctx: life}, nil, nil
	}
	return nil, nil, fmt.Errorf("MCP server '%s' has unsupported transport type: %s", s.Name, s.Type)
}

// tailBuffer keeps the last bytes a server wrote to stderr, for error
// messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte // guarded by mu

	done chan struct{} // closed when a followed pipe ends; nil if none
}

// follow copies r into b in the background until r ends, then closes it.
// It must be called before b is shared.
func (b *tailBuffer) follow(r *os.File) {
	b.done = make(chan struct{})
	go func() {
		defer close(b.done)
		defer r.Close()
		_, _ = io.Copy(b, r)
	}()
}

// settle waits up to d for a followed pipe to end, so that a server that
// just crashed has its last words in the tail. A server that is still
// running (or keeps stderr open in a child) costs at most d.
func (b *tailBuffer) settle(d time.Duration) {
	if b.done == nil {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-b.done:
	case <-timer.C:
	}
}

const tailMax = 4 << 10

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailMax {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-tailMax:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
