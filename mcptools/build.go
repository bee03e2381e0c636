package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/tool"
)

// Meta keys set on every MCP tool.
const (
	MetaServer    = "mcp_server"    // the server's name in the extensions file
	MetaTool      = "mcp_tool"      // the tool's own name on the server
	MetaTransport = "mcp_transport" // stdio, sse or http
)

type candidate struct {
	s         *server
	raw       *mcp.Tool
	name      string
	sanitised bool
}

// buildLocked turns the listings of all ready servers into Antler tools:
// disabled_tools removed, names prefixed and sanitised, collisions of
// sanitised names resolved with a hash suffix.
func (m *Manager) buildLocked() []*tool.Tool {
	var cands []candidate
	taken := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		s := m.servers[name]
		if !s.listed || !s.cfg.Enabled || s.cfg.Err != nil {
			continue
		}
		for _, t := range s.tools {
			full, sanitised := ToolName(s.name, t.Name, s.cfg.ToolNamePrefix)
			if slices.Contains(s.cfg.DisabledTools, t.Name) || slices.Contains(s.cfg.DisabledTools, full) {
				continue
			}
			cands = append(cands, candidate{s: s, raw: t, name: full, sanitised: sanitised})
			if !sanitised {
				// Valid names keep priority; duplicates among them are
				// left to toolset.Assemble, which keeps the first.
				taken[full] = true
			}
		}
	}
	renamed := map[string]map[string]string{} // server -> raw -> name
	counts := map[string]int{}
	for i := range cands {
		c := &cands[i]
		if !c.sanitised {
			continue
		}
		if taken[c.name] {
			key := c.s.name + "\x00" + c.raw.Name
			base := c.name
			// A suffix of 64 hex digits would not fit in a name at all; a
			// name that collides even with 16 (only a server choosing its
			// names after these hashes can make it) stays a duplicate,
			// which toolset.Assemble drops with a warning.
			for _, n := range []int{6, 10, 16} {
				if c.name = withSuffix(base, key, n); !taken[c.name] {
					break
				}
			}
			m.log.Warn(fmt.Sprintf("MCP tool name collision: tool %q of server '%s' is exposed as %q", c.raw.Name, c.s.name, c.name))
		}
		taken[c.name] = true
		if renamed[c.s.name] == nil {
			renamed[c.s.name] = map[string]string{}
		}
		renamed[c.s.name][c.raw.Name] = c.name
	}
	out := make([]*tool.Tool, 0, len(cands))
	for _, c := range cands {
		if c.sanitised {
			m.log.Info(fmt.Sprintf("MCP tool %q of server '%s' is exposed as %q (names must match ^[A-Za-z0-9_-]{1,64}$)", c.raw.Name, c.s.name, c.name))
		}
		counts[c.s.name]++
		out = append(out, m.newTool(c))
	}
	for name, s := range m.servers {
		s.status.Tools, s.status.Renamed = counts[name], renamed[name]
	}
	if len(m.resourceServersLocked()) > 0 {
		out = append(out, m.resourceTools()...)
	}
	return out
}

func (m *Manager) newTool(c candidate) *tool.Tool {
	desc := c.raw.Description
	if desc == "" {
		desc = cmpOrTitle(c.raw)
	}
	server, raw := c.s.name, c.raw.Name
	return &tool.Tool{
		Name:        c.name,
		Description: desc,
		InputSchema: inputSchema(c.raw.InputSchema),
		Handler: func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			return m.call(ctx, call, server, raw, args)
		},
		Meta: toolMeta(server, raw, c.s.cfg.Type, c.raw),
	}
}

func cmpOrTitle(t *mcp.Tool) string {
	switch {
	case t.Title != "":
		return t.Title
	case t.Annotations != nil && t.Annotations.Title != "":
		return t.Annotations.Title
	}
	return t.Name
}

// inputSchema renders a server's input schema as a JSON object schema;
// anything unusable becomes the empty object schema.
func inputSchema(v any) json.RawMessage {
	empty := json.RawMessage(`{"type":"object","properties":{}}`)
	m, ok := v.(map[string]any)
	if !ok {
		if raw, isRaw := v.(json.RawMessage); isRaw && json.Unmarshal(raw, &m) != nil {
			return empty
		}
		if m == nil {
			return empty
		}
	}
	if _, has := m["type"]; !has {
		m = maps.Clone(m)
		m["type"] = "object"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return empty
	}
	return b
}
