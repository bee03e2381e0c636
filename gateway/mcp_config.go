package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"

	"github.com/antlerhq/antler/config"
)

// masked is the value secrets are replaced with in GET /api/mcp/config;
// PUT accepts it back for a key that already has a secret.
const masked = "***"

// knownServerKey reports whether k is a key of an mcpServers entry that
// Antler reads; any other key (which a file written by hand may hold, and
// which the config parser refuses) is masked like env values when its
// name looks secret.
func knownServerKey(k string) bool {
	_, ok := slices.BinarySearch(config.MCPServerKeys(), k)
	return ok
}

var secretKeyRE = regexp.MustCompile(`(?i)(secret|token|password|passwd|api[_-]?key|credential|authorization|private[_-]?key)`)

// oauthSecrets are the oauth keys GET nulls and PUT merges back.
var oauthSecrets = []string{"client_secret", "refresh_token"}

// mcpServers reads the file's mcpServers as raw objects.
func (s *Server) mcpServers() (top map[string]json.RawMessage, servers map[string]map[string]json.RawMessage, err error) {
	if top, err = s.readExtensions(); err != nil {
		return nil, nil, err
	}
	raw, err := rawObject(top, "mcpServers")
	if err != nil {
		return nil, nil, err
	}
	servers = make(map[string]map[string]json.RawMessage, len(raw))
	for name, r := range raw {
		obj := map[string]json.RawMessage{}
		if err := json.Unmarshal(r, &obj); err != nil {
			return nil, nil, fmt.Errorf("mcpServers.%s must be an object", name)
		}
		servers[name] = obj
	}
	return top, servers, nil
}

// maskServer returns a server as GET shows it: env and header values
// "***", OAuth secrets null, secret-looking extra keys "***".
func maskServer(srv map[string]json.RawMessage) map[string]any {
	out := make(map[string]any, len(srv))
	for k, raw := range srv {
		var v any
		_ = json.Unmarshal(raw, &v)
		out[k] = v
	}
	for _, key := range []string{"env", "headers"} {
		if m, ok := out[key].(map[string]any); ok {
			for k, v := range m {
				if s, ok := v.(string); !ok || s != "" {
					m[k] = masked
				}
			}
		}
	}
	if o, ok := out["oauth"].(map[string]any); ok {
		for _, k := range oauthSecrets {
			if _, ok := o[k]; ok {
				o[k] = nil
			}
		}
		if p, ok := o["extra_token_params"].(map[string]any); ok {
			for k := range p {
				if secretKeyRE.MatchString(k) {
					p[k] = masked
				}
			}
		}
	}
	for k, v := range out {
		if !knownServerKey(k) && secretKeyRE.MatchString(k) && v != nil {
			out[k] = masked
		}
	}
	return out
}

func maskedConfig(servers map[string]map[string]json.RawMessage) map[string]any {
	out := make(map[string]any, len(servers))
	for name, srv := range servers {
		out[name] = maskServer(srv)
	}
	return map[string]any{"mcp_servers": out}
}

// getMCPConfig is GET /api/mcp/config (admin).
func (s *Server) getMCPConfig(w http.ResponseWriter, _ *http.Request, _ *principal) {
	s.extMu.Lock()
	_, servers, err := s.mcpServers()
	s.extMu.Unlock()
	if err != nil {
		s.internal(w, "cannot read the extensions config: "+err.Error(), err)
		return
	}
	writeJSON(w, http.StatusOK, maskedConfig(servers))
}

// badRequest is a client mistake found while merging a PUT.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

// mergeSecret resolves one masked value: "***" keeps the stored secret,
// or is refused when there is none.
func mergeSecret(v json.RawMessage, old json.RawMessage, hasOld bool, refusal string) (json.RawMessage, error) {
	var s string
	if json.Unmarshal(v, &s) != nil || s != masked {
		return v, nil
	}
	if !hasOld {
		return nil, &badRequest{refusal}
	}
	return old, nil
}

// mergeMap merges the masked values of one map (env, headers).
func mergeMap(srv, old map[string]json.RawMessage, key string, refusal func(k string) string) error {
	raw, ok := srv[key]
	if !ok || isNull(raw) {
		return nil
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return &badRequest{key + " must be an object"}
	}
	oldMap := map[string]json.RawMessage{}
	if r, ok := old[key]; ok {
		_ = json.Unmarshal(r, &oldMap)
	}
	for k, v := range m {
		o, has := oldMap[k]
		nv, err := mergeSecret(v, o, has, refusal(k))
		if err != nil {
			return err
		}
		m[k] = nv
	}
	srv[key], _ = json.Marshal(m)
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// mergeServer puts the stored secrets back into a server sent by PUT.
func mergeServer(srv, old map[string]json.RawMessage) error {
	if err := mergeMap(srv, old, "env", func(k string) string {
		return fmt.Sprintf("Cannot set env key '%s' to masked value '%s'; provide a real value.", k, masked)
	}); err != nil {
		return err
	}
	if err := mergeMap(srv, old, "headers", func(k string) string {
		return fmt.Sprintf("Cannot set header '%s' to masked value '%s'; provide a real value.", k, masked)
	}); err != nil {
		return err
	}
	if raw, ok := srv["oauth"]; ok && !isNull(raw) {
		o := map[string]json.RawMessage{}
		if err := json.Unmarshal(raw, &o); err != nil {
			return &badRequest{"oauth must be an object"}
		}
		oldO := map[string]json.RawMessage{}
		if r, ok := old["oauth"]; ok {
			_ = json.Unmarshal(r, &oldO)
		}
		for _, k := range oauthSecrets {
			v, sent := o[k]
			prev, had := oldO[k]
			switch {
			case !sent || isNull(v): // null keeps the stored secret
				if had {
					o[k] = prev
				} else {
					delete(o, k)
				}
			default:
				nv, err := mergeSecret(v, prev, had, fmt.Sprintf("Cannot set oauth %s to masked value '%s'; provide a real value.", k, masked))
				if err != nil {
					return err
				}
				o[k] = nv
			}
		}
		if err := mergeMap(o, oldO, "extra_token_params", func(k string) string {
			return fmt.Sprintf("Cannot set oauth extra_token_params key '%s' to masked value '%s'; provide a real value.", k, masked)
		}); err != nil {
			return err
		}
		srv["oauth"], _ = json.Marshal(o)
	}
	for k, v := range srv {
		if knownServerKey(k) || !secretKeyRE.MatchString(k) {
			continue
		}
		o, has := old[k]
		nv, err := mergeSecret(v, o, has, fmt.Sprintf("Cannot set '%s' to masked value '%s'; provide a real value.", k, masked))
		if err != nil {
			return err
		}
		srv[k] = nv
	}
	return nil
}

// sameLaunch reports whether a server starts the same process as before
// (command, args and env unchanged), so that the stdio policy, which
// governs what the API writes, does not refuse servers it did not write.
func sameLaunch(a, b map[string]json.RawMessage) bool {
	if b == nil {
		return false
	}
	var x, y stdioServer
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	_ = json.Unmarshal(ab, &x)
	_ = json.Unmarshal(bb, &y)
	if x.Command != y.Command || !slices.Equal(x.Args, y.Args) || len(x.Env) != len(y.Env) {
		return false
	}
	for k, v := range x.Env {
		if w, ok := y.Env[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func (s *Server) allowlist() []string {
	return append(slices.Clone(defaultStdioAllowlist), s.opts.StdioAllowlist...)
}

// checkServer applies the stdio policy and the config parser's per-server
// checks to an enabled server that changed how it launches.
func (s *Server) checkServer(name string, srv map[string]json.RawMessage) error {
	var st stdioServer
	b, _ := json.Marshal(srv)
	if err := json.Unmarshal(b, &st); err != nil {
		return &badRequest{fmt.Sprintf("MCP server '%s' is malformed: %v", name, err)}
	}
	if !st.enabled() {
		return nil
	}
	if msg := checkStdioPolicy(name, &st, s.allowlist()); msg != "" {
		return &badRequest{msg}
	}
	one, _ := json.Marshal(map[string]any{"mcpServers": map[string]json.RawMessage{name: b}})
	ext, err := config.ParseExtensions("mcp_servers", one, os.LookupEnv)
	if err != nil {
		return &badRequest{err.Error()}
	}
	if e := ext.MCPServers[name].Err; e != nil {
		return &badRequest{fmt.Sprintf("MCP server '%s': %v", name, e)}
	}
	return nil
}

// putMCPConfig is PUT /api/mcp/config (admin): {"mcp_servers": {...}}
// replaces the server map. "***" for a key that has a stored secret keeps
// it (400 for a new key); null OAuth secrets keep the stored ones, ""
// clears them. Changed enabled servers are validated (stdio policy, the
// parser's checks); other top-level keys (skills, ...) are kept. The file
// is replaced atomically and the MCP cache reset, so the next run uses
// the new servers.
func (s *Server) putMCPConfig(w http.ResponseWriter, r *http.Request, _ *principal) {
	var body struct {
		MCPServers map[string]map[string]json.RawMessage `json:"mcp_servers"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	if body.MCPServers == nil {
		writeError(w, http.StatusUnprocessableEntity, "mcp_servers is required")
		return
	}
	s.extMu.Lock()
	defer s.extMu.Unlock()
	top, old, err := s.mcpServers()
	if err != nil {
		s.internal(w, "cannot read the extensions config: "+err.Error(), err)
		return
	}
	names := make([]string, 0, len(body.MCPServers))
	for name := range body.MCPServers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		srv := body.MCPServers[name]
		if srv == nil {
			writeError(w, http.StatusUnprocessableEntity, "mcp_servers.%s must be an object", name)
			return
		}
		if err := mergeServer(srv, old[name]); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
		if sameLaunch(srv, old[name]) {
			continue
		}
		if err := s.checkServer(name, srv); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	top["mcpServers"], _ = json.Marshal(body.MCPServers)
	if err := s.writeExtensions(top); err != nil {
		if errors.As(err, new(*config.Error)) { // what the body sets does not load
			writeError(w, http.StatusBadRequest, "%s", err.Error())
			return
		}
		s.internal(w, "cannot write the extensions config: "+err.Error(), err)
		return
	}
	s.resetMCP()
	writeJSON(w, http.StatusOK, maskedConfig(body.MCPServers))
}

// patchMCPConfig is PATCH /api/mcp/config (admin) {"server_name",
// "enabled"}: flips one server, validating it when it is enabled.
func (s *Server) patchMCPConfig(w http.ResponseWriter, r *http.Request, _ *principal) {
	var body struct {
		ServerName string `json:"server_name"`
		Enabled    *bool  `json:"enabled"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	if body.Enabled == nil {
		writeError(w, http.StatusUnprocessableEntity, "enabled is required")
		return
	}
	s.extMu.Lock()
	defer s.extMu.Unlock()
	top, servers, err := s.mcpServers()
	if err != nil {
		s.internal(w, "cannot read the extensions config: "+err.Error(), err)
		return
	}
	srv, ok := servers[body.ServerName]
	if !ok {
		writeError(w, http.StatusNotFound, "MCP server '%s' not found", body.ServerName)
		return
	}
	srv["enabled"], _ = json.Marshal(*body.Enabled)
	if *body.Enabled {
		if err := s.checkServer(body.ServerName, srv); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	top["mcpServers"], _ = json.Marshal(servers)
	if err := s.writeExtensions(top); err != nil {
		if errors.As(err, new(*config.Error)) { // what the body sets does not load
			writeError(w, http.StatusBadRequest, "%s", err.Error())
			return
		}
		s.internal(w, "cannot write the extensions config: "+err.Error(), err)
		return
	}
	s.resetMCP()
	writeJSON(w, http.StatusOK, maskedConfig(servers))
}

// resetMCPCache is POST /api/mcp/cache/reset (admin).
func (s *Server) resetMCPCache(w http.ResponseWriter, _ *http.Request, _ *principal) {
	s.resetMCP()
	writeJSON(w, http.StatusOK, map[string]any{"success": true,
		"message": "MCP tools cache reset; the next run reloads the MCP servers."})
}

func (s *Server) resetMCP() {
	if s.opts.MCP != nil {
		s.opts.MCP.Reset()
	}
}
