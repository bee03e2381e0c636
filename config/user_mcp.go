package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// UserMCPFileName is the name of a user's MCP file in the user's folder
// ({home}/users/{user}/mcp_config.json): the user's own MCP servers and
// the user's values for the secrets of the shared servers of
// extensions_config.json. See docs/design.md, "Per-user MCP servers".
const UserMCPFileName = "mcp_config.json"

// UserMCP is a loaded user MCP file.
type UserMCP struct {
	Path string // as given to ParseUserMCP
	// MCPServers are the user's own servers, parsed and checked exactly
	// as the servers of extensions_config.json (a problem of one lands in
	// its Err), except that no $VAR is resolved: the environment is the
	// operator's, not the user's.
	MCPServers map[string]MCPServer
	// Credentials are the user's values for the headers and env of shared
	// servers, by server name.
	Credentials map[string]Credential
}

// Credential is a user's values for some headers and env entries of one
// shared server. Only keys the shared server declares may be set, so that
// a user changes the values of its secrets but never what it runs (no
// LD_PRELOAD, no extra header the operator did not name).
type Credential struct {
	Headers map[string]string `json:"headers"`
	Env     map[string]string `json:"env"`
}

// userMCPFile is the top level of a user MCP file, for the key check.
type userMCPFile struct {
	Schema      string                   `json:"$schema"`
	MCPServers  map[string]mcpServerFile `json:"mcpServers"`
	Credentials map[string]Credential    `json:"credentials"`
}

// ParseUserMCP decodes a user MCP file. file is used in messages. Like
// ParseExtensions, an unknown key or a malformed section fails the whole
// file with file:line; a problem of one server lands in its Err. A $VAR
// value is never resolved: in the headers or env of an enabled server it
// is that server's error.
func ParseUserMCP(file string, data []byte) (*UserMCP, error) {
	u := &UserMCP{Path: file, MCPServers: map[string]MCPServer{}, Credentials: map[string]Credential{}}
	if len(strings.TrimSpace(string(data))) == 0 {
		return u, nil
	}
	top, tree, err := decodeMCPFile(file, data, reflect.TypeFor[userMCPFile]())
	if err != nil {
		return nil, err
	}
	x := &extParser{file: file, data: data, tree: tree, ext: emptyExtensions()}
	if raw, ok := top["mcpServers"]; ok && !isJSONNull(raw) {
		var servers map[string]json.RawMessage
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, x.sectionError("mcpServers", err)
		}
		for name, raw := range servers {
			u.MCPServers[name] = x.server(name, raw)
		}
		x.refuseUserTaskToolsets(u.MCPServers) // config/mcp_tasks.go
	}
	if raw, ok := top["credentials"]; ok && !isJSONNull(raw) {
		if err := json.Unmarshal(raw, &u.Credentials); err != nil {
			return nil, x.sectionError("credentials", err)
		}
		if u.Credentials == nil {
			u.Credentials = map[string]Credential{}
		}
	}
	for name := range u.Credentials {
		if _, own := u.MCPServers[name]; own {
			return nil, &Error{File: file, Line: credentialLine(tree, name), Key: joinKey("credentials", name),
				Msg: fmt.Sprintf("'%s' is one of the user's own servers; put its headers and env in its mcpServers entry", name)}
		}
	}
	return u, nil
}

// credentialLine is the line of credentials.<name>, or 0.
func credentialLine(tree *jsonNode, name string) int {
	if c := tree.member("credentials"); c != nil {
		if m := c.val.member(name); m != nil {
			return m.line
		}
	}
	return 0
}

// Empty reports whether u holds neither servers nor credentials.
func (u *UserMCP) Empty() bool {
	return u == nil || (len(u.MCPServers) == 0 && len(u.Credentials) == 0)
}

// WithCredentials returns s with c's values in place of its headers and
// env values. A key s does not declare is an error (the user may set the
// values of the shared server's secrets, not add to what it sends or
// runs). When s was unusable only because of unset $VAR values and c
// supplies every one of them, the result is usable.
func (s MCPServer) WithCredentials(c Credential) (MCPServer, error) {
	for _, sec := range []struct {
		what string
		vals map[string]string
		decl map[string]string
	}{{"headers", c.Headers, s.Headers}, {"env", c.Env, s.Env}} {
		for _, k := range slices.Sorted(maps.Keys(sec.vals)) {
			if _, ok := sec.decl[k]; !ok {
				return s, fmt.Errorf("%s.%s: the shared server '%s' declares no such key (declared: %s)",
					sec.what, k, s.Name, declared(sec.decl))
			}
		}
	}
	out := s
	out.Headers = maps.Clone(s.Headers)
	out.Env = maps.Clone(s.Env)
	maps.Copy(out.Headers, c.Headers)
	maps.Copy(out.Env, c.Env)
	var still []string
	for _, key := range s.Unset {
		what, k, _ := strings.Cut(key, ".")
		_, h := c.Headers[k]
		_, e := c.Env[k]
		if !(what == "headers" && h) && !(what == "env" && e) {
			still = append(still, key)
		}
	}
	out.Unset = still
	if len(still) == 0 && s.Err != nil && errors.Is(s.Err, ErrEnvNotSet) {
		out.Err = nil
	}
	return out, nil
}

func declared(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// Overlay returns the servers a user's file changes, over the shared
// servers of ext: the user's own servers and the shared servers the user
// has credentials for (with them applied). A credential for a server ext
// lacks, or with a key it does not declare, is a warning and changes
// nothing; an own server named like a shared one is skipped with a
// warning (the shared one keeps the name).
func (u *UserMCP) Overlay(ext *Extensions) (servers map[string]MCPServer, warnings []string) {
	servers = map[string]MCPServer{}
	if u == nil {
		return servers, nil
	}
	var shared map[string]MCPServer
	if ext != nil {
		shared = ext.MCPServers
	}
	for _, name := range slices.Sorted(maps.Keys(u.MCPServers)) {
		if _, taken := shared[name]; taken {
			warnings = append(warnings, fmt.Sprintf("%s: mcpServers.%s: a shared server has this name; the user's server is not used", u.Path, name))
			continue
		}
		servers[name] = u.MCPServers[name]
	}
	for _, name := range slices.Sorted(maps.Keys(u.Credentials)) {
		s, ok := shared[name]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("%s: credentials.%s: no shared server has this name", u.Path, name))
			continue
		}
		withC, err := s.WithCredentials(u.Credentials[name])
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: credentials.%s: %v", u.Path, name, err))
			continue
		}
		servers[name] = withC
	}
	return servers, warnings
}

// View returns the servers a user's runs see: the shared ones of ext
// with the user's overlay on top (Overlay), as a new Extensions whose
// Warnings add the overlay's. ext itself is not changed.
func (u *UserMCP) View(ext *Extensions) *Extensions {
	out := emptyExtensions()
	if ext != nil {
		cp := *ext
		out = &cp
		out.MCPServers = maps.Clone(ext.MCPServers)
		out.Warnings = slices.Clone(ext.Warnings)
	}
	over, warnings := u.Overlay(ext)
	maps.Copy(out.MCPServers, over)
	out.Warnings = append(out.Warnings, warnings...)
	return out
}
