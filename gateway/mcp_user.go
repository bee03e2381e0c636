package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/antlerhq/antler/community/netguard"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
)

// The caller's own MCP configuration (config.UserMCP, one file per user
// in the home): servers only the caller's runs see, and the caller's
// values for the headers and env of the shared servers. Every route acts
// on the caller's file only. Values of headers and env are masked on the
// way out ("***"), and "***" sent back keeps the stored value, as in
// /api/mcp/config.

// userMCPRoutes registers /api/mcp/user.
func (s *Server) userMCPRoutes(h func(pattern string, f handlerFunc)) {
	h("GET /api/mcp/user", s.getUserMCP)
	h("PUT /api/mcp/user/servers/{name}", s.putUserMCPServer)
	h("DELETE /api/mcp/user/servers/{name}", s.deleteUserMCPServer)
	h("PUT /api/mcp/user/credentials/{name}", s.putUserMCPCredential)
	h("DELETE /api/mcp/user/credentials/{name}", s.deleteUserMCPCredential)
}

// userMCPOn answers 501 when the gateway has no users' MCP files.
func (s *Server) userMCPOn(w http.ResponseWriter) bool {
	if s.opts.UserMCP == nil {
		writeError(w, http.StatusNotImplemented, "per-user MCP servers are not configured on this gateway")
		return false
	}
	return true
}

// sharedMCP loads the shared servers of extensions_config.json.
func (s *Server) sharedMCP() (*config.Extensions, error) {
	if s.opts.ExtensionsPath == "" {
		return &config.Extensions{MCPServers: map[string]config.MCPServer{}}, nil
	}
	return config.LoadExtensions(s.opts.ExtensionsPath)
}

// mcpServerNames returns, sorted, the MCP servers user's runs see: the
// shared ones and the user's own (nil when neither can be read).
func (s *Server) mcpServerNames(user string) []string {
	ext, err := s.sharedMCP()
	if err != nil {
		s.logger.Warn("cannot read the extensions config", "err", err)
		ext = nil
	}
	if s.opts.UserMCP != nil {
		if u, err := s.opts.UserMCP.Load(user); err == nil {
			return u.View(ext).ServerNames()
		}
	}
	if ext == nil {
		return nil
	}
	return ext.ServerNames()
}

// userMCPError answers an error of the user's file: a config error (the
// file or the change does not load) is the caller's 400.
func (s *Server) userMCPError(w http.ResponseWriter, err error) {
	var br *badRequest
	var ce *config.Error
	switch {
	case errors.As(err, &br):
		writeError(w, http.StatusBadRequest, "%s", br.msg)
	case errors.As(err, &ce):
		writeError(w, http.StatusBadRequest, "%s", err.Error())
	default:
		s.internal(w, "cannot update the user's MCP config", err)
	}
}

// maskedCredential shows a credential with its values masked.
func maskedCredential(c config.Credential) map[string]any {
	mask := func(m map[string]string) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = v
			if v != "" {
				out[k] = masked
			}
		}
		return out
	}
	return map[string]any{"headers": mask(c.Headers), "env": mask(c.Env)}
}

// getUserMCP is GET /api/mcp/user: the caller's servers (masked), the
// caller's credentials (masked), and the shared servers' names.
func (s *Server) getUserMCP(w http.ResponseWriter, _ *http.Request, u *principal) {
	if !s.userMCPOn(w) {
		return
	}
	d, err := s.opts.UserMCP.Doc(u.ID)
	if err != nil {
		s.userMCPError(w, err)
		return
	}
	servers := make(map[string]any, len(d.MCPServers))
	for name, raw := range d.MCPServers {
		obj := map[string]json.RawMessage{}
		_ = json.Unmarshal(raw, &obj) // the file parsed: every entry is an object
		servers[name] = maskServer(obj)
	}
	creds := make(map[string]any, len(d.Credentials))
	for name, c := range d.Credentials {
		creds[name] = maskedCredential(c)
	}
	shared, err := s.sharedMCP()
	if err != nil {
		s.internal(w, "cannot read the extensions config: "+err.Error(), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"mcp_servers": servers, "credentials": creds, "shared_servers": shared.ServerNames()})
}

// putUserMCPServer is PUT /api/mcp/user/servers/{name}: adds or replaces
// one of the caller's own servers, an mcpServers entry as in
// extensions_config.json. A name of a shared server is 409; a stdio
// server (a command on the gateway's host) is refused for non-admins and
// checked by the stdio policy for admins; the entry must load without
// error (400 naming the key).
func (s *Server) putUserMCPServer(w http.ResponseWriter, r *http.Request, u *principal) {
	name := r.PathValue("name")
	if !s.userMCPOn(w) {
		return
	}
	if !mcptools.ValidName(name) {
		writeError(w, http.StatusUnprocessableEntity, "invalid MCP server name %q (letters, digits, _ and -, at most 64)", name)
		return
	}
	var srv map[string]json.RawMessage
	if !s.decodeJSON(w, r, &srv) {
		return
	}
	if srv == nil {
		writeError(w, http.StatusUnprocessableEntity, "the body must be an MCP server object")
		return
	}
	shared, err := s.sharedMCP()
	if err != nil {
		s.internal(w, "cannot read the extensions config: "+err.Error(), err)
		return
	}
	if _, taken := shared.MCPServers[name]; taken {
		writeError(w, http.StatusConflict, "MCP server '%s' is a shared server; set your values for its secrets with PUT /api/mcp/user/credentials/%s", name, name)
		return
	}
	var st stdioServer
	b, _ := json.Marshal(srv)
	if err := json.Unmarshal(b, &st); err != nil {
		writeError(w, http.StatusBadRequest, "MCP server '%s' is malformed: %v", name, err)
		return
	}
	if msg := userServerURLRefusal(srv, u); msg != "" {
		writeError(w, http.StatusBadRequest, "MCP server '%s': %s", name, msg)
		return
	}
	if st.isStdio() && st.enabled() {
		if !u.Admin {
			writeError(w, http.StatusForbidden, "only an admin may add a stdio MCP server: it runs a command on the gateway's host; use an http or sse server")
			return
		}
		if msg := checkStdioPolicy(name, &st, s.allowlist()); msg != "" {
			writeError(w, http.StatusBadRequest, "%s", msg)
			return
		}
	}
	_, err = s.opts.UserMCP.Edit(u.ID, func(d *config.UserMCPDoc) error {
		old := map[string]json.RawMessage{}
		if raw, ok := d.MCPServers[name]; ok {
			_ = json.Unmarshal(raw, &old)
		}
		if err := mergeServer(srv, old); err != nil {
			return err
		}
		raw, _ := json.Marshal(srv)
		one, _ := json.Marshal(map[string]any{"mcpServers": map[string]json.RawMessage{name: raw}})
		parsed, err := config.ParseUserMCP(config.UserMCPFileName, one)
		if err != nil {
			return err
		}
		if p := parsed.MCPServers[name]; p.Enabled && p.Err != nil {
			return &badRequest{fmt.Sprintf("MCP server '%s': %v", name, p.Err)}
		}
		d.MCPServers[name] = raw
		return nil
	})
	if err != nil {
		s.userMCPError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "server": maskServer(srv)})
}

// userServerURLRefusal screens the url of a non-admin's http or sse
// server with the web tools' SSRF guard (no loopback, private, link-local
// or metadata address written as such), so that a user cannot make the
// gateway's host reach its own network; "" when it passes. A host name is
// not resolved here: one that resolves to a private address is not
// caught (docs/differences.md).
func userServerURLRefusal(srv map[string]json.RawMessage, u *principal) string {
	if u.Admin {
		return ""
	}
	var url string
	if raw, ok := srv["url"]; !ok || json.Unmarshal(raw, &url) != nil || url == "" {
		return ""
	}
	if _, err := (&netguard.Guard{Action: "connect to"}).CheckURLString(url); err != nil {
		return err.Error()
	}
	return ""
}

// deleteUserMCPServer is DELETE /api/mcp/user/servers/{name}: 204, or
// 404 when the caller has no such server.
func (s *Server) deleteUserMCPServer(w http.ResponseWriter, r *http.Request, u *principal) {
	s.deleteUserMCPEntry(w, u, r.PathValue("name"), func(d *config.UserMCPDoc, name string) bool {
		_, ok := d.MCPServers[name]
		delete(d.MCPServers, name)
		return ok
	})
}

// deleteUserMCPCredential is DELETE /api/mcp/user/credentials/{name}.
func (s *Server) deleteUserMCPCredential(w http.ResponseWriter, r *http.Request, u *principal) {
	s.deleteUserMCPEntry(w, u, r.PathValue("name"), func(d *config.UserMCPDoc, name string) bool {
		_, ok := d.Credentials[name]
		delete(d.Credentials, name)
		return ok
	})
}

var errNoEntry = errors.New("no such entry")

func (s *Server) deleteUserMCPEntry(w http.ResponseWriter, u *principal, name string, del func(*config.UserMCPDoc, string) bool) {
	if !s.userMCPOn(w) {
		return
	}
	_, err := s.opts.UserMCP.Edit(u.ID, func(d *config.UserMCPDoc) error {
		if !del(d, name) {
			return errNoEntry
		}
		return nil
	})
	switch {
	case errors.Is(err, errNoEntry):
		writeError(w, http.StatusNotFound, "MCP server '%s' not found in your MCP config", name)
	case err != nil:
		s.userMCPError(w, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// putUserMCPCredential is PUT /api/mcp/user/credentials/{name}
// {"headers": {...}, "env": {...}}: the caller's values for secrets of
// the shared server name (404 when there is none). Only keys the shared
// server declares may be set (400); "***" keeps the caller's stored
// value. The caller's runs then reach that server with these values, on
// sessions of their own.
func (s *Server) putUserMCPCredential(w http.ResponseWriter, r *http.Request, u *principal) {
	name := r.PathValue("name")
	if !s.userMCPOn(w) {
		return
	}
	var body config.Credential
	if !s.decodeJSON(w, r, &body) {
		return
	}
	shared, err := s.sharedMCP()
	if err != nil {
		s.internal(w, "cannot read the extensions config: "+err.Error(), err)
		return
	}
	srv, ok := shared.MCPServers[name]
	if !ok {
		writeError(w, http.StatusNotFound, "no shared MCP server '%s' (shared: %s)", name, namesOrNone(shared.ServerNames()))
		return
	}
	_, err = s.opts.UserMCP.Edit(u.ID, func(d *config.UserMCPDoc) error {
		old := d.Credentials[name]
		for _, sec := range []struct {
			what     string
			vals, in map[string]string
		}{{"header", old.Headers, body.Headers}, {"env key", old.Env, body.Env}} {
			for _, k := range slices.Sorted(maps.Keys(sec.in)) {
				if sec.in[k] != masked {
					continue
				}
				v, had := sec.vals[k]
				if !had {
					return &badRequest{fmt.Sprintf("Cannot set %s '%s' to masked value '%s'; provide a real value.", sec.what, k, masked)}
				}
				sec.in[k] = v
			}
		}
		if _, err := srv.WithCredentials(body); err != nil {
			return &badRequest{err.Error()}
		}
		d.Credentials[name] = body
		return nil
	})
	if err != nil {
		s.userMCPError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "credential": maskedCredential(body)})
}

func namesOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
