package skills

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func skillMD(front string) string { return "---\n" + front + "\n---\n# Body\n" }

// Validation matrix for names, descriptions,
// unknown keys and allowed-tools types; the runtime parser returns nothing
// for malformed skills and explains unquoted colons.
func TestValidationMatrix(t *testing.T) {
	long := strings.Repeat("a", 65)
	tests := []struct {
		name    string
		content string
		want    string // "" = valid
	}{
		{"valid", skillMD("name: my-skill\ndescription: Does things"), ""},
		{"valid all keys", skillMD("name: a1\ndescription: d\nlicense: MIT\nallowed-tools: [read_file, bash]\nrequired-secrets: [ERP_TOKEN, {name: OPT_KEY, optional: true}]\nsecrets-autonomous: false\nmetadata: {x: 1}\ncompatibility: any\nversion: 1.0\nauthor: me"), ""},
		{"allowed-tools empty list", skillMD("name: a\ndescription: d\nallowed-tools: []"), ""},
		{"no frontmatter", "# just markdown\n", "No YAML frontmatter found"},
		{"leading blank line", "\n---\nname: a\n---\n", "No YAML frontmatter found"},
		{"unclosed", "---\nname: a\ndescription: d\n", "Invalid frontmatter format"},
		{"bad yaml", skillMD("name: [a"), "Invalid YAML in frontmatter: line 1: did not find expected ',' or ']'"},
		{"not a mapping", skillMD("- a\n- b"), "Frontmatter must be a YAML dictionary"},
		{"empty frontmatter", "---\n\n---\n", "Frontmatter must be a YAML dictionary"},
		{"unknown keys sorted", skillMD("name: a\ndescription: d\nzeta: 1\nalpha: 2"), "Unexpected key(s) in SKILL.md frontmatter: alpha, zeta"},
		{"missing name", skillMD("description: d"), "Missing 'name' in frontmatter"},
		{"missing description", skillMD("name: a"), "Missing 'description' in frontmatter"},
		{"name not string", skillMD("name: 12\ndescription: d"), "Name must be a string, got int"},
		{"name list", skillMD("name: [a]\ndescription: d"), "Name must be a string, got list"},
		{"name empty", skillMD("name: '  '\ndescription: d"), "Name cannot be empty"},
		{"name uppercase", skillMD("name: My-Skill\ndescription: d"), "Name 'My-Skill' should be hyphen-case (lowercase letters, digits, and hyphens only)"},
		{"name underscore", skillMD("name: my_skill\ndescription: d"), "Name 'my_skill' should be hyphen-case (lowercase letters, digits, and hyphens only)"},
		{"name leading hyphen", skillMD("name: -a\ndescription: d"), "Name '-a' cannot start/end with hyphen or contain consecutive hyphens"},
		{"name trailing hyphen", skillMD("name: a-\ndescription: d"), "Name 'a-' cannot start/end with hyphen or contain consecutive hyphens"},
		{"name double hyphen", skillMD("name: a--b\ndescription: d"), "Name 'a--b' cannot start/end with hyphen or contain consecutive hyphens"},
		{"name too long", skillMD("name: " + long + "\ndescription: d"), "Name is too long (65 characters). Maximum is 64 characters."},
		{"name 64 ok", skillMD("name: " + long[:64] + "\ndescription: d"), ""},
		{"description not string", skillMD("name: a\ndescription: 3.5"), "Description must be a string, got float"},
		{"description empty", skillMD("name: a\ndescription: ''"), "Description cannot be empty"},
		{"description angle", skillMD("name: a\ndescription: use <b>"), "Description cannot contain angle brackets (< or >)"},
		{"description too long", skillMD("name: a\ndescription: " + strings.Repeat("é", 1025)), "Description is too long (1025 characters). Maximum is 1024 characters."},
		{"allowed-tools string", skillMD("name: a\ndescription: d\nallowed-tools: bash"), "allowed-tools in SKILL.md must be a list of strings"},
		{"allowed-tools numbers", skillMD("name: a\ndescription: d\nallowed-tools: [1, 2]"), "allowed-tools in SKILL.md must be a list of strings"},
		{"allowed-tools blank", skillMD("name: a\ndescription: d\nallowed-tools: ['  ']"), "allowed-tools in SKILL.md must be a list of strings"},
		{"secrets-autonomous string", skillMD("name: a\ndescription: d\nsecrets-autonomous: 'yes'"), "secrets-autonomous in SKILL.md must be a boolean"},
		{"required-secrets bad", skillMD("name: a\ndescription: d\nrequired-secrets: TOKEN"), "required-secrets in SKILL.md must be a list of secret names or {name, optional} mappings"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateContent(tc.content)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("ValidateContent error = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParserSkipsMalformed(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		wantLine int
		wantMsg  string
		wantHint string
	}{
		{"no frontmatter", "hello", 1, "No YAML frontmatter found", ""},
		{"missing name", skillMD("description: d"), 0, "missing or empty 'name'", ""},
		{"blank description", skillMD("name: a\ndescription: '   '"), 3, "missing or empty 'description'", ""},
		{"allowed-tools not list", skillMD("name: a\ndescription: d\nallowed-tools: bash"), 4, "allowed-tools must be a list of strings", ""},
		{"required-secrets not list", skillMD("name: a\ndescription: d\nrequired-secrets: 3"), 4, "required-secrets must be a list", ""},
		{"unquoted colon", skillMD("name: a\ndescription: Use this: when needed"), 3,
			"invalid YAML front-matter: line 2: mapping values are not allowed in this context; line 3: description: Use this: when needed",
			`values containing ":" must be quoted, e.g. description: "Use this: when needed"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSkill(tc.content, "x/SKILL.md")
			var pe *parseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error = %v, want *ParseError", err)
			}
			if pe.Line != tc.wantLine || pe.Msg != tc.wantMsg || pe.Hint != tc.wantHint {
				t.Errorf("Parse error = {line %d, %q, hint %q}, want {line %d, %q, hint %q}", pe.Line, pe.Msg, pe.Hint, tc.wantLine, tc.wantMsg, tc.wantHint)
			}
		})
	}
}

func TestParseLenient(t *testing.T) {
	content := skillMD("name: '  My Skill '\ndescription: |\n  Multi\n  line\nunknown: kept quiet\nlicense: 3\nallowed-tools: [' bash ', read_file]\nrequired-secrets: [GOOD, 'bad name', {name: OPT, optional: true}, {name: 5}, GOOD]\nsecrets-autonomous: 'yes'")
	got, err := parseSkill(content, "SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	want := Skill{
		Name: "My Skill", Description: "Multi\nline", License: "3",
		AllowedTools:    []string{"bash", "read_file"},
		RequiredSecrets: []Secret{{Name: "GOOD"}, {Name: "OPT", Optional: true}},
		Body:            "# Body\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	// An empty allowed-tools list is declared and empty, not absent.
	s, err := parseSkill(skillMD("name: a\ndescription: d\nallowed-tools: []"), "SKILL.md")
	if err != nil || s.AllowedTools == nil || len(s.AllowedTools) != 0 {
		t.Errorf("allowed-tools [] = %#v, %v; want empty non-nil", s.AllowedTools, err)
	}
	if !s.SecretsAutonomous {
		t.Errorf("secrets-autonomous default = false, want true")
	}
	// CRLF files parse.
	if _, err := parseSkill("---\r\nname: a\r\ndescription: d\r\n---\r\nbody", "SKILL.md"); err != nil {
		t.Errorf("CRLF: %v", err)
	}
}

func FuzzFrontmatter(f *testing.F) {
	for _, s := range []string{
		skillMD("name: my-skill\ndescription: Does things"),
		skillMD("name: a\ndescription: Use this: when"),
		"---\n---\n", "---", "---\nname: [a\n---\n", "---\r\nname: a\r\n---\r\n",
		skillMD("name: a\ndescription: d\nallowed-tools: [a, 1]\nrequired-secrets: [{name: X, optional: 2}]"),
		skillMD("a: &x [*x]"),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		name, verr := ValidateContent(content)
		s, perr := parseSkill(content, "SKILL.md")
		if verr == nil {
			// Anything the strict validator accepts, the runtime parser
			// must load under the same name.
			if perr != nil {
				t.Fatalf("ValidateContent accepted but Parse failed: %v\n%q", perr, content)
			}
			if s.Name != name {
				t.Fatalf("names differ: validate %q, parse %q", name, s.Name)
			}
			if _, err := ValidateName(name); err != nil {
				t.Fatalf("validated name %q fails ValidateName: %v", name, err)
			}
		}
		if perr == nil && (strings.TrimSpace(s.Name) == "" || strings.TrimSpace(s.Description) == "") {
			t.Fatalf("Parse returned a skill without name or description: %#v", s)
		}
	})
}
