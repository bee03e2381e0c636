package review

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileContract compiles one of testdata/contracts, Antler's own
// statement of the shapes of DeerFlow's skill review contracts.
func compileContract(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "contracts", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validate marshals v as the tool does and checks it against s.
func validate(t *testing.T, s *jsonschema.Schema, what string, v any) {
	t.Helper()
	data, err := MarshalStable(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("%s does not match its contract: %v", what, err)
	}
}

// TestContracts checks the snapshot, facts and report of every golden
// fixture against the contracts' shapes.
func TestContracts(t *testing.T) {
	snapSchema := compileContract(t, "snapshot.schema.json")
	factsSchema := compileContract(t, "facts.schema.json")
	reportSchema := compileContract(t, "report.schema.json")
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			snap, facts, report := reviewFixture(t, c)
			validate(t, snapSchema, "snapshot", snap)
			validate(t, factsSchema, "facts", facts)
			validate(t, reportSchema, "report", report)
		})
	}
}

// TestMarshalStableIsSorted checks that facts marshal with their keys in
// sorted order at every level (the field order of the types), as
// DeerFlow's stable_json_dumps writes them.
func TestMarshalStableIsSorted(t *testing.T) {
	_, facts, report := reviewFixture(t, goldenCase{name: "prompt-injection"})
	for name, v := range map[string]any{"facts": facts, "report": report} {
		data, err := MarshalStable(v)
		if err != nil {
			t.Fatal(err)
		}
		var generic any
		if err := jsonUnmarshalNumber(data, &generic); err != nil {
			t.Fatal(err)
		}
		resorted, err := MarshalStable(generic)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, resorted) {
			t.Errorf("%s: keys not in sorted order:\n got %s\nwant %s", name, data, resorted)
		}
		if bytes.Contains(data, []byte(`\u003c`)) {
			t.Errorf("%s: '<' escaped as \\u003c", name)
		}
	}
}
