package mcptools

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// ServerState is the connection state of a server.
type ServerState string

// The server states, in the order a server passes through them.
const (
	StatePending    ServerState = "pending"    // configured, not yet contacted
	StateConnecting ServerState = "connecting" // discovery in progress
	StateReady      ServerState = "ready"      // tools listed
	StateFailed     ServerState = "failed"     // skipped; Err says why
	StateDisabled   ServerState = "disabled"   // enabled: false
)

// ServerStatus describes one configured server.
type ServerStatus struct {
	Name      string
	Transport string // stdio, sse or http
	State     ServerState
	// Tools is the number of tools the server contributes.
	Tools int
	// Duration is how long the last discovery took.
	Duration time.Duration
	// Err is why the server failed (StateFailed).
	Err error
	// Renamed maps the server's own tool names to the sanitised names
	// they are exposed under (only for names that needed it).
	Renamed map[string]string
	// Sessions is the number of open sessions.
	Sessions int
}

// Status returns the state of every configured server, sorted by name,
// as of the last Tools call.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	servers := make([]*server, 0, len(m.servers))
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		servers = append(servers, m.servers[name])
	}
	out := make([]ServerStatus, len(servers))
	for i, s := range servers {
		out[i] = s.status
	}
	m.mu.Unlock()
	for i, s := range servers {
		out[i].Sessions = m.pool.count(s)
	}
	return out
}

func (m *Manager) emitStatus(st ServerStatus) {
	if m.opts.OnStatus != nil {
		m.opts.OnStatus(st)
	}
}

// CheckResult is the outcome of checking one enabled server.
type CheckResult struct {
	Server    string
	Transport string
	// Tools is the number of tools the server listed (before
	// disabled_tools).
	Tools    int
	Duration time.Duration
	// Err is nil when the server connected and listed its tools within
	// its session_init_timeout.
	Err error
}

// Check connects to every enabled server with a fresh session, lists its
// tools and closes the session again, all servers concurrently, each
// bounded by its session_init_timeout. It is the MCP part of
// `antler doctor` and leaves the Manager's cache and sessions alone. The
// error is non-nil only when the extensions configuration cannot be read.
func (m *Manager) Check(ctx context.Context) ([]CheckResult, error) {
	if m.opts.Extensions == nil {
		return nil, nil
	}
	ext, _, err := m.opts.Extensions.Get()
	if ext == nil {
		return nil, err
	}
	servers := ext.EnabledServers()
	out := make([]CheckResult, len(servers))
	var wg sync.WaitGroup
	for i, cfg := range servers {
		out[i] = CheckResult{Server: cfg.Name, Transport: cfg.Type, Err: cfg.Err}
		if cfg.Err != nil {
			continue
		}
		wg.Go(func() {
			start := time.Now()
			s := m.newServer(cfg, baseDirOf(ext.Path))
			n, err := m.checkOne(ctx, s)
			out[i].Tools, out[i].Duration, out[i].Err = n, time.Since(start), err
		})
	}
	wg.Wait()
	return out, nil
}

func (m *Manager) checkOne(ctx context.Context, s *server) (int, error) {
	timeout := s.cfg.InitTimeout()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	sess, err := m.connect(ctx, s, nil)
	if err != nil {
		if ctx.Err() != nil && timeout > 0 {
			return 0, errTimedOut(timeout)
		}
		return 0, err
	}
	defer sess.close()
	n := 0
	for _, err := range sess.cs.Tools(ctx, nil) {
		if err != nil {
			if ctx.Err() != nil && timeout > 0 {
				return n, errTimedOut(timeout)
			}
			return n, err
		}
		n++
	}
	return n, nil
}
