package mcptools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/tool"
)

// This file is the pair of tools that reach the resources of the MCP
// servers (as Claude Code's ListMcpResources and ReadMcpResource):
// list_mcp_resources and read_mcp_resource. They are bound, with the
// server tools and so deferred like them when deferral is on, as soon
// as one listed server states the resources capability. They use the
// server's control session (a stdio server's shared process, not a
// thread's), or the calling user's own session of an authorized server.

// The names of the resource tools.
const (
	ListResourcesName = "list_mcp_resources"
	ReadResourceName  = "read_mcp_resource"
)

// MaxListedResources bounds the resources one list_mcp_resources call
// returns, over all servers; the result says when it was cut.
const MaxListedResources = 500

// maxResourceDescription bounds the characters of one listed
// resource's description.
const maxResourceDescription = 1000

// clipText cuts s to n characters, marking the cut.
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

//go:embed list_mcp_resources.md
var listResourcesDescription string

//go:embed read_mcp_resource.md
var readResourceDescription string

// resourceServersLocked are the names of the listed, enabled servers
// that state the resources capability, sorted.
func (m *Manager) resourceServersLocked() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		if s := m.servers[name]; s.listed && s.resources && s.cfg.Enabled && s.cfg.Err == nil {
			out = append(out, name)
		}
	}
	return out
}

// resourceTools are the two tools, labelled as MCP tools that only read.
func (m *Manager) resourceTools() []*tool.Tool {
	meta := func() map[string]string {
		return map[string]string{tool.MetaSource: "mcp", tool.MetaMCPAnnotationPrefix + "readOnlyHint": "true",
			tool.MetaMCPAnnotationPrefix + "idempotentHint": "true"}
	}
	return []*tool.Tool{
		{Name: ListResourcesName, Description: strings.TrimSpace(listResourcesDescription), Meta: meta(),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"Only this server's resources (default: every server's)."}}}`),
			Handler:     m.listResources},
		{Name: ReadResourceName, Description: strings.TrimSpace(readResourceDescription), Meta: meta(),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"The server's name."},"uri":{"type":"string","description":"The resource's URI, as listed."}},"required":["server","uri"]}`),
			Handler:     m.readResource},
	}
}

// listedResource is one element of list_mcp_resources' result.
type listedResource struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// decodeObject decodes a call's arguments into v, refusing anything but a
// JSON object (null, which json.Unmarshal accepts as a no-op, included).
func decodeObject(args json.RawMessage, v any) error {
	if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("the arguments must be a JSON object, got %.40s", t)
	}
	return json.Unmarshal(args, v)
}

func (m *Manager) listResources(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
	var in struct {
		Server string `json:"server"`
	}
	if err := decodeObject(args, &in); err != nil {
		return tool.Errorf("Error: invalid arguments for %s: %v", ListResourcesName, err), nil
	}
	m.mu.Lock()
	servers := m.resourceServersLocked()
	m.mu.Unlock()
	if in.Server != "" {
		if !slices.Contains(servers, in.Server) {
			return noResourceServer(in.Server, servers), nil
		}
		servers = []string{in.Server}
	}
	out := []listedResource{}
	var failed []string
	cut := false
	for _, name := range servers {
		res, err := m.onSession(ctx, call, name, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
			for r, err := range cs.Resources(ctx, nil) {
				if err != nil {
					return nil, err
				}
				if len(out) == MaxListedResources {
					cut = true
					break
				}
				out = append(out, listedResource{Server: name, URI: r.URI, Name: r.Name, Title: r.Title,
					Description: clipText(r.Description, maxResourceDescription), MIMEType: r.MIMEType})
			}
			return &mcp.CallToolResult{}, nil
		})
		if err != nil {
			return nil, err
		}
		if res.IsError {
			failed = append(failed, fmt.Sprintf("%s (%s)", name, res.TextContent()))
		}
		if cut {
			break
		}
	}
	b, _ := json.Marshal(out)
	text := string(b)
	if cut {
		text += fmt.Sprintf("\n(cut at %d resources: pass server to list one server's)", MaxListedResources)
	}
	if len(failed) > 0 {
		text += "\n(could not list: " + strings.Join(failed, "; ") + ")"
	}
	return tool.Text(text), nil
}

func (m *Manager) readResource(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
	var in struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if err := decodeObject(args, &in); err != nil {
		return tool.Errorf("Error: invalid arguments for %s: %v", ReadResourceName, err), nil
	}
	if in.Server == "" || in.URI == "" {
		return tool.Errorf("Error: %s needs both server and uri", ReadResourceName), nil
	}
	m.mu.Lock()
	servers := m.resourceServersLocked()
	m.mu.Unlock()
	if !slices.Contains(servers, in.Server) {
		return noResourceServer(in.Server, servers), nil
	}
	return m.onSession(ctx, call, in.Server, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: in.URI})
		if err != nil {
			return nil, err
		}
		out := &mcp.CallToolResult{}
		for _, c := range r.Contents {
			if c == nil {
				continue
			}
			if c.Blob == nil {
				// As a text content, so that a spooled text is taken back.
				out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
				continue
			}
			out.Content = append(out.Content, &mcp.EmbeddedResource{Resource: c})
		}
		if len(out.Content) == 0 {
			out.Content = []mcp.Content{&mcp.TextContent{Text: "(the resource is empty)"}}
		}
		return out, nil
	})
}

// noResourceServer is the error result naming the servers that have
// resources.
func noResourceServer(name string, servers []string) *tool.Result {
	return tool.Errorf("Error: MCP server '%s' is not connected or offers no resources; servers with resources: %s",
		name, strings.Join(servers, ", "))
}

// onSession runs op on the session a resource request of call uses, as
// a tool call is run: acquired within session_init_timeout, bounded by
// the call timeout, spooled texts taken back. A failure the model can
// act on is an error result; only the caller's cancellation is an error.
func (m *Manager) onSession(ctx context.Context, call *tool.Call, name string,
	op func(context.Context, *mcp.ClientSession) (*mcp.CallToolResult, error)) (*tool.Result, error) {
	s := m.lookup(name)
	if s == nil {
		return tool.Errorf("MCP server '%s' is not configured or not enabled", name), nil
	}
	scope := m.userScope(s, call)
	actx := ctx
	if t := s.cfg.InitTimeout(); t > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	e, err := m.pool.acquire(actx, poolKey{s, scope}, func() (*session, error) {
		return m.connect(withSessionUser(actx, scopeUser(scope)), s, nil)
	})
	if err != nil {
		return acquireFailed(ctx, actx, s, err)
	}
	defer m.pool.release(e)
	if scope != "" {
		defer m.pool.remove(e)
	}
	timeout, configured := m.callTimeout(s)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m.spool.begin()
	defer m.spool.end()
	r, err := op(cctx, e.sess.cs)
	if err == nil {
		if err := m.spool.takeResult(r); err != nil {
			return tool.Errorf("MCP server '%s' returned a large text that could not be read back from its spool file: %v", name, err), nil
		}
		return convertResult(r), nil
	}
	var werr *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case cctx.Err() != nil:
		return m.timeoutResult(s, "resources", timeout, configured), nil
	case connectionLost(err, e.sess):
		m.pool.remove(e)
		return tool.Errorf("MCP server '%s' closed the connection; it will be restarted on the next call", name), nil
	case errors.As(err, &werr):
		return tool.Errorf("Error: MCP server '%s': %s", name, werr.Message), nil
	}
	return tool.Errorf("Error: MCP server '%s': %v", name, err), nil
}
