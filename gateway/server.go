package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/memory"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// Defaults of Options.
const (
	// defaultUser is the user served when no tokens are configured.
	defaultUser = "default"
	// defaultHeartbeat is the interval of SSE heartbeat comments on a
	// silent stream.
	defaultHeartbeat = 15 * time.Second
	// defaultMaxBodyBytes bounds JSON request bodies.
	defaultMaxBodyBytes = 4 << 20
	// DefaultAddr is where `antler serve` listens.
	DefaultAddr = "127.0.0.1:2026"
)

// CacheResetter drops cached MCP tools and sessions
// (*mcptools.Manager implements it).
type CacheResetter interface{ Reset() }

// Options configure a Server. Config, Store, Factory.Assembler and Layout
// are required; every other zero value is documented.
type Options struct {
	// Config is the loaded config.yaml: the models list and the upload
	// limits. Required.
	Config *config.Config
	// Store persists threads, checkpoints and runs. Required. The gateway
	// reads and writes it only through the store.Store interface, so any
	// implementation (SQLite, Postgres) plugs in.
	Store store.Store
	// Factory configures the lead-agent factory that builds every run's
	// agent. Factory.Assembler is required; the gateway sets
	// Factory.Store to Store and adds its own model middleware (message
	// ids for streamed deltas).
	Factory agent.FactoryOptions
	// Layout maps virtual paths to the per-user, per-thread host folders
	// (artifacts, uploads). Required.
	Layout *vpath.Layout
	// Agents stores custom agents; nil disables the agents routes (403,
	// and /api/features says agents_api is off).
	Agents *customagent.Store
	// Skills discovers skills; nil lists none and refuses toggles.
	Skills *skills.Store
	// ExtensionsPath is the extensions_config.json the MCP and skills
	// admin routes write (atomically); "" makes them read-only and empty.
	ExtensionsPath string
	// StdioAllowlist extends npx and uvx, the commands a stdio
	// MCP server written through the API may run (DeerFlow reads it from
	// DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST).
	StdioAllowlist []string
	// MCP is reset after an MCP configuration change and by
	// POST /api/mcp/cache/reset; nil means nothing to reset.
	MCP CacheResetter
	// UserMCP holds the users' MCP files (their own servers and their
	// credentials for shared servers, /api/mcp/user); nil makes those
	// routes answer 501. The MCP source of Factory.Assembler must read
	// the same files (mcptools.Options.UserFiles) for runs to use them.
	UserMCP *config.UserMCPFiles
	// Tokens map bearer tokens to users (config gateway.tokens). None
	// means every request is DefaultUserID, an admin; the caller must then
	// listen on loopback only (RequiresLoopback).
	Tokens []config.GatewayToken
	// DefaultUserID is the user served without tokens; "" means
	// "default".
	DefaultUserID string
	// RunLocks grants one active run per thread; nil means an in-process
	// map (enough for one gateway process).
	RunLocks RunLocks
	// Heartbeat is the SSE heartbeat interval; 0 means 15s.
	Heartbeat time.Duration
	// CORSOrigins are the browser origins allowed to call the gateway from
	// another origin (config gateway.cors_origins, or DeerFlow's
	// GATEWAY_CORS_ORIGINS); none means same-origin only.
	CORSOrigins []string
	// MaxBodyBytes bounds JSON request bodies; 0 means
	// 4 MiB. Uploads are bounded by config's uploads
	// section instead.
	MaxBodyBytes int64
	// Logger receives request failures and run diagnostics; nil discards.
	Logger *slog.Logger
	// Memory is the long-term memory: the /api/memory routes and, unless
	// Factory.Memory is set, the lead agent's memory. nil makes the routes
	// answer 501. The caller owns it (drains and closes it after Close).
	Memory *memory.Manager
	// Telemetry makes a server span of every request (the contrib otelhttp
	// instrumentation), continuing an incoming traceparent, under which
	// the runs a request starts are traced; it is the lead agent's
	// recorder unless Factory.Telemetry is set. nil makes no spans.
	Telemetry *telemetry.Recorder
	// Authorizer applies the authorization section to routes, models and
	// runs (gateway/authz.go); nil authorizes everything. Factory's own
	// Authorizer filters the tools; the gateway sets it to this one when
	// it is nil.
	Authorizer *authz.Authorizer
	// MCPTasks is the MCP background-task runtime behind the
	// /api/threads/{tid}/mcp-tasks routes (gateway/mcp_tasks.go) and GET
	// /api/features' mcp_tasks; nil (mcp_tasks off) makes the routes
	// answer 503.
	MCPTasks *mcptasks.Runtime
	// MCPLogin configures the MCP login routes (gateway/mcp_oauth.go);
	// the zero value turns them off.
	MCPLogin MCPLoginOptions
	// ElicitationTimeout bounds the wait for the human's answer to an
	// MCP server's question (Server.Elicit); the server then gets
	// "cancel". 0 means 5 minutes.
	ElicitationTimeout time.Duration
	// MaxElicitationsPerRun bounds the MCP servers' questions waiting
	// for the human in one run; more are declined. 0 means 4.
	MaxElicitationsPerRun int
}

// Server serves the gateway API. Create it with New, serve Handler, and
// call Close to cancel the runs in flight and wait for them.
type Server struct {
	// immutable after New
	opts      Options
	cfg       *config.Config
	store     store.Store
	factory   *agent.Factory
	layout    *vpath.Layout
	locks     RunLocks
	logger    *slog.Logger
	tokens    map[[32]byte]*principal
	authz     *authz.Authorizer // nil: authorization off
	defUser   *principal
	heartbeat time.Duration
	maxBody   int64
	handler   http.Handler
	baseCtx   context.Context
	stop      context.CancelFunc

	mu     sync.RWMutex    // guards runs and closed
	runs   map[string]*run // active runs by id
	closed bool
	wg     sync.WaitGroup // run goroutines

	extMu sync.Mutex // held for every read-modify-write of the extensions file

	visible visibleCache // rebuilt histories of summarised threads (messages page)

	scheduled schedulerSlot // the scheduled tasks' store and dispatcher (scheduled_launch.go)

	logins mcpLogins // MCP logins waiting for their callback (mcp_oauth.go)

	// MCP servers' questions waiting for the human (elicit.go).
	elicitTimeout time.Duration // immutable after New
	maxElicits    int           // immutable after New
	elicitMu      sync.Mutex
	elicits       map[string]*elicitation // guarded by elicitMu; by request id
	elicitSeq     uint64                  // guarded by elicitMu
}

// New checks opts and returns a Server.
func New(opts Options) (*Server, error) {
	switch {
	case opts.Config == nil:
		return nil, errors.New("gateway: no configuration")
	case opts.Store == nil:
		return nil, errors.New("gateway: no store")
	case opts.Factory.Assembler == nil:
		return nil, errors.New("gateway: no tool assembler")
	case opts.Layout == nil:
		return nil, errors.New("gateway: no path layout")
	}
	if err := opts.MCPLogin.check(); err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		opts:      opts,
		cfg:       opts.Config,
		store:     opts.Store,
		layout:    opts.Layout,
		locks:     opts.RunLocks,
		logger:    logger,
		heartbeat: cmp.Or(opts.Heartbeat, defaultHeartbeat),
		maxBody:   cmp.Or(opts.MaxBodyBytes, defaultMaxBodyBytes),
		runs:      map[string]*run{},

		elicitTimeout: cmp.Or(opts.ElicitationTimeout, defaultElicitationTimeout),
		maxElicits:    cmp.Or(opts.MaxElicitationsPerRun, defaultMaxElicitations),
		elicits:       map[string]*elicitation{},
	}
	if s.locks == nil {
		s.locks = newLocalRunLocks()
	}
	var err error
	s.authz = opts.Authorizer
	defaultRole := s.authz.DefaultRole()
	if s.tokens, err = tokenTable(opts.Tokens, defaultRole); err != nil {
		return nil, err
	}
	if err := s.checkRoles(opts.Tokens, defaultRole); err != nil {
		return nil, err
	}
	defID := cmp.Or(opts.DefaultUserID, defaultUser)
	if !vpath.ValidID(defID) {
		return nil, fmt.Errorf("gateway: default user %q is not a valid user id", defID)
	}
	s.defUser = &principal{ID: defID, Admin: true, Role: config.AdminRole}

	fo := opts.Factory
	fo.Store = &observedStore{Store: opts.Store, onCheckpoint: s.onCheckpoint}
	fo.Config = cmp.Or(fo.Config, opts.Config)
	if fo.Authorizer == nil {
		fo.Authorizer = opts.Authorizer
	}
	if fo.Memory == nil && opts.Memory != nil {
		fo.Memory = opts.Memory
	}
	if fo.Telemetry == nil {
		fo.Telemetry = opts.Telemetry
	}
	if fo.MCPServerNames == nil {
		fo.MCPServerNames = s.mcpServerNames
	}
	fo.ModelMiddlewares = append([]tool.ModelMiddleware{s.stampMessages}, slices.Clone(fo.ModelMiddlewares)...)
	if fo.Logger == nil {
		fo.Logger = logger
	}
	if s.factory, err = agent.NewFactory(fo); err != nil {
		return nil, err
	}
	s.baseCtx, s.stop = context.WithCancel(context.Background())
	s.handler = traced(opts.Telemetry, withCORS(opts.CORSOrigins, s.routes()))
	return s, nil
}

// Handler returns the HTTP handler of every route. Paths under
// /api/langgraph/ are served as if that prefix were /api.
func (s *Server) Handler() http.Handler { return s.handler }

// RequiresLoopback reports whether the server runs without tokens, so
// that it must listen on a loopback address only.
func (s *Server) RequiresLoopback() bool { return len(s.tokens) == 0 }

// DefaultUserID is the user served when no tokens are configured.
func (s *Server) DefaultUserID() string { return s.defUser.ID }

// Close cancels every run in flight, waits for their goroutines to end
// and refuses new runs. It does not close the store. It is safe to call
// more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, r := range s.runs {
		r.requestCancel()
	}
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
	return nil
}

// Timeouts of the http.Server that Serve runs. There is no write
// timeout: a stream lasts as long as its run (streams clear their read
// deadline too).
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 10 * time.Minute // whole request, uploads included
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	shutdownGrace     = 30 * time.Second
)

// Serve serves Handler on ln until ctx is done, then shuts down
// gracefully: it stops accepting connections, cancels the runs in flight
// (their streams end with an end frame) and waits up to 30 s for open
// requests. It returns nil after a shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(func() { _ = s.Close() })
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		_ = s.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	_ = s.Close()
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// stripLangGraph serves /api/langgraph/... as /api/....
func stripLangGraph(next http.Handler) http.Handler {
	const prefix = "/api/langgraph"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || (rest != "" && rest[0] != '/') {
			next.ServeHTTP(w, r)
			return
		}
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path = "/api" + rest
		if raw, ok := strings.CutPrefix(u.RawPath, prefix); ok {
			u.RawPath = "/api" + raw
		} else {
			u.RawPath = ""
		}
		r2.URL = &u
		next.ServeHTTP(w, r2)
	})
}
