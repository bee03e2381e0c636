package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/antlerhq/antler/tool"
)

type checkedArgs struct {
	Path    string `json:"path"`
	Limit   int    `json:"limit,omitempty"`
	Options []struct {
		Label string `json:"label"`
	} `json:"options,omitempty"`
}

// TestSchemaAgrees checks a hand-written schema against the struct it
// decodes into: it may add to the struct (enums, bounds, descriptions),
// never disagree with it.
func TestSchemaAgrees(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         string // "" for agreement, else a part of the error
	}{
		{"agrees and says more", `{"type":"object","properties":{"path":{"type":"string","description":"d"},
			"limit":{"type":"integer","minimum":1},"options":{"type":"array","items":{"type":"object",
			"properties":{"label":{"type":"string","enum":["a"]}},"required":["label"]}}},"required":["path"]}`, ""},
		{"property the struct lacks", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},
			"options":{"type":"array"},"pth":{"type":"string"}},"required":["path"]}`, "/pth: no such field in the struct"},
		{"field the schema lacks", `{"type":"object","properties":{"path":{"type":"string"},"options":{"type":"array"}},
			"required":["path"]}`, "/limit: field missing from the schema"},
		{"type differs", `{"type":"object","properties":{"path":{"type":"integer"},"limit":{"type":"integer"},
			"options":{"type":"array"}},"required":["path"]}`, "/path: type integer, struct has string"},
		{"required differs", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},
			"options":{"type":"array"}},"required":["path","limit"]}`, "required [limit path], struct requires [path]"},
		{"nested property differs", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},
			"options":{"type":"array","items":{"type":"object","properties":{"lable":{"type":"string"}}}}},"required":["path"]}`,
			"/options/items/lable: no such field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tool.SchemaAgrees[checkedArgs](json.RawMessage(tc.schema))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected disagreement: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	t.Run("NewWithSchema refuses a schema that disagrees", func(t *testing.T) {
		_, err := tool.NewWithSchema("x", "d", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			func(ctx context.Context, c *tool.Call, in checkedArgs) (string, error) { return "", nil })
		if err == nil || !strings.Contains(err.Error(), "tool x:") {
			t.Errorf("err = %v, want a disagreement naming the tool", err)
		}
	})
}
