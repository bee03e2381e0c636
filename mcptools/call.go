package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// call runs one tool call on server (by name, so that a tool bound before
// a configuration change reaches the current runtime).
func (m *Manager) call(ctx context.Context, call *tool.Call, serverName, rawName string, args json.RawMessage) (*tool.Result, error) {
	if r := m.notOwner(call, serverName); r != nil {
		return r, nil
	}
	s := m.lookup(serverName)
	if s == nil || !s.cfg.Enabled || s.cfg.Err != nil {
		return tool.Errorf("MCP server '%s' is not configured or not enabled", serverName), nil
	}
	arguments, bad := objectArgs(args)
	if bad != nil {
		return bad, nil
	}

	scope := ""
	var place *threadPlace
	// A shared stdio server serves every thread from its control process,
	// like a call without a thread: outside the thread's folders.
	if s.cfg.Type == "stdio" && call != nil && call.ThreadID != "" && s.cfg.ProcessScope != config.ProcessShared {
		scope = call.UserID + ":" + call.ThreadID
		if m.opts.Layout != nil {
			var err error
			if place, err = m.prepareThread(call.UserID, call.ThreadID); err != nil {
				return tool.Errorf("MCP server '%s' cannot run for this thread: %v", serverName, err), nil
			}
		}
	}
	if us := m.userScope(s, call); us != "" {
		scope = us
	}
	res, err := m.callSession(ctx, call, s, scope, place, rawName, arguments)
	if place != nil && res != nil {
		place.maskResult(res)
	}
	return res, err
}

// callSession runs the call on the session of scope, started in place
// when it is a thread's stdio session with a layout.
func (m *Manager) callSession(ctx context.Context, call *tool.Call, s *server, scope string, place *threadPlace, rawName string, arguments json.RawMessage) (*tool.Result, error) {
	serverName := s.name
	// Acquire a session, bounded by session_init_timeout.
	actx := ctx
	if t := s.cfg.InitTimeout(); t > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	e, err := m.pool.acquire(actx, poolKey{s, scope}, func() (*session, error) {
		sess, err := m.connect(withSessionUser(actx, scopeUser(scope)), s, place)
		if err == nil && scope == "" {
			s.controlRestarted()
		}
		return sess, err
	})
	if err != nil {
		return acquireFailed(ctx, actx, s, err)
	}
	defer m.pool.release(e)
	if scopeUser(scope) != "" {
		// A user's own session ends with the call (deferred calls run in
		// reverse: removed first, closed by the release), so that their
		// number stays that of the calls in flight.
		defer m.pool.remove(e)
	}

	timeout, configured := m.callTimeout(s)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: rawName, Arguments: arguments}
	if call != nil && call.Emit != nil {
		token := m.progress.add(func(p *mcp.ProgressNotificationParams) {
			call.ReportProgress(tool.Progress{Server: serverName, Tool: rawName, Progress: p.Progress, Total: p.Total, Message: p.Message})
		})
		defer m.progress.remove(token)
		params.SetProgressToken(token)
	}
	var tr *translator
	if place != nil {
		tr = place.translator(stdioDir(s.cfg, s.baseDir, place))
	}
	m.spool.begin()
	defer m.spool.end()
	if call != nil && m.opts.ElicitationHandler != nil {
		defer m.asking.add(e.sess.cs, call, cctx.Done())()
	}
	r, err := m.callTraced(cctx, e.sess.cs, s, params)
	if err == nil {
		if err := m.spool.takeResult(r); err != nil {
			return tool.Errorf("MCP tool '%s' on server '%s' returned a large text that could not be read back from its spool file: %v", rawName, serverName, err), nil
		}
		if tr != nil {
			tr.translateResult(r)
		}
		return convertResult(r), nil
	}
	var werr *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case cctx.Err() != nil:
		return m.timeoutResult(s, rawName, timeout, configured), nil
	case connectionLost(err, e.sess):
		m.pool.remove(e)
		return tool.Errorf("MCP server '%s' closed the connection while running '%s'; it will be restarted on the next call%s",
			serverName, rawName, stderrNote(e.sess.stderr)), nil
	case errors.As(err, new(authorizationError)):
		var ae authorizationError
		errors.As(err, &ae)
		return tool.Errorf("%v", ae), nil
	case errors.As(err, &werr):
		return tool.Errorf("%s", werr.Message), nil
	}
	return tool.Errorf("MCP tool '%s' on server '%s' failed: %v", rawName, serverName, err), nil
}

// callTimeout returns the bound of a call to s: its tool_call_timeout, or
// Options.DefaultCallTimeout when it sets none (configured is then false).
func (m *Manager) callTimeout(s *server) (timeout time.Duration, configured bool) {
	if t := s.cfg.CallTimeout(); t > 0 {
		return t, true
	}
	return m.opts.DefaultCallTimeout, false
}

// timeoutResult is the error result of a call that reached its bound. The
// SDK has already sent notifications/cancelled for it (when the call's
// context ends, the request is retired and the notification sent in the
// background). The message names the server, the tool and the setting
// that allows a longer call.
func (m *Manager) timeoutResult(s *server, rawName string, timeout time.Duration, configured bool) *tool.Result {
	file := "extensions_config.json"
	m.mu.Lock()
	if m.ext != nil && m.ext.Path != "" {
		file = filepath.Base(m.ext.Path)
	}
	m.mu.Unlock()
	bound, advice := fmt.Sprintf("%gs", timeout.Seconds()), "raise"
	if !configured {
		bound, advice = bound+" (the default bound)", "set"
	}
	return tool.Errorf("MCP tool '%s' on server '%s' timed out after %s and was cancelled; if it needs longer, %s tool_call_timeout (seconds) of server '%s' in %s",
		rawName, s.name, bound, advice, s.name, file)
}

// connectionLost reports whether a failed call means the session is gone.
// A crashed server shows up as EOF on its connection; the session's watcher
// may need a moment to notice, and the stderr tail to arrive.
func connectionLost(err error, s *session) bool {
	if lostConnection(err) {
		select {
		case <-s.dead:
		case <-time.After(200 * time.Millisecond):
		}
		return true
	}
	return !s.alive()
}

// lostConnection reports whether err means the peer went away.
func lostConnection(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// stderrSettle bounds the wait for a crashed server's stderr to drain.
const stderrSettle = 500 * time.Millisecond

func stderrNote(b *tailBuffer) string {
	b.settle(stderrSettle)
	tail := strings.TrimSpace(b.String())
	if tail == "" {
		return ""
	}
	if len(tail) > 300 {
		tail = "..." + tail[len(tail)-300:]
	}
	return " (server stderr: " + tail + ")"
}

// objectArgs checks that args is a JSON object; no arguments at all
// become {} (never null: TypeScript servers reject it). JSON null is not
// an object and is refused, as package tool and the agent loop refuse it.
func objectArgs(args json.RawMessage) (json.RawMessage, *tool.Result) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, tool.Errorf("tool arguments must be a JSON object")
	}
	return trimmed, nil
}

// progressRegistry routes notifications/progress to the call that asked
// for them by token.
type progressRegistry struct {
	next atomic.Uint64
	mu   sync.Mutex
	fns  map[string]func(*mcp.ProgressNotificationParams) // guarded by mu
}

func (r *progressRegistry) add(fn func(*mcp.ProgressNotificationParams)) string {
	token := "antler-" + strconv.FormatUint(r.next.Add(1), 10)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fns == nil {
		r.fns = map[string]func(*mcp.ProgressNotificationParams){}
	}
	r.fns[token] = fn
	return token
}

func (r *progressRegistry) remove(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.fns, token)
}

func (m *Manager) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	token := fmt.Sprint(req.Params.ProgressToken)
	m.progress.mu.Lock()
	fn := m.progress.fns[token]
	m.progress.mu.Unlock()
	if fn != nil {
		fn(req.Params)
	}
}

// acquireFailed turns a failure to acquire a session into the call's
// result: a model-facing error, or a Go error for cancellation and a
// closed manager. actx is the acquisition's context (session_init_timeout).
func acquireFailed(ctx, actx context.Context, s *server, err error) (*tool.Result, error) {
	var be *boundError
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case actx.Err() != nil:
		return tool.Errorf("MCP server '%s' did not start within %gs", s.name, s.cfg.InitTimeout().Seconds()), nil
	case errors.Is(err, errClosed):
		return nil, err
	case errors.As(err, &be):
		return tool.Errorf("MCP server '%s' cannot start another process: %v; a server without per-thread files can serve every thread from one process with \"process_scope\": \"shared\" in its entry of extensions_config.json",
			s.name, err), nil
	}
	return tool.Errorf("MCP server '%s' is unavailable: %v", s.name, err), nil
}
