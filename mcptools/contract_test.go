package mcptools_test

import (
	"path/filepath"
	"testing"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/tool/tooltest"
)

// MCP tools keep the tool contract (tool/tooltest) whatever the server
// does: real servers' schemas are passed through and must compile, and
// arguments that break them become Error: results — from Antler's own
// check or from the server — never Go errors.
func TestMCPToolsKeepTheToolContract(t *testing.T) {
	t.Run("in-memory server", func(t *testing.T) {
		srv := newTestServer()
		m := newManager(t, mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"mem": `+memServerJSON("")+`}`)),
			Dial: memServers{"mem": srv}.dial})
		tooltest.Run(t, mustTools(t, m), tooltest.Options{
			Call: func(*tool.Tool) *tool.Call { return &tool.Call{} },
			Samples: map[string]tooltest.Sample{
				"mem_echo":  {Args: []byte(`{"message":"hi"}`), Live: true},
				"mem_sleep": {Args: []byte(`{"millis":1}`), Live: true},
			},
		})
	})
	t.Run("server-everything", func(t *testing.T) {
		node, script := npmServer(t, "server-everything")
		ext := parseExt(t, `{"everything": `+stdioJSON(node, []string{script, "stdio"}, nil)+`}`)
		m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
		tooltest.Run(t, mustTools(t, m), tooltest.Options{
			Call: func(*tool.Tool) *tool.Call { return &tool.Call{} },
			Samples: map[string]tooltest.Sample{
				"everything_echo":    {Args: []byte(`{"message":"hi"}`), Live: true},
				"everything_get-sum": {Args: []byte(`{"a":1,"b":2}`), Live: true},
			},
		})
	})
	t.Run("server-filesystem", func(t *testing.T) {
		node, script := npmServer(t, "server-filesystem")
		dir := t.TempDir()
		ext := parseExt(t, `{"fs": `+stdioJSON(node, []string{script, dir}, nil)+`}`)
		m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
		tooltest.Run(t, mustTools(t, m), tooltest.Options{
			Call: func(*tool.Tool) *tool.Call { return &tool.Call{} },
			Samples: map[string]tooltest.Sample{
				"fs_list_directory":           {Args: []byte(`{"path":"` + dir + `"}`), Live: true},
				"fs_list_allowed_directories": {Args: []byte(`{}`), Live: true},
				"fs_create_directory":         {Args: []byte(`{"path":"` + filepath.Join(dir, "sub") + `"}`), Live: true},
			},
		})
	})
}
