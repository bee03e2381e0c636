package mcptools

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// This file serves each user's own MCP servers and the user's credentials
// for shared servers (config.UserMCP, a file per user).
//
// A user with such a file gets a view: a child Manager of the servers the
// file changes (config.UserMCP.Overlay: the user's own servers, and the
// shared servers with the user's header and env values applied). The
// child has server runtimes of its own and shares the parent's pool (and
// so its process bound). The pool keys a session by its server runtime
// and scope, so a session opened with a user's credentials (an http
// client sending the user's headers, a stdio process with the user's
// env) belongs to that user's runtime and is never handed to another
// user's call; the shared servers a user did not change are served by
// the parent's runtimes, as for everyone. A shared server whose discovery
// asked Options.AuthUser for a login (Options.Authorizer) joins the view
// of every other user, who discovers and calls it with their own login.
// See docs/design.md, "Per-user MCP servers".

// UserFiles supplies the users' MCP files; *config.UserMCPFiles
// implements it. Load returns an empty file for a user who has none.
type UserFiles interface {
	Load(user string) (*config.UserMCP, error)
}

// defaultMaxUserViews bounds the users whose views are kept open.
const defaultMaxUserViews = 256

// userView is one user's child Manager and its last merged tool list.
type userView struct {
	m *Manager

	// guarded by Manager.usersMu:
	used      time.Time
	base, own []*tool.Tool // the inputs of merged
	merged    []*tool.Tool
	overlay   []string // servers the child serves, last seen
}

// userExtSource is the extensions source of a user's child: the overlay
// of the user's file over the parent's extensions, the same value while
// neither changes.
type userExtSource struct {
	parent ExtensionsSource
	files  UserFiles
	user   string
	log    func(msg string)
	// needLogin returns the shared servers the user's view discovers
	// itself, with the user's authorization (Manager.needLogin).
	needLogin func() map[string]config.MCPServer

	mu       sync.Mutex
	lastExt  *config.Extensions // guarded by mu
	lastU    *config.UserMCP    // guarded by mu
	lastNeed []string           // guarded by mu
	last     *config.Extensions // guarded by mu
}

func (s *userExtSource) Get() (*config.Extensions, bool, error) {
	var ext *config.Extensions
	if s.parent != nil {
		ext, _, _ = s.parent.Get() // the parent reports its own errors
	}
	u, err := s.files.Load(s.user)
	need := s.needLogin()
	needNames := slices.Sorted(maps.Keys(need))
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		return s.last, false, err
	}
	if s.last != nil && ext == s.lastExt && u == s.lastU && slices.Equal(needNames, s.lastNeed) {
		return s.last, false, nil
	}
	over, warnings := u.Overlay(ext)
	for _, w := range warnings {
		s.log(w)
	}
	for name, srv := range need {
		if _, ok := over[name]; !ok {
			over[name] = srv
		}
	}
	out := &config.Extensions{MCPServers: over}
	if ext != nil {
		out.Path = ext.Path
	}
	s.lastExt, s.lastU, s.lastNeed, s.last = ext, u, needNames, out
	return out, true, nil
}

// ToolsFor returns the tools a run of user may bind: those of Tools, with
// the shared servers the user has credentials for served with them, plus
// the user's own servers (Options.UserFiles). Without UserFiles, for user
// "" or a user without a file, it is Tools. A user's file that cannot be
// read or parsed costs that user the own servers and credentials, with a
// warning; the shared servers remain. While nothing changed, the same
// slice is returned.
func (m *Manager) ToolsFor(ctx context.Context, user string) ([]*tool.Tool, error) {
	base, err := m.Tools(ctx)
	if err != nil || user == "" || m.opts.UserFiles == nil {
		return base, err
	}
	v, err := m.userView(user)
	if err != nil {
		m.log.Warn("cannot use the user's MCP file; the user gets the shared servers only", "user", user, "err", err)
		return base, nil
	}
	if v == nil {
		return base, nil
	}
	own, err := v.m.Tools(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		m.log.Warn("the user's MCP servers are unavailable", "user", user, "err", err)
		own = nil
	}
	v.m.mu.Lock()
	overlay := slices.Sorted(maps.Keys(v.m.servers))
	v.m.mu.Unlock()

	m.usersMu.Lock()
	defer m.usersMu.Unlock()
	if v.merged != nil && sameSlice(base, v.base) && sameSlice(own, v.own) && slices.Equal(overlay, v.overlay) {
		return v.merged, nil
	}
	v.base, v.own, v.overlay = base, own, overlay
	v.merged = mergeUserTools(base, own, overlay)
	return v.merged, nil
}

// mergeUserTools is base without the tools of the servers in overlay (the
// user's view replaces them), then own; a name already taken is left out
// (list_mcp_resources and read_mcp_resource of base win).
func mergeUserTools(base, own []*tool.Tool, overlay []string) []*tool.Tool {
	out := make([]*tool.Tool, 0, len(base)+len(own))
	taken := make(map[string]bool, cap(out))
	for _, t := range base {
		if s := t.Meta[MetaServer]; s != "" && slices.Contains(overlay, s) {
			continue
		}
		out = append(out, t)
		taken[t.Name] = true
	}
	for _, t := range own {
		if !taken[t.Name] {
			out = append(out, t)
			taken[t.Name] = true
		}
	}
	return out
}

func sameSlice(a, b []*tool.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// userView returns the view of user, opening it when the user has a
// non-empty file; nil when the user has none.
func (m *Manager) userView(user string) (*userView, error) {
	u, err := m.opts.UserFiles.Load(user)
	if err != nil {
		return nil, err
	}
	m.usersMu.Lock()
	defer m.usersMu.Unlock()
	if m.usersClosed {
		return nil, errClosed
	}
	v := m.users[user]
	if v == nil && u.Empty() && len(m.needLogin(user)) == 0 {
		return nil, nil
	}
	if v == nil {
		m.evictUserViewLocked()
		v = &userView{m: m.newChild(user)}
		if m.users == nil {
			m.users = map[string]*userView{}
		}
		m.users[user] = v
	}
	v.used = m.now()
	return v, nil
}

// evictUserViewLocked closes the least recently used view when the bound
// of views is reached (its sessions close once their calls end).
func (m *Manager) evictUserViewLocked() {
	limit := m.opts.MaxUserViews
	if limit <= 0 {
		limit = defaultMaxUserViews
	}
	for len(m.users) >= limit {
		var oldest string
		for name, v := range m.users {
			if oldest == "" || v.used.Before(m.users[oldest].used) {
				oldest = name
			}
		}
		child := m.users[oldest].m
		delete(m.users, oldest)
		child.stop()
		m.goBG(func() { _ = child.Close() })
	}
}

// newChild returns the Manager of user's view: the parent's options with
// the user's overlay as its extensions, the user as AuthUser and owner,
// and the parent's pool.
func (m *Manager) newChild(user string) *Manager {
	o := m.opts
	o.UserFiles = nil
	o.AuthUser = user
	o.Extensions = &userExtSource{parent: m.opts.Extensions, files: m.opts.UserFiles, user: user,
		log:       func(msg string) { m.log.Warn(msg, "user", user) },
		needLogin: func() map[string]config.MCPServer { return m.needLogin(user) }}
	c := New(o)
	c.pool, c.sharedPool, c.owner = m.pool, true, user
	c.log = m.log.With("mcp_user", user)
	return c
}

// closeUserViews closes every view: for Close (closing, after the pool
// closed every session) at once and for good, for Reset in the
// background (a view's Close waits for its calls in flight).
func (m *Manager) closeUserViews(closing bool) {
	m.usersMu.Lock()
	views := m.users
	m.users = nil
	if closing {
		m.usersClosed = true
	}
	m.usersMu.Unlock()
	for _, v := range views {
		if closing {
			_ = v.m.Close()
		} else {
			v.m.stop() // its calls are refused from now on (notOwner)
			m.goBG(func() { _ = v.m.Close() })
		}
	}
}

// notOwner is the error result of a call of a user's server made for
// another user; assembly never hands such a tool to another user's run,
// so this is a last guard.
//
// It also refuses a call of a view that was closed (evicted at the
// MaxUserViews bound, or by Reset) while a run still held its tools: the
// call would open a session in the shared pool that nothing closes.
func (m *Manager) notOwner(call *tool.Call, serverName string) *tool.Result {
	if m.owner == "" {
		return nil
	}
	if m.life.Err() != nil {
		return tool.Errorf("the MCP servers of user '%s' were closed meanwhile (configuration reset or too many users); the next turn opens them again", m.owner)
	}
	if call == nil || call.UserID == "" || call.UserID == m.owner {
		return nil
	}
	return tool.Errorf("MCP server '%s' belongs to another user's configuration", serverName)
}

// needLogin returns the shared servers whose discovery asked AuthUser for
// a login, which user's view discovers with user's own authorization (so
// that a user who logged in gets their tools even when AuthUser did not);
// none without an Authorizer or for AuthUser.
func (m *Manager) needLogin(user string) map[string]config.MCPServer {
	if m.opts.Authorizer == nil || user == m.opts.AuthUser {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out map[string]config.MCPServer
	for name, s := range m.servers {
		if !s.listed && m.authorizes(s) && errors.As(s.status.Err, new(authorizationError)) {
			if out == nil {
				out = map[string]config.MCPServer{}
			}
			out[name] = s.cfg
		}
	}
	return out
}
