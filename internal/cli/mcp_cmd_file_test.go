package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A pretty file with a key Antler does not know (x-team), odd spacing and
// a server whose keys are in an unusual order.
const extBefore = `{
  "x-team": {"owner": "ops",   "note": "kept as written"},
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "enabled": true
    },
    "github": {
      "type": "stdio",
      "command": "npx"
    }
  },
  "skills": {}
}
`

func TestExtFile_edits(t *testing.T) {
	stdio := mcpEntry{Enabled: true, Type: "stdio", Command: "node", Args: []string{"a.js", "<dir>"}, Env: map[string]string{"K": "$K"}}
	tests := []struct {
		name  string
		input string // "" for no file
		edit  func(f *extFile) error
		want  string
	}{
		{"add keeps every other byte", extBefore, func(f *extFile) error { return f.addServer("fs", stdio) }, `{
  "x-team": {"owner": "ops",   "note": "kept as written"},
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "enabled": true
    },
    "github": {
      "type": "stdio",
      "command": "npx"
    },
    "fs": {
      "enabled": true,
      "type": "stdio",
      "command": "node",
      "args": [
        "a.js",
        "<dir>"
      ],
      "env": {
        "K": "$K"
      }
    }
  },
  "skills": {}
}
`},
		{"add to a missing file", "", func(f *extFile) error {
			return f.addServer("fs", mcpEntry{Enabled: true, Type: "http", URL: "http://127.0.0.1:1/mcp"})
		}, `{
  "mcpServers": {
    "fs": {
      "enabled": true,
      "type": "http",
      "url": "http://127.0.0.1:1/mcp"
    }
  }
}
`},
		{"add without mcpServers, tab indented", "{\n\t\"skills\": {}\n}\n", func(f *extFile) error { return f.addServer("m", mcpEntry{Enabled: true, Type: "sse", URL: "u"}) },
			"{\n\t\"skills\": {},\n\t\"mcpServers\": {\n\t\t\"m\": {\n\t\t\t\"enabled\": true,\n\t\t\t\"type\": \"sse\",\n\t\t\t\"url\": \"u\"\n\t\t}\n\t}\n}\n"},
		{"add to a one-line file", `{"mcpServers": {"a": {"command": "x"}}, "zzz": 1}`, func(f *extFile) error { return f.addServer("b", mcpEntry{Enabled: true, Type: "stdio", Command: "y"}) },
			`{"mcpServers": {"a": {"command": "x"},"b": {"enabled":true,"type":"stdio","command":"y"}}, "zzz": 1}`},
		{"add to null mcpServers", "{\n  \"mcpServers\": null\n}\n", func(f *extFile) error { return f.addServer("b", mcpEntry{Enabled: true, Type: "stdio", Command: "y"}) },
			"{\n  \"mcpServers\": {\n    \"b\": {\n      \"enabled\": true,\n      \"type\": \"stdio\",\n      \"command\": \"y\"\n    }\n  }\n}\n"},
		{"remove the last server", extBefore, func(f *extFile) error { return f.removeServer("github") }, `{
  "x-team": {"owner": "ops",   "note": "kept as written"},
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "enabled": true
    }
  },
  "skills": {}
}
`},
		{"remove the first server", extBefore, func(f *extFile) error { return f.removeServer("memory") }, `{
  "x-team": {"owner": "ops",   "note": "kept as written"},
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx"
    }
  },
  "skills": {}
}
`},
		{"remove the only server", "{\n  \"mcpServers\": {\n    \"a\": {}\n  }\n}\n", func(f *extFile) error { return f.removeServer("a") }, "{\n  \"mcpServers\": {}\n}\n"},
		{"disable replaces enabled in place", extBefore, func(f *extFile) error { _, err := f.setEnabled("memory", false); return err }, `{
  "x-team": {"owner": "ops",   "note": "kept as written"},
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "enabled": false
    },
    "github": {
      "type": "stdio",
      "command": "npx"
    }
  },
  "skills": {}
}
`},
		{"disable adds enabled first", extBefore, func(f *extFile) error { _, err := f.setEnabled("github", false); return err }, `{
  "x-team": {"owner": "ops",   "note": "kept as written"},
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "enabled": true
    },
    "github": {
      "enabled": false,
      "type": "stdio",
      "command": "npx"
    }
  },
  "skills": {}
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "extensions_config.json")
			if tt.input != "" {
				if err := os.WriteFile(path, []byte(tt.input), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			f, err := readExtFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.edit(f); err != nil {
				t.Fatal(err)
			}
			if err := f.save(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON:\n%s", got)
			}
			if tt.input != "" {
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
					t.Errorf("mode %v, want the file's 0600 kept", fi.Mode().Perm())
				}
			}
		})
	}
}

func TestExtFile_errors(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "extensions_config.json", extBefore)
	f, err := readExtFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"add an existing name": f.addServer("github", mcpEntry{Type: "stdio", Command: "x"}),
		"remove a missing one": f.removeServer("githb"),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
	if err := f.removeServer("githb"); err == nil || !strings.Contains(err.Error(), `did you mean "github"`) {
		t.Errorf("remove of a typo: %v, want the nearest name", err)
	}
	if err := f.addServer("github", mcpEntry{}); err == nil || !strings.Contains(err.Error(), path+":9:") {
		t.Errorf("add of an existing name: %v, want its file:line", err)
	}
	bad := writeFile(t, dir, "bad.json", "{\n  \"mcpServers\": {,}\n}\n")
	if _, err := readExtFile(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("invalid JSON: %v, want an error naming the file", err)
	}
}
