package mcptools

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// ExtensionsSource supplies the current extensions configuration.
// *config.ExtensionsCache implements it; [Static] wraps a fixed value.
// Get returns the last good value alongside an error when the file became
// unreadable, and the last good value without error when it disappeared.
type ExtensionsSource interface {
	Get() (ext *config.Extensions, changed bool, err error)
}

// Static returns an ExtensionsSource that always yields ext.
func Static(ext *config.Extensions) ExtensionsSource { return staticSource{ext} }

type staticSource struct{ ext *config.Extensions }

func (s staticSource) Get() (*config.Extensions, bool, error) { return s.ext, false, nil }

// defaultProtocolVersion is the MCP protocol version Antler offers first.
// Every server in use today speaks it, and starting with it saves the
// server/discover round trip that the newer 2026-07-28 handshake costs
// against them (see docs/design.md).
const defaultProtocolVersion = "2025-11-25"

// defaultToolCallTimeout bounds a tool call of a server without
// tool_call_timeout. DeerFlow leaves such a stdio call unbounded; the MCP
// TypeScript SDK gives every request 60 s, which cuts off legitimate slow
// tools (builds, crawls, browser sessions). Ten minutes lets those finish
// and still frees a run whose server hangs (see docs/design.md).
const defaultToolCallTimeout = 10 * time.Minute

// Options configure a Manager. The zero value is usable.
type Options struct {
	// Extensions supplies mcpServers; nil means no servers.
	Extensions ExtensionsSource
	// Logger receives warnings (skipped servers, renamed tools) and debug
	// output; nil discards.
	Logger *slog.Logger
	// ClientName and ClientVersion are sent in initialize; default
	// "antler" and "dev".
	ClientName, ClientVersion string
	// ProtocolVersion is offered first; "" means 2025-11-25,
	// "latest" the newest the SDK knows (2026-07-28, with fallback).
	ProtocolVersion string
	// MaxProcesses bounds the stdio server processes kept open: every
	// thread's process and every server's control process (sse and http
	// sessions are no processes and do not count). 0 derives the bound
	// from memory: MemoryShare of Memory divided by the mean resident
	// memory of the processes running (measured from /proc on Linux;
	// 128 MiB before any was measured), clamped to 4..256. When the bound
	// is reached, a new process first closes the least recently used idle
	// one; a process with a call in flight is never closed, and when every
	// process has one the caller waits up to ProcessWait, then gets an
	// error result naming the bound. See docs/design.md.
	MaxProcesses int
	// Memory is the memory the bound is derived from, in bytes; 0 means
	// the smaller of the machine's memory and its cgroup's limit, read
	// from /proc/meminfo and /sys/fs/cgroup (4 GiB where they cannot be
	// read).
	Memory int64
	// MemoryShare is the share of Memory stdio servers may hold; 0 (or
	// anything outside (0, 1]) means 0.25.
	MemoryShare float64
	// IdleTimeout closes a stdio server process that no call has used for
	// so long (by the clock Now); 0 means 10 minutes, negative never. The
	// next call starts it again.
	IdleTimeout time.Duration
	// ProcessWait is how long a caller waits for a process slot when
	// every process within the bound has a call in flight; 0 means 30 s.
	ProcessWait time.Duration
	// ProcessRSS, if set, measures the resident memory of a server's
	// process (pid) and its children, instead of /proc; for tests.
	ProcessRSS func(pid int) (int64, bool)
	// TerminateGrace is how long a stdio server may take to exit after its
	// stdin is closed before it is sent SIGTERM (and as long again before
	// SIGKILL); 0 means 2 s.
	TerminateGrace time.Duration
	// InheritEnv lists the variables of Antler's environment a stdio
	// server inherits; nil means DefaultInheritedEnv(), empty means none.
	InheritEnv []string
	// HTTPTransport carries sse and http sessions and OAuth token
	// requests; nil means a clone of http.DefaultTransport.
	HTTPTransport http.RoundTripper
	// TracerProvider, if set, makes a span of every tools/call and sends
	// its trace context to the server: traceparent in the request's _meta
	// and, over sse and http, as the HTTP header (trace.go); nil makes
	// none and sends none.
	TracerProvider trace.TracerProvider
	// OnStatus, if set, is called whenever a server's connection state
	// changes during discovery (for progress displays). It may be called
	// from several goroutines at once.
	OnStatus func(ServerStatus)
	// ElicitationHandler, if set, answers elicitation/create requests and
	// makes Antler advertise the elicitation capability (form and url
	// mode). Its ctx names the asking server ([ElicitationServer]); the
	// SDK checks a form's content against the requested schema and fills
	// in its defaults. nil advertises no elicitation: servers that ask get
	// an error.
	ElicitationHandler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// Authorizer, if set, authorizes the sessions of http servers that
	// have no client_credentials or refresh_token oauth block, as the MCP
	// specification's authorization defines (see package mcpauth); nil
	// leaves a server that answers 401 failing. A call made for a user
	// other than AuthUser opens a session of that user's own, with that
	// user's tokens, closed when the call ends.
	Authorizer Authorizer
	// AuthUser is the user whose tokens the control session of an
	// authorized server uses (discovery, calls without a user); "" is
	// the empty user.
	AuthUser string
	// Dial, if set, may return the transport of a server instead of the
	// one its type describes (nil transport: use the normal one). It is
	// meant for tests and embedding, such as in-memory servers.
	Dial func(ctx context.Context, s config.MCPServer) (mcp.Transport, error)
	// Now is the clock of OAuth token expiry and of IdleTimeout; nil
	// means time.Now.
	Now func() time.Time
	// DefaultCallTimeout bounds a tool call of a server that sets no
	// tool_call_timeout (or sets it to 0 or less); 0 means
	// 10 minutes. There is no way to make a call unbounded: a
	// server that never answers would hold its caller (and a run's
	// thread) forever. A call that reaches its bound is cancelled with
	// notifications/cancelled and becomes an error result.
	DefaultCallTimeout time.Duration
	// Layout, if set, gives stdio servers a place in the thread's folders
	// for calls made with a user and thread, as DeerFlow does (its
	// mcp/session_pool.py; see "Threads and files" in the package documentation): the
	// thread's session runs in its workspace folder unless the server
	// configures cwd, with TMPDIR, TMP and TEMP in workspace/.mcp/tmp
	// unless its env sets them, and local paths in its results are
	// rewritten to /mnt/user-data/... virtual paths. A user or thread id
	// the layout refuses makes such a call an error result. nil means
	// none of this: sessions run in the configured cwd (or Antler's) with
	// the inherited environment, and results are passed on unchanged.
	// The control session of a server (discovery, calls without a
	// thread) is never affected.
	Layout *vpath.Layout
	// UserFiles, if set, gives each user the own MCP servers and the
	// credentials for shared servers of the user's file (ToolsFor,
	// users.go); nil means every user sees the shared servers only.
	UserFiles UserFiles
	// MaxUserViews bounds the users whose own servers are kept open at
	// once; opening one more closes the least recently used (its
	// sessions close once their calls end). 0 means 256.
	MaxUserViews int
}

// Manager owns the MCP sessions of one Antler process and serves their
// tools. Create it with New and release it with Close. It is safe for
// concurrent use.
type Manager struct {
	// immutable after New:
	opts          Options
	log           *slog.Logger
	httpTransport http.RoundTripper
	now           func() time.Time
	pool          *pool
	life          context.Context // cancelled by Close
	stop          context.CancelFunc

	bgMu      sync.Mutex     // guards bgClosed and Add on wg
	bgClosed  bool           // Close is waiting for wg; later goroutines run untracked
	wg        sync.WaitGroup // background goroutines (session watchers, closes)
	progress  progressRegistry
	asking    callRegistry // tool calls in flight by session, for elicitation (elicit.go)
	spool     *spool       // large texts of tool results; see spool.go
	sweepOnce sync.Once    // starts the idle sweeper with the first process

	// sem serialises discovery, rebuilds, Reset and Close. It is a channel
	// so that a caller whose context ends stops waiting.
	sem chan struct{}

	mu      sync.Mutex
	closed  bool               // guarded by mu
	ext     *config.Extensions // guarded by mu; last applied
	extErr  string             // guarded by mu; last reported source error
	servers map[string]*server // guarded by mu; by name
	tools   []*tool.Tool       // guarded by mu; last built list
	stale   bool               // guarded by mu; tools must be rebuilt

	// owner is the user of a user's view (users.go), "" for the shared
	// Manager; sharedPool is set for a view, whose pool is its parent's
	// (Close then removes only its own sessions). Both immutable.
	owner      string
	sharedPool bool

	usersMu     sync.Mutex
	users       map[string]*userView // guarded by usersMu; by user
	usersClosed bool                 // guarded by usersMu
}

// New returns a Manager. It does not connect to anything until Tools,
// a tool call or Check needs it.
func New(o Options) *Manager {
	o.ClientName = cmp.Or(o.ClientName, "antler")
	o.ClientVersion = cmp.Or(o.ClientVersion, "dev")
	o.TerminateGrace = cmp.Or(o.TerminateGrace, 2*time.Second)
	if o.DefaultCallTimeout <= 0 {
		o.DefaultCallTimeout = defaultToolCallTimeout
	}
	m := &Manager{opts: o, log: o.Logger, httpTransport: o.HTTPTransport, now: o.Now, sem: make(chan struct{}, 1)}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.httpTransport == nil {
		m.httpTransport = http.DefaultTransport.(*http.Transport).Clone()
	}
	m.httpTransport = traceTransport(o.TracerProvider, m.httpTransport)
	if m.now == nil {
		m.now = time.Now
	}
	m.life, m.stop = context.WithCancel(context.Background())
	m.spool = newSpool("", m.log)
	m.pool = newPool(newProcessLimits(o), m.now, func(s *session) { m.goBG(s.close) }, m.measure)
	return m
}

// measure returns the resident memory of a session's server process and
// its children, 0 when it is no process or cannot be measured.
func (m *Manager) measure(s *session) int64 {
	if s.pid <= 0 {
		return 0
	}
	if rss, ok := m.pool.limits.rss(s.pid); ok {
		return rss
	}
	return 0
}

// startSweeper starts, once, the goroutine that closes idle stdio
// processes (checking every IdleTimeout/4, at most every minute), which
// ends with Close.
func (m *Manager) startSweeper() {
	idle := m.pool.limits.idle
	if idle < 0 {
		return
	}
	m.sweepOnce.Do(func() {
		every := min(max(idle/4, time.Second), time.Minute)
		m.goBG(func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-m.life.Done():
					return
				case <-t.C:
					m.pool.sweep()
				}
			}
		})
	})
}

func (m *Manager) protocolVersion() string {
	switch m.opts.ProtocolVersion {
	case "":
		return defaultProtocolVersion
	case "latest":
		return ""
	}
	return m.opts.ProtocolVersion
}

func (m *Manager) lock(ctx context.Context) error {
	select {
	case m.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *Manager) unlock() { <-m.sem }

// Tools returns the tools of every enabled, healthy server, in server name
// order and each server's own order. It implements toolset.MCPSource.
//
// Servers are discovered concurrently on first use, each bounded by its
// session_init_timeout; a failing one is skipped with a warning. Later
// calls re-read the extensions source (cheap when unchanged), restart only
// servers whose configuration changed, and re-list only servers that sent
// tools/list_changed. When nothing changed, the returned slice is the same
// as last time; callers must not modify it.
func (m *Manager) Tools(ctx context.Context) ([]*tool.Tool, error) { return m.discoverTools(ctx, nil) }

// ToolsOf is Tools limited to the named servers: only they are discovered
// (the other servers are neither started nor waited for, and a hung one
// costs nothing) and only their tools are returned, in the order of Tools.
// Names of servers that are not configured are ignored. It returns a new
// slice on every call. Use it when the servers needed are known, such as
// for one tool call (see [Manager.ServersFor]).
func (m *Manager) ToolsOf(ctx context.Context, servers []string) ([]*tool.Tool, error) {
	want := make(map[string]bool, len(servers))
	for _, name := range servers {
		want[name] = true
	}
	all, err := m.discoverTools(ctx, want)
	if err != nil {
		return nil, err
	}
	out := make([]*tool.Tool, 0, len(all))
	for _, t := range all {
		if want[t.Meta[MetaServer]] {
			out = append(out, t)
		}
	}
	return out, nil
}

// ServersFor returns, sorted, the enabled servers that could expose a tool
// named name, judged from their configuration alone (nothing is started):
// every server with tool_name_prefix false, and those whose "<server>_"
// prefix, sanitised as tool names are (see [ToolName]), begins name. The
// error is that of an unreadable extensions configuration.
func (m *Manager) ServersFor(name string) ([]string, error) {
	if m.opts.Extensions == nil {
		return nil, nil
	}
	ext, _, err := m.opts.Extensions.Get()
	if ext == nil {
		return nil, err
	}
	var out []string
	for _, s := range ext.EnabledServers() {
		if s.Err == nil && couldName(s, name) {
			out = append(out, s.Name)
		}
	}
	return out, nil
}

// discoverTools discovers the servers of want (all when nil) that need it
// and returns the tools of every listed server.
func (m *Manager) discoverTools(ctx context.Context, want map[string]bool) ([]*tool.Tool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(m.life, cancel)()
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.unlock()

	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if err := m.refreshConfig(); err != nil {
		return nil, err
	}

	m.mu.Lock()
	var work []*server
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		if s := m.servers[name]; s.needsListingLocked() && (want == nil || want[name]) {
			work = append(work, s)
		}
	}
	m.mu.Unlock()

	changed := make([]bool, len(work))
	var wg sync.WaitGroup
	for i, s := range work {
		wg.Go(func() { changed[i] = s.discover(ctx) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stale || slices.Contains(changed, true) {
		m.tools, m.stale = m.buildLocked(), false
	}
	return m.tools, nil
}

// refreshConfig applies the current extensions configuration: servers
// whose configuration changed, appeared or disappeared are replaced or
// stopped; the others keep their sessions and tools.
func (m *Manager) refreshConfig() error {
	var ext *config.Extensions
	var err error
	if m.opts.Extensions != nil {
		ext, _, err = m.opts.Extensions.Get()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		if ext == nil && m.ext == nil {
			return err
		}
		if msg := err.Error(); msg != m.extErr {
			m.extErr = msg
			m.log.Warn("cannot reload the extensions config; keeping the last good one", "err", err)
		}
		if ext == nil {
			ext = m.ext
		}
	} else {
		m.extErr = ""
	}
	if ext == nil {
		ext = &config.Extensions{}
	}
	if ext == m.ext {
		return nil
	}
	baseDir := baseDirOf(ext.Path)
	next := make(map[string]*server, len(ext.MCPServers))
	dirty := m.ext == nil
	for name, cfg := range ext.MCPServers {
		cfg.Name = name
		if old := m.servers[name]; old != nil && old.fp == fingerprint(cfg) && old.baseDir == baseDir {
			next[name] = old
			continue
		}
		s := m.newServer(cfg, baseDir)
		if cfg.Enabled && cfg.Err != nil {
			m.log.Warn(fmt.Sprintf("Skipping MCP server '%s': %v", name, cfg.Err))
		}
		next[name] = s
		dirty = true
	}
	for name, old := range m.servers {
		if next[name] != old {
			m.pool.removeServer(old)
			dirty = true
		}
	}
	m.ext, m.servers = ext, next
	if dirty {
		m.stale = true
	}
	return nil
}

// Reset forgets every server, tool and session, as DeerFlow's cache reset
// endpoint does; the next Tools call discovers again. Sessions are closed
// in the background.
func (m *Manager) Reset() {
	m.sem <- struct{}{}
	defer m.unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.servers {
		m.pool.removeServer(s)
	}
	m.ext, m.servers, m.tools, m.stale = nil, nil, nil, true
	m.closeUserViews(false)
}

// Close stops discovery in progress, closes every session (stdio servers
// concurrently, each given Options.TerminateGrace to exit) and waits for
// them. Tools fails after Close.
func (m *Manager) Close() error {
	m.stop()
	m.sem <- struct{}{}
	defer m.unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	servers := slices.Collect(maps.Values(m.servers))
	m.mu.Unlock()
	if m.sharedPool {
		for _, s := range servers {
			m.pool.removeServer(s)
		}
	} else {
		m.pool.closeAll()
	}
	m.closeUserViews(true)
	m.bgMu.Lock()
	m.bgClosed = true
	m.bgMu.Unlock()
	m.wg.Wait()
	if err := m.spool.close(); err != nil {
		m.log.Warn(err.Error())
	}
	if t, ok := m.httpTransport.(interface{ CloseIdleConnections() }); ok && m.opts.HTTPTransport == nil {
		t.CloseIdleConnections()
	}
	return nil
}

// goBG runs f in the background; Close waits for it unless Close is
// already waiting.
func (m *Manager) goBG(f func()) {
	m.bgMu.Lock()
	defer m.bgMu.Unlock()
	if m.bgClosed {
		go f()
		return
	}
	m.wg.Go(f)
}

// lookup returns the current runtime of the server named name.
func (m *Manager) lookup(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[name]
}
