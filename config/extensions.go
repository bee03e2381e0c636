package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Extensions is a loaded extensions_config.json.
type Extensions struct {
	Path       string               // absolute path it was loaded from, "" if none
	MCPServers map[string]MCPServer // by server name
	Skills     map[string]SkillState
	// Middlewares and MCPInterceptors are DeerFlow Python hooks (a string
	// or a list); Antler cannot run them, so a non-empty list stops serve,
	// run and chat unless config.yaml's allow_unenforced names it.
	Middlewares     []string
	MCPInterceptors []string
	// HookLines is the line of the middlewares and mcpInterceptors keys.
	HookLines map[string]int
	// Warnings are soft problems, such as a missing $VAR outside the headers
	// and env of an enabled server (the value became "").
	Warnings []string
}

// SkillState is one entry of the skills map.
type SkillState struct {
	Enabled bool `json:"enabled"` // default true
}

// MCPServer is one entry of mcpServers.
type MCPServer struct {
	Name    string
	Enabled bool   // default true
	Type    string // "stdio" (default), "sse" or "http"; "transport" is an alias
	Command string // stdio
	Args    []string
	Env     map[string]string // nil = none configured
	Cwd     string            // Antler: working directory of a stdio server
	// ProcessScope is Antler's choice of processes for a stdio server:
	// "thread" (the default, DeerFlow's behaviour: one process per thread,
	// started in the thread's workspace, for servers that work in the
	// thread's folder) or "shared" (one process for every thread, for
	// servers without per-thread files).
	ProcessScope string
	// Defer is Antler's per-server deferral of its tools under
	// tool_search: "always", "never" or "auto" ("": the section's
	// tool_search.defer). tool_search.tools wins for a single tool.
	Defer   string
	URL     string // sse, http
	Headers map[string]string
	OAuth   *OAuth
	// Description is shown to operators and in routing hints.
	Description string
	// ToolNamePrefix prefixes tool names with "<server>_" (default true).
	ToolNamePrefix bool
	// ToolCallTimeout bounds each tool call, in seconds; unset, null, 0
	// or less mean the default bound of 10 minutes (mcptools).
	ToolCallTimeout *float64
	// SessionInitTimeout in seconds (default 60); nil when the file sets it
	// to null, meaning no bound. See InitTimeout.
	SessionInitTimeout *float64
	DisabledTools      []string // Antler: tool names (unprefixed) to hide
	Routing            *Routing
	Tools              map[string]json.RawMessage // per-tool overrides, raw
	TaskToolsets       []TaskToolset
	// Unset lists the headers and env keys ("headers.Authorization",
	// "env.GITHUB_TOKEN") of an enabled server whose $VAR is not set; Err
	// then names the first. A user's credentials may supply them
	// (WithCredentials).
	Unset []string
	// Err is set when this server cannot be used, for example a missing
	// $VAR in the headers or env of an enabled server, a missing command or
	// url, or a malformed entry. Other servers are unaffected.
	Err error
}

// OAuth is the oauth object of an MCP server.
type OAuth struct {
	Enabled            bool              `json:"enabled"`
	TokenURL           string            `json:"token_url"`
	GrantType          string            `json:"grant_type"` // client_credentials (default), refresh_token or authorization_code
	ClientID           string            `json:"client_id"`
	ClientSecret       string            `json:"client_secret"`
	RefreshToken       string            `json:"refresh_token"`
	Scope              string            `json:"scope"`
	Audience           string            `json:"audience"`
	TokenField         string            `json:"token_field"`          // "access_token"
	TokenTypeField     string            `json:"token_type_field"`     // "token_type"
	ExpiresInField     string            `json:"expires_in_field"`     // "expires_in"
	DefaultTokenType   string            `json:"default_token_type"`   // "Bearer"
	RefreshSkewSeconds int               `json:"refresh_skew_seconds"` // 60
	ExtraTokenParams   map[string]string `json:"extra_token_params"`
}

// GrantAuthorizationCode is the oauth.grant_type of a server authorized
// by the MCP specification's authorization code flow (a login per user,
// see mcptools/mcpauth); the other OAuth keys but client_id,
// client_secret and scope are not used then.
const GrantAuthorizationCode = "authorization_code"

// Routing is the routing hint of a server (or of one tool).
type Routing struct {
	Mode     string   `json:"mode"`     // "off" or "prefer"
	Priority int      `json:"priority"` // clamped to 0..100
	Keywords []string `json:"keywords"`
}

// TaskToolset names the raw tools of one durable background-task toolset.
type TaskToolset struct {
	Name       string `json:"name"`
	SubmitTool string `json:"submit_tool"`
	StatusTool string `json:"status_tool"`
	CancelTool string `json:"cancel_tool"`
}

// The values of MCPServer.ProcessScope.
const (
	ProcessPerThread = "thread"
	ProcessShared    = "shared"
)

// InitTimeout is the session initialisation bound, 0 for none.
func (s *MCPServer) InitTimeout() time.Duration { return seconds(s.SessionInitTimeout) }

// CallTimeout is the configured per-call bound, 0 when none is set (the
// caller then applies its default).
func (s *MCPServer) CallTimeout() time.Duration { return seconds(s.ToolCallTimeout) }

func seconds(v *float64) time.Duration {
	if v == nil || *v <= 0 {
		return 0
	}
	return time.Duration(*v * float64(time.Second))
}

// ServerNames returns all server names, sorted.
func (e *Extensions) ServerNames() []string { return slices.Sorted(maps.Keys(e.MCPServers)) }

// EnabledServers returns the enabled servers sorted by name, including
// those with Err set (callers report and skip them).
func (e *Extensions) EnabledServers() []MCPServer {
	var out []MCPServer
	for _, name := range e.ServerNames() {
		if s := e.MCPServers[name]; s.Enabled {
			out = append(out, s)
		}
	}
	return out
}

// SkillEnabled reports whether the skill is enabled; skills without an
// entry are enabled.
func (e *Extensions) SkillEnabled(name string) bool {
	s, ok := e.Skills[name]
	return !ok || s.Enabled
}

// LoadExtensions reads extensions_config.json at path with $VAR values from
// the process environment. An empty path yields an empty configuration; a
// missing file at a given path is an error.
func LoadExtensions(path string) (*Extensions, error) {
	if path == "" {
		return emptyExtensions(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read extensions config: " + errMsg(err), Err: err}
	}
	e, err := ParseExtensions(path, data, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		e.Path = abs
	}
	return e, nil
}

func emptyExtensions() *Extensions {
	return &Extensions{MCPServers: map[string]MCPServer{}, Skills: map[string]SkillState{}}
}

// ParseExtensions decodes extensions_config.json bytes. file is used in
// messages only; lookupEnv resolves $VAR values (nil: none set). Invalid
// JSON and malformed top-level sections are errors with a line; problems
// of one server are reported in that server's Err.
func ParseExtensions(file string, data []byte, lookupEnv func(string) (string, bool)) (*Extensions, error) {
	e := emptyExtensions()
	if len(bytes.TrimSpace(data)) == 0 {
		return e, nil
	}
	top, tree, err := decodeMCPFile(file, data, reflect.TypeFor[extensionsFile]())
	if err != nil {
		return nil, err
	}
	x := &extParser{file: file, data: data, tree: tree, lookupEnv: lookupEnv, ext: e}
	if raw, ok := top["mcpServers"]; ok && !isJSONNull(raw) {
		var servers map[string]json.RawMessage
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, x.sectionError("mcpServers", err)
		}
		for name, raw := range servers {
			e.MCPServers[name] = x.server(name, raw)
		}
	}
	if raw, ok := top["skills"]; ok && !isJSONNull(raw) {
		var skills map[string]struct {
			Enabled *bool `json:"enabled"`
		}
		if err := json.Unmarshal(raw, &skills); err != nil {
			return nil, x.sectionError("skills", err)
		}
		for name, s := range skills {
			e.Skills[name] = SkillState{Enabled: s.Enabled == nil || *s.Enabled}
		}
	}
	if e.Middlewares, err = x.stringOrList(top, "middlewares"); err != nil {
		return nil, err
	}
	if e.MCPInterceptors, err = x.stringOrList(top, "mcpInterceptors"); err != nil {
		return nil, err
	}
	e.HookLines = map[string]int{"middlewares": x.keyLine("middlewares"), "mcpInterceptors": x.keyLine("mcpInterceptors")}
	slices.Sort(e.Warnings)
	return e, nil
}

// extParser carries the state of one ParseExtensions call.
type extParser struct {
	file      string
	data      []byte
	tree      *jsonNode // data with the line of every key
	lookupEnv func(string) (string, bool)
	ext       *Extensions
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonError turns a decoding error into an *Error with the line of its
// byte offset in data.
func jsonError(file string, data []byte, key string, err error) *Error {
	e := &Error{File: file, Key: key, Err: err}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		e.Line = lineAt(data, se.Offset)
		e.Msg = "invalid JSON: " + se.Error()
	case errors.As(err, &te):
		e.Line = lineAt(data, te.Offset)
		e.Msg = fmt.Sprintf("expected %s, got JSON %s", goTypeWord(te.Type.String()), te.Value)
		if te.Field != "" {
			e.Key = joinKey(key, te.Field)
		}
	default:
		e.Msg = "invalid JSON: " + err.Error()
	}
	return e
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// keyLine is the line of the top-level key name or, failing that, of the
// MCP server named name, or 0.
func (x *extParser) keyLine(name string) int {
	if m := x.tree.member(name); m != nil {
		return m.line
	}
	if s := x.tree.member("mcpServers"); s != nil {
		if m := s.val.member(name); m != nil {
			return m.line
		}
	}
	quoted, _ := json.Marshal(name)
	i := bytes.Index(x.data, append(quoted, ':'))
	if i < 0 {
		i = bytes.Index(x.data, quoted)
	}
	if i < 0 {
		return 0
	}
	return lineAt(x.data, int64(i))
}

func (x *extParser) sectionError(key string, err error) *Error {
	e := jsonError(x.file, x.data, key, err)
	e.Line = x.keyLine(key) // offsets inside a section are relative to it
	return e
}

func (x *extParser) stringOrList(top map[string]json.RawMessage, key string) ([]string, error) {
	raw, ok := top[key]
	if !ok || isJSONNull(raw) {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, &Error{File: x.file, Line: x.keyLine(key), Key: key, Msg: "must be a string or a list of strings", Err: err}
	}
	return list, nil
}

// rawServer mirrors an mcpServers entry as written.
type rawServer struct {
	Enabled            *bool                      `json:"enabled"`
	Type               string                     `json:"type"`
	Transport          string                     `json:"transport"`
	Command            string                     `json:"command"`
	Args               []string                   `json:"args"`
	Env                map[string]string          `json:"env"`
	Cwd                string                     `json:"cwd"`
	ProcessScope       string                     `json:"process_scope"`
	Defer              string                     `json:"defer"`
	URL                string                     `json:"url"`
	Headers            map[string]string          `json:"headers"`
	OAuth              json.RawMessage            `json:"oauth"`
	Description        string                     `json:"description"`
	ToolNamePrefix     *bool                      `json:"tool_name_prefix"`
	ToolCallTimeout    *float64                   `json:"tool_call_timeout"`
	SessionInitTimeout json.RawMessage            `json:"session_init_timeout"`
	DisabledTools      []string                   `json:"disabled_tools"`
	Routing            json.RawMessage            `json:"routing"`
	Tools              map[string]json.RawMessage `json:"tools"`
	TaskToolsets       []TaskToolset              `json:"task_toolsets"`
}

func defaultOAuth() OAuth {
	return OAuth{
		GrantType:          "client_credentials",
		TokenField:         "access_token",
		TokenTypeField:     "token_type",
		ExpiresInField:     "expires_in",
		DefaultTokenType:   "Bearer",
		RefreshSkewSeconds: 60,
	}
}

// server decodes, resolves and validates one server. It never fails the
// whole file: problems land in the server's Err, on the server as decoded
// up to the problem.
func (x *extParser) server(name string, raw json.RawMessage) MCPServer {
	path := joinKey("mcpServers", name)
	s := MCPServer{Name: name, Enabled: true, Type: "stdio", ToolNamePrefix: true}
	r, err := x.decodeServer(&s, raw, path)
	if err != nil {
		s.Err = err
		return s
	}
	copyServer(&s, r)
	if err := x.decodeServerOptions(&s, r, path); err != nil {
		s.Err = err
		return s
	}
	if err := x.resolveServer(&s, path); err != nil {
		s.Err = err
		if !errors.Is(err, ErrEnvNotSet) {
			return s
		}
	}
	if !s.Enabled {
		return s
	}
	// A server missing only $VAR values is still validated, so that a
	// user's credentials can complete it (WithCredentials); a structural
	// problem wins over the missing values.
	if err := x.validateServer(&s, path); err != nil {
		s.Err, s.Unset = err, nil
	}
	return s
}

// serverError is a problem at key of server name's entry.
func (x *extParser) serverError(name, key, format string, args ...any) error {
	return &Error{File: x.file, Line: x.keyLine(name), Key: key, Msg: fmt.Sprintf(format, args...)}
}

// decodeServer decodes the entry of server s at path. When the entry is
// not a valid object, the error says why and s keeps the entry's enabled
// flag if it can be read, so that a broken but disabled server stays
// quiet.
func (x *extParser) decodeServer(s *MCPServer, raw json.RawMessage, path string) (rawServer, error) {
	var r rawServer
	if isJSONNull(raw) || bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		return r, x.serverError(s.Name, path, "must be an object")
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		var en struct {
			Enabled *bool `json:"enabled"`
		}
		if json.Unmarshal(raw, &en) == nil && en.Enabled != nil {
			s.Enabled = *en.Enabled
		}
		e := jsonError(x.file, x.data, path, err)
		e.Line = x.keyLine(s.Name)
		return r, e
	}
	return r, nil
}

// copyServer sets the fields of s that r holds as they are (the type
// lower-cased, streamable HTTP spelled "http"), keeping the defaults of
// those r leaves out.
func copyServer(s *MCPServer, r rawServer) {
	if r.Enabled != nil {
		s.Enabled = *r.Enabled
	}
	s.Type = strings.ToLower(cmp.Or(r.Type, r.Transport, "stdio"))
	if s.Type == "streamable_http" || s.Type == "streamable-http" {
		s.Type = "http"
	}
	s.Command, s.Args, s.Env, s.Cwd = r.Command, r.Args, r.Env, r.Cwd
	s.ProcessScope = cmp.Or(r.ProcessScope, ProcessPerThread)
	s.Defer = r.Defer
	s.URL, s.Headers, s.Description = r.URL, r.Headers, r.Description
	s.DisabledTools, s.Tools, s.TaskToolsets = r.DisabledTools, r.Tools, r.TaskToolsets
	if r.ToolNamePrefix != nil {
		s.ToolNamePrefix = *r.ToolNamePrefix
	}
	s.ToolCallTimeout = r.ToolCallTimeout
}

// decodeServerOptions decodes the fields of r that need more than a copy:
// session_init_timeout (60 seconds when absent, none when null), oauth
// (over its defaults) and routing.
func (x *extParser) decodeServerOptions(s *MCPServer, r rawServer, path string) error {
	def := 60.0
	s.SessionInitTimeout = &def
	if len(r.SessionInitTimeout) > 0 {
		if isJSONNull(r.SessionInitTimeout) {
			s.SessionInitTimeout = nil
		} else {
			var v float64
			if err := json.Unmarshal(r.SessionInitTimeout, &v); err != nil {
				return x.serverError(s.Name, joinKey(path, "session_init_timeout"), "must be a number of seconds or null")
			}
			s.SessionInitTimeout = &v
		}
	}
	if len(r.OAuth) > 0 && !isJSONNull(r.OAuth) {
		o := defaultOAuth() // absent (or null) fields keep their defaults
		if err := json.Unmarshal(r.OAuth, &o); err != nil {
			return x.serverError(s.Name, joinKey(path, "oauth"), "%v", err)
		}
		s.OAuth = &o
	}
	if len(r.Routing) > 0 && !isJSONNull(r.Routing) {
		rt, err := parseRouting(r.Routing)
		if err != nil {
			return x.serverError(s.Name, joinKey(path, "routing"), "%v", err)
		}
		s.Routing = rt
	}
	return x.validateTaskToolsets(s, path)
}

// validateServer checks that an enabled server has what its transport
// needs, and a usable OAuth configuration if OAuth is enabled.
func (x *extParser) validateServer(s *MCPServer, path string) error {
	if s.ProcessScope != ProcessPerThread && s.ProcessScope != ProcessShared {
		return x.serverError(s.Name, joinKey(path, "process_scope"), "must be %q or %q, not %q", ProcessPerThread, ProcessShared, s.ProcessScope)
	}
	if s.Defer != "" {
		if err := checkDeferMode(s.Defer); err != nil {
			return x.serverError(s.Name, joinKey(path, "defer"), "%v", err)
		}
	}
	switch s.Type {
	case "stdio":
		if s.Command == "" {
			return x.serverError(s.Name, joinKey(path, "command"), "MCP server '%s' with stdio transport requires 'command' field", s.Name)
		}
	case "sse", "http":
		if s.URL == "" {
			return x.serverError(s.Name, joinKey(path, "url"), "MCP server '%s' with %s transport requires 'url' field", s.Name, s.Type)
		}
	default:
		return x.serverError(s.Name, joinKey(path, "type"), "MCP server '%s' has unsupported transport type: %s", s.Name, s.Type)
	}
	if o := s.OAuth; o != nil && o.Enabled {
		switch {
		case o.GrantType == GrantAuthorizationCode:
			// The endpoints are discovered from the server; client_id and
			// client_secret, when set, are a pre-registered client.
			if s.Type != "http" {
				return x.serverError(s.Name, joinKey(path, "oauth.grant_type"), "authorization_code needs the http transport, not %s", s.Type)
			}
		case o.GrantType != "client_credentials" && o.GrantType != "refresh_token":
			return x.serverError(s.Name, joinKey(path, "oauth.grant_type"), "unsupported grant type %q (client_credentials, refresh_token or authorization_code)", o.GrantType)
		case o.TokenURL == "":
			return x.serverError(s.Name, joinKey(path, "oauth.token_url"), "is required when oauth is enabled")
		}
	}
	return nil
}

// parseRouting decodes a routing object strictly and clamps priority.
func parseRouting(raw json.RawMessage) (*Routing, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rt Routing
	if err := dec.Decode(&rt); err != nil {
		return nil, err
	}
	switch rt.Mode {
	case "", "off", "prefer":
	default:
		return nil, fmt.Errorf("mode must be \"off\" or \"prefer\", got %q", rt.Mode)
	}
	rt.Priority = min(max(rt.Priority, 0), 100)
	return &rt, nil
}

// resolveServer replaces $VAR values. A missing variable in headers or env
// of an enabled server is an error for that server; elsewhere it becomes
// "" with a warning. Disabled servers are resolved silently, since nothing
// uses them.
func (x *extParser) resolveServer(s *MCPServer, path string) error {
	var firstErr error
	str := func(key string, v *string, strict bool) {
		name, ok := envRef(*v)
		if !ok {
			return
		}
		if val, found := lookup(x.lookupEnv, name); found {
			*v = val
			return
		}
		*v = ""
		switch {
		case !s.Enabled:
		case strict:
			s.Unset = append(s.Unset, key[len(path)+1:])
			if firstErr == nil {
				firstErr = &Error{File: x.file, Line: x.keyLine(s.Name), Key: key, Msg: missingEnvMsg(name), Err: ErrEnvNotSet}
			}
		default:
			x.ext.Warnings = append(x.ext.Warnings, fmt.Sprintf("%s: %s: %s; using an empty value", x.file, key, missingEnvMsg(name)))
		}
	}
	strMap := func(key string, m map[string]string, strict bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			str(joinKey(key, k), &v, strict)
			m[k] = v
		}
	}
	str(joinKey(path, "command"), &s.Command, false)
	for i := range s.Args {
		str(indexKey(joinKey(path, "args"), i), &s.Args[i], false)
	}
	strMap(joinKey(path, "env"), s.Env, true)
	strMap(joinKey(path, "headers"), s.Headers, true)
	str(joinKey(path, "cwd"), &s.Cwd, false)
	str(joinKey(path, "url"), &s.URL, false)
	str(joinKey(path, "description"), &s.Description, false)
	if o := s.OAuth; o != nil {
		at := joinKey(path, "oauth")
		for key, v := range map[string]*string{
			"token_url": &o.TokenURL, "client_id": &o.ClientID, "client_secret": &o.ClientSecret,
			"refresh_token": &o.RefreshToken, "scope": &o.Scope, "audience": &o.Audience,
		} {
			str(joinKey(at, key), v, false)
		}
		strMap(joinKey(at, "extra_token_params"), o.ExtraTokenParams, false)
	}
	return firstErr
}

// decodeMCPFile reads the top level of an MCP configuration file (the
// extensions file or a user's MCP file, of the shape fileType): its
// sections, and its JSON tree for line numbers. A key Antler does not
// read is an error for the whole file, where DeerFlow keeps it silently:
// a typo such as "mcpServer" or "tool_call_timout" would otherwise drop
// what it was meant to set.
func decodeMCPFile(file string, data []byte, fileType reflect.Type) (map[string]json.RawMessage, *jsonNode, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, jsonError(file, data, "", err)
	}
	tree, err := parseJSONTree(data)
	if err != nil {
		return nil, nil, &Error{File: file, Msg: "invalid JSON: " + err.Error(), Err: err}
	}
	if errs := checkJSONKeys(file, tree, fileType, ""); len(errs) == 1 {
		return nil, nil, errs[0]
	} else if len(errs) > 1 {
		return nil, nil, errors.Join(errs...)
	}
	return top, tree, nil
}
