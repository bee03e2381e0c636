package tmpl

import (
	"strings"
	"testing"
	"text/template"
)

type inner struct{ Name, Description string }

type data struct {
	Name    string
	On      bool
	Off     bool
	N       int
	Zero    int
	Items   []inner
	None    []inner
	Ptr     *inner
	Map     map[string]any
	private string
}

// TestExecute_matchesTextTemplate renders each case with this package and
// with text/template and wants the same bytes.
func TestExecute_matchesTextTemplate(t *testing.T) {
	d := data{Name: "lead", On: true, N: 3, Items: []inner{{"a", "first"}, {"b", "second"}},
		Ptr: &inner{Name: "p"}, Map: map[string]any{"k": "v", "empty": "", "n": 0}}
	cases := []struct{ name, text string }{
		{"text", "plain text\n"},
		{"field", "name={{.Name}} n={{.N}}"},
		{"chain", "{{.Ptr.Name}} {{.Map.k}}"},
		{"if", "{{if .On}}on{{end}}{{if .Off}}off{{end}}"},
		{"else", "{{if .Off}}off{{else}}not off{{end}}"},
		{"else if", "{{if .Off}}a{{else if .Zero}}b{{else if .N}}c{{else}}d{{end}}"},
		{"map truth", "{{if .Map.empty}}x{{else}}empty{{end}}{{if .Map.n}}y{{else}}zero{{end}}"},
		{"range", "{{range .Items}}- {{.Name}}: {{.Description}}\n{{end}}"},
		{"range else", "{{range .None}}x{{else}}none{{end}}"},
		{"dot", "{{range .Items}}{{if .}}[{{.Name}}]{{end}}{{end}}"},
		{"trim", "a  {{- .Name -}}  b\n{{- if .On}}\n  c\n{{- end}}\n"},
		{"comment", "x{{/* note */}}y"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want strings.Builder
			if err := template.Must(template.New(c.name).Parse(c.text)).Execute(&want, d); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			if err := MustParse(c.name, c.text).Execute(&got, d); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("got %q, text/template %q", got.String(), want.String())
			}
		})
	}
}

// TestParse_refusesOutsideTheSubset names the construct and its line.
func TestParse_refusesOutsideTheSubset(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"function", "{{len .Items}}", `function "len" not defined`},
		{"pipe", "x\n{{.Name | printf \"%s\"}}", "t:2:"},
		{"variable", "{{$x := .Name}}{{$x}}", "not supported"},
		{"range variables", "{{range $i, $e := .Items}}{{end}}", "not supported"},
		{"with", "{{with .Name}}{{.}}{{end}}", "not supported"},
		{"define", `{{define "x"}}y{{end}}`, "not supported"},
		{"template", `{{template "x"}}`, "not supported"},
		{"syntax", "{{if .On}}", "unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t", c.text)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse(%q) = %v, want an error containing %q", c.text, err, c.want)
			}
		})
	}
}

// TestExecute_errors: what text/template prints as "<no value>" or
// fails on late is an error naming the template and place.
func TestExecute_errors(t *testing.T) {
	d := data{Map: map[string]any{}, private: "x"}
	cases := []struct{ name, text, want string }{
		{"unknown field", "{{.Nope}}", "t:1:2: tmpl.data has no exported field Nope"},
		{"unexported field", "{{.private}}", "no exported field private"},
		{"missing key", "{{if .Map.k}}{{end}}", `map has no key "k"`},
		{"field of a string", "{{.Name.X}}", "only a struct or a map"},
		{"range over a map", "{{range .Map}}{{end}}", "range over map[string]interface {}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			err := MustParse("t", c.text).Execute(&b, d)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Execute(%q) = %v, want an error containing %q", c.text, err, c.want)
			}
		})
	}
}
