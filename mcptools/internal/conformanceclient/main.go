// Command conformanceclient is the MCP client that scripts/conformance runs
// under the MCP conformance suite (@modelcontextprotocol/conformance). It
// drives Antler's own client code, an mcptools.Manager, against the suite's
// test server: the suite appends the server URL as the last argument and
// names the scenario in MCP_CONFORMANCE_SCENARIO.
//
// It connects, lists the tools, and calls each one (add_numbers with
// {"a":2,"b":3}, every other tool with {}), answering elicitation requests
// by accepting the schema's defaults. A server that asks for authorization
// gets the whole authorization code flow (mcpauth.Interactive), which the
// suite's authorization server approves without a human; the client
// credentials of the pre-registration scenario come from
// MCP_CONFORMANCE_CONTEXT as the oauth block of the server's entry.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/mcptools/mcpauth"
	"github.com/antlerhq/antler/tool"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformanceclient [flags] SERVER_URL")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	if err := run(url); err != nil {
		fmt.Fprintln(os.Stderr, "conformanceclient:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := config.MCPServer{Name: "conformance", Enabled: true, Type: "http", URL: url, ToolNamePrefix: false}
	var scenario struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &scenario); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	if scenario.ClientID != "" {
		srv.OAuth = &config.OAuth{Enabled: true, GrantType: config.GrantAuthorizationCode,
			ClientID: scenario.ClientID, ClientSecret: scenario.ClientSecret}
	}
	tokens, err := os.MkdirTemp("", "antler-conformance-tokens-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tokens)
	ext := &config.Extensions{MCPServers: map[string]config.MCPServer{"conformance": srv}}
	m := mcptools.New(mcptools.Options{
		Extensions:         mcptools.Static(ext),
		Logger:             log,
		ClientName:         "antler-conformance-client",
		ClientVersion:      "1.0.0",
		ElicitationHandler: acceptDefaults,
		Authorizer: &mcpauth.Interactive{
			Client: mcpauth.Client{Name: "antler-conformance-client",
				MetadataURL: "https://conformance-test.local/client-metadata.json"},
			Store:       mcpauth.FileStore{Dir: tokens},
			Fetch:       mcpauth.AutoApprove(nil),
			RedirectURL: "http://localhost:3000/callback",
		},
		AuthUser: "conformance",
	})
	defer m.Close()
	tools, err := m.Tools(ctx)
	if err != nil {
		return err
	}
	for _, st := range m.Status() {
		if st.Err != nil {
			return fmt.Errorf("server %s: %w", st.Name, st.Err)
		}
	}
	for _, t := range tools {
		args := json.RawMessage(`{}`)
		if t.Meta[mcptools.MetaTool] == "add_numbers" {
			args = json.RawMessage(`{"a":2,"b":3}`)
		}
		res, err := tool.Invoke(ctx, t.Handler, &tool.Call{ID: "conformance", Name: t.Name}, args)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		fmt.Printf("%s -> %s (error %v)\n", t.Name, res.TextContent(), res.IsError)
	}
	return nil
}

// acceptDefaults accepts a form elicitation with the default of every
// property of the requested schema that has one.
func acceptDefaults(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	content := map[string]any{}
	var schema struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	if raw, err := json.Marshal(req.Params.RequestedSchema); err == nil {
		_ = json.Unmarshal(raw, &schema)
	}
	for name, p := range schema.Properties {
		if p.Default != nil {
			content[name] = p.Default
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}
