package config_test

import (
	"strings"
	"testing"

	"github.com/antlerhq/antler/config"
)

// process_scope is "thread" by default, "shared" when set; any other
// value makes the server unusable with an error naming the key.
func TestProcessScope(t *testing.T) {
	tests := []struct {
		name, entry, want, err string
	}{
		{name: "default", entry: `{"command": "x"}`, want: config.ProcessPerThread},
		{name: "shared", entry: `{"command": "x", "process_scope": "shared"}`, want: config.ProcessShared},
		{name: "bad", entry: `{"command": "x", "process_scope": "per-call"}`, err: `mcpServers.s.process_scope: must be "thread" or "shared", not "per-call"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext, err := config.ParseExtensions("e.json", []byte(`{"mcpServers": {"s": `+tt.entry+`}}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := ext.MCPServers["s"]
			switch {
			case tt.err != "" && (s.Err == nil || !strings.Contains(s.Err.Error(), tt.err)):
				t.Errorf("err = %v, want it to contain %q", s.Err, tt.err)
			case tt.err == "" && (s.Err != nil || s.ProcessScope != tt.want):
				t.Errorf("process_scope = %q, err %v; want %q", s.ProcessScope, s.Err, tt.want)
			}
		})
	}
}
