package mcpauth_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func fmtV(v any) string { return fmt.Sprintf("%v %+v %#v", v, v, v) }

// httptestMCP serves an MCP server that asks for no authorization.
func httptestMCP(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "open", Version: "1"}, nil)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}
