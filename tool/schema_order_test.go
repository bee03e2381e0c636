package tool_test

import (
	"bytes"
	"testing"

	"github.com/antlerhq/antler/tool"
)

// The models read "always give this argument first" hints against the
// order of the properties, so SchemaFor must keep the struct's field
// order (DeerFlow's argument order) rather than sort the names.
func TestSchemaForKeepsFieldOrder(t *testing.T) {
	type in struct {
		Zeta  string   `json:"zeta"`
		Alpha []string `json:"alpha,omitempty"`
		Mid   *int     `json:"mid,omitempty"`
	}
	raw, err := tool.SchemaFor[in]()
	if err != nil {
		t.Fatal(err)
	}
	z, a, m := bytes.Index(raw, []byte(`"zeta"`)), bytes.Index(raw, []byte(`"alpha"`)), bytes.Index(raw, []byte(`"mid"`))
	if z < 0 || a < 0 || m < 0 || !(z < a && a < m) {
		t.Fatalf("properties not in field order (zeta, alpha, mid): %s", raw)
	}
	// Nullable types are still simplified to the plain type.
	if bytes.Contains(raw, []byte(`"null"`)) {
		t.Errorf("schema still has a null type union: %s", raw)
	}
}
