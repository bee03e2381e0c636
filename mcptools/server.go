package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
)

// server is the runtime of one configured MCP server. It is replaced, not
// changed, when the server's configuration changes.
type server struct {
	// immutable after newServer:
	m          *Manager
	name       string
	cfg        config.MCPServer
	fp         string // fingerprint of cfg
	baseDir    string // directory of the extensions file
	client     *mcp.Client
	httpClient *http.Client // sse and http only
	tokens     *tokenSource // OAuth only

	// changes counts notifications/tools/list_changed received.
	changes atomic.Int64
	// noisy is set once a stdout line of the server was skipped (and
	// logged at warning level).
	noisy atomic.Bool

	// guarded by Manager.mu:
	status    ServerStatus
	tools     []*mcp.Tool // last good listing
	listed    bool        // tools holds a listing
	resources bool        // the listing's session states the resources capability
	prompts   bool        // the listing's session states the prompts capability
	tried     bool        // discovery ran (succeeded or failed) for this runtime
	listedAt  int64       // changes when the last listing started
}

// fingerprint identifies a server configuration; equal fingerprints mean
// the running server can be kept across a change of the extensions file.
func fingerprint(s config.MCPServer) string {
	errText := ""
	if s.Err != nil {
		errText = s.Err.Error()
	}
	s.Err = nil
	b, _ := json.Marshal(struct {
		S   config.MCPServer
		Err string
	}{s, errText})
	return string(b)
}

func (m *Manager) newServer(cfg config.MCPServer, baseDir string) *server {
	s := &server{m: m, name: cfg.Name, cfg: cfg, fp: fingerprint(cfg), baseDir: baseDir}
	s.status = ServerStatus{Name: cfg.Name, Transport: cfg.Type, State: StatePending}
	switch {
	case !cfg.Enabled:
		s.status.State = StateDisabled
	case cfg.Err != nil:
		s.status.State, s.status.Err = StateFailed, cfg.Err
	}
	if cfg.Type == "sse" || cfg.Type == "http" {
		if o := cfg.OAuth; o != nil && o.Enabled && o.GrantType != config.GrantAuthorizationCode {
			s.tokens = newTokenSource(*o, &http.Client{Transport: m.httpTransport}, m.now)
		}
		s.httpClient = &http.Client{Transport: &spoolTransport{sp: m.spool,
			base: &headerTransport{base: m.httpTransport, headers: cfg.Headers, tokens: s.tokens}}}
	}
	log := m.log.With("mcp_server", cfg.Name)
	s.client = mcp.NewClient(&mcp.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion}, &mcp.ClientOptions{
		Logger: log,
		// No roots, sampling or elicitation unless asked for: servers then
		// neither call back into Antler nor replace their configured
		// directories with roots (server-filesystem), and stdio servers
		// exit promptly on close. With an ElicitationHandler, form and
		// url elicitation are offered.
		Capabilities: elicitationCapabilities(m.opts.ElicitationHandler != nil),
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.changes.Add(1)
			log.Debug("MCP server changed its tool list")
		},
		ProgressNotificationHandler: m.onProgress,
		//lint:ignore SA1019 servers still send notifications/message during the protocol's deprecation window; they are logged, never shown to the model
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			log.Debug("MCP server log message", "level", r.Params.Level, "logger", r.Params.Logger, "data", r.Params.Data)
		},
		ElicitationHandler: m.elicitationHandler(cfg.Name),
	})
	return s
}

// sessionEnded is called when a session's connection ended, by our Close
// or because the server went away; the session is dropped so that the next
// call starts a new one.
func (s *server) sessionEnded(sess *session) {
	if sess.alive() {
		return
	}
	s.m.pool.removeSession(s, sess)
}

// controlRestarted is called when a call (not discovery) started the
// control session of s again, after it was closed idle or at the bound or
// after the server went away: a tools/list_changed sent meanwhile was
// lost, so the next Tools call lists s again, over the open session.
func (s *server) controlRestarted() {
	s.m.mu.Lock()
	listed := s.listed
	s.m.mu.Unlock()
	if listed {
		s.changes.Add(1)
	}
}

// needsListing reports whether Tools must (re)list s: it was never tried,
// or it sent tools/list_changed since its last listing.
func (s *server) needsListingLocked() bool {
	if !s.cfg.Enabled || s.cfg.Err != nil {
		return false
	}
	if !s.tried {
		return true
	}
	// A server that asked for a login is tried again at every assembly:
	// the user may have logged in since (antler mcp login, the gateway's
	// login routes). It costs one refused request.
	if !s.listed && errors.As(s.status.Err, new(authorizationError)) {
		return true
	}
	return s.listed && s.changes.Load() > s.listedAt
}

// discover connects s (or reuses its control session) and lists its tools,
// bounded by session_init_timeout. It reports whether the tool list
// changed. A failure is logged once and leaves earlier tools in place.
func (s *server) discover(ctx context.Context) (changed bool) {
	m := s.m
	m.mu.Lock()
	relist := s.listed
	s.status.State = StateConnecting
	st := s.status
	m.mu.Unlock()
	m.emitStatus(st)

	start := time.Now()
	timeout := s.cfg.InitTimeout()
	dctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	gen := s.changes.Load()
	tools, caps, err := s.list(dctx)
	resources := caps != nil && caps.Resources != nil
	elapsed := time.Since(start)

	m.mu.Lock()
	if ctx.Err() != nil && !relist {
		// The caller gave up; try again on the next Tools call.
		s.status.State = StatePending
		st = s.status
		m.mu.Unlock()
		m.emitStatus(st)
		return false
	}
	s.tried = true
	s.status.Duration = elapsed
	switch {
	case err != nil && relist:
		s.status.State = StateReady
		s.listedAt = gen // do not retry until the next notification
		m.log.Warn(fmt.Sprintf("Could not re-list tools of MCP server '%s'; keeping the previous list", s.name), "err", err)
	case err != nil:
		if dctx.Err() != nil && ctx.Err() == nil {
			err = errTimedOut(timeout)
			m.log.Warn(fmt.Sprintf("Skipping MCP server '%s' after tool discovery timed out (%gs)", s.name, timeout.Seconds()))
		} else if errors.As(err, new(authorizationError)) && errors.As(s.status.Err, new(authorizationError)) {
			// Said already; tried again at every assembly.
			m.log.Debug(fmt.Sprintf("Skipping MCP server '%s': %v", s.name, err))
		} else {
			m.log.Warn(fmt.Sprintf("Skipping MCP server '%s': %v", s.name, err))
		}
		s.status.State, s.status.Err = StateFailed, err
	default:
		changed = !s.listed || !sameDefinitions(s.tools, tools)
		changed = changed || s.resources != resources
		s.tools, s.listed, s.listedAt, s.resources = tools, true, gen, resources
		s.prompts = caps != nil && caps.Prompts != nil
		s.status.State, s.status.Err = StateReady, nil
	}
	st = s.status
	m.mu.Unlock()
	m.emitStatus(st)
	return changed
}

// list returns every tool of s over its control session, following
// pages, and the capabilities the session states (nil if none).
func (s *server) list(ctx context.Context) ([]*mcp.Tool, *mcp.ServerCapabilities, error) {
	e, err := s.m.pool.acquire(ctx, poolKey{s, ""}, func() (*session, error) { return s.m.connect(ctx, s, nil) })
	if err != nil {
		return nil, nil, err
	}
	defer s.m.pool.release(e)
	var tools []*mcp.Tool
	for t, err := range e.sess.cs.Tools(ctx, nil) {
		if err != nil {
			if errors.Is(err, mcp.ErrConnectionClosed) {
				s.m.pool.remove(e)
			}
			return nil, nil, connectError(err, e.sess.stderr)
		}
		tools = append(tools, t)
	}
	if init := e.sess.cs.InitializeResult(); init != nil {
		return tools, init.Capabilities, nil
	}
	return tools, nil, nil
}

// sameDefinitions reports whether two listings describe the same tools.
func sameDefinitions(a, b []*mcp.Tool) bool {
	return slices.EqualFunc(a, b, func(x, y *mcp.Tool) bool {
		if x.Name != y.Name || x.Description != y.Description {
			return false
		}
		xs, _ := json.Marshal(x.InputSchema)
		ys, _ := json.Marshal(y.InputSchema)
		return string(xs) == string(ys)
	})
}

// errTimedOut is the error of a discovery that exceeded its bound.
func errTimedOut(timeout time.Duration) error {
	return fmt.Errorf("tool discovery timed out (%gs)", timeout.Seconds())
}

func baseDirOf(extPath string) string {
	if extPath == "" {
		return ""
	}
	return filepath.Dir(extPath)
}
