package skills

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// maxNameLen and maxDescriptionLen bound a skill's name and description,
// in characters.
const (
	maxNameLen        = 64
	maxDescriptionLen = 1024
)

// allowedKeys are the frontmatter keys a written SKILL.md may use.
var allowedKeys = []string{
	"allowed-tools", "author", "compatibility", "description", "license",
	"metadata", "name", "required-secrets", "secrets-autonomous", "version",
}

var (
	frontmatterNameChars = regexp.MustCompile(`^[a-z0-9-]+$`)
	secretNamePattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	yamlLinePattern      = regexp.MustCompile(`line (\d+)`)
)

// errNoFrontmatter and errBadFence are the two ways a file can fail to
// have a frontmatter block at all.
var (
	errNoFrontmatter = errors.New("No YAML frontmatter found")
	errBadFence      = errors.New("Invalid frontmatter format")
)

// splitFrontmatter returns the YAML text between the opening "---" line
// (which must start at byte 0) and the next "---" line, the body after
// it, and the 1-based file line of the first YAML line (always 2).
// Trailing spaces and a CR after either fence are tolerated.
func splitFrontmatter(content string) (front, body string, err error) {
	if !strings.HasPrefix(content, "---") {
		return "", "", errNoFrontmatter
	}
	first, rest, ok := strings.Cut(content, "\n")
	if !ok || strings.TrimRight(first, " \t\r") != "---" {
		return "", "", errBadFence
	}
	var lines []string
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			return strings.Join(lines, "\n"), after, nil
		}
		lines = append(lines, strings.TrimSuffix(line, "\r"))
		rest = after
	}
	return "", "", errBadFence
}

// frontmatter is a decoded frontmatter mapping: the last value of each
// key (YAML allows duplicates; PyYAML keeps the last one).
type frontmatter struct {
	keys   []string
	values map[string]*yaml.Node
}

func decodeFrontmatter(front string) (*frontmatter, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	m := doc.Content[0]
	fm := &frontmatter{values: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if _, seen := fm.values[k]; !seen {
			fm.keys = append(fm.keys, k)
		}
		fm.values[k] = m.Content[i+1]
	}
	return fm, nil
}

// pyType names a YAML node's type the way Python's type().__name__ does,
// so that validation messages read as DeerFlow's.
func pyType(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "dict"
	case yaml.AliasNode:
		return pyType(n.Alias)
	}
	switch n.ShortTag() {
	case "!!int":
		return "int"
	case "!!float":
		return "float"
	case "!!bool":
		return "bool"
	case "!!null":
		return "NoneType"
	case "!!binary":
		return "bytes"
	case "!!timestamp":
		return "datetime"
	}
	return "str"
}

func isString(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// ValidateContent checks a SKILL.md text the way installs and skill_manage
// writes do, and returns the skill's (trimmed) name. The error text is
// DeerFlow's, for example "Missing 'name' in frontmatter" or
// "Unexpected key(s) in SKILL.md frontmatter: a, b".
func ValidateContent(content string) (string, error) {
	front, _, err := splitFrontmatter(content)
	if err != nil {
		return "", err
	}
	fm, err := decodeFrontmatter(front)
	if err != nil {
		return "", fmt.Errorf("Invalid YAML in frontmatter: %s", yamlMessage(err))
	}
	if fm == nil {
		return "", errors.New("Frontmatter must be a YAML dictionary")
	}
	var unexpected []string
	for _, k := range fm.keys {
		if !slices.Contains(allowedKeys, k) {
			unexpected = append(unexpected, k)
		}
	}
	if len(unexpected) > 0 {
		slices.Sort(unexpected)
		return "", fmt.Errorf("Unexpected key(s) in SKILL.md frontmatter: %s", strings.Join(unexpected, ", "))
	}
	nameNode, ok := fm.values["name"]
	if !ok {
		return "", errors.New("Missing 'name' in frontmatter")
	}
	descNode, ok := fm.values["description"]
	if !ok {
		return "", errors.New("Missing 'description' in frontmatter")
	}
	if !isString(nameNode) {
		return "", fmt.Errorf("Name must be a string, got %s", pyType(nameNode))
	}
	name := strings.TrimSpace(nameNode.Value)
	if err := validateFrontmatterName(name); err != nil {
		return "", err
	}
	if !isString(descNode) {
		return "", fmt.Errorf("Description must be a string, got %s", pyType(descNode))
	}
	desc := strings.TrimSpace(descNode.Value)
	if desc == "" {
		// DeerFlow accepts an empty description here and then silently
		// skips the skill at runtime; Antler rejects it up front.
		return "", errors.New("Description cannot be empty")
	}
	if strings.ContainsAny(desc, "<>") {
		return "", errors.New("Description cannot contain angle brackets (< or >)")
	}
	if n := utf8.RuneCountInString(desc); n > maxDescriptionLen {
		return "", fmt.Errorf("Description is too long (%d characters). Maximum is %d characters.", n, maxDescriptionLen)
	}
	if n, ok := fm.values["allowed-tools"]; ok {
		if _, err := parseAllowedTools(n); err != nil {
			return "", errors.New("allowed-tools in SKILL.md must be a list of strings")
		}
	}
	if n, ok := fm.values["required-secrets"]; ok {
		if _, bad, err := parseSecrets(n); err != nil || bad > 0 {
			return "", errors.New("required-secrets in SKILL.md must be a list of secret names or {name, optional} mappings")
		}
	}
	if n, ok := fm.values["secrets-autonomous"]; ok && !isNull(n) {
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			return "", errors.New("secrets-autonomous in SKILL.md must be a boolean")
		}
	}
	return name, nil
}

func validateFrontmatterName(name string) error {
	if name == "" {
		return errors.New("Name cannot be empty")
	}
	if !frontmatterNameChars.MatchString(name) {
		return fmt.Errorf("Name '%s' should be hyphen-case (lowercase letters, digits, and hyphens only)", name)
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--") {
		return fmt.Errorf("Name '%s' cannot start/end with hyphen or contain consecutive hyphens", name)
	}
	if n := utf8.RuneCountInString(name); n > maxNameLen {
		return fmt.Errorf("Name is too long (%d characters). Maximum is %d characters.", n, maxNameLen)
	}
	return nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// parseAllowedTools returns nil for a null value, the trimmed names for
// a list of non-empty strings, and an error for anything else.
func parseAllowedTools(n *yaml.Node) ([]string, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("must be a list of strings")
	}
	out := []string{}
	for _, item := range n.Content {
		if !isString(item) {
			return nil, errors.New("must contain only strings")
		}
		name := strings.TrimSpace(item.Value)
		if name == "" {
			return nil, errors.New("cannot contain empty tool names")
		}
		out = append(out, name)
	}
	return out, nil
}

// parseSecrets returns the valid entries of required-secrets and how many
// invalid entries were dropped. A value that is not a list is an error.
func parseSecrets(n *yaml.Node) ([]Secret, int, error) {
	if isNull(n) {
		return nil, 0, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, 0, errors.New("must be a list")
	}
	var out []Secret
	bad := 0
	for _, item := range n.Content {
		var s Secret
		switch {
		case isString(item):
			s.Name = strings.TrimSpace(item.Value)
		case item.Kind == yaml.MappingNode:
			ok := true
			for i := 0; i+1 < len(item.Content); i += 2 {
				v := item.Content[i+1]
				switch item.Content[i].Value {
				case "name":
					if !isString(v) {
						ok = false
					}
					s.Name = strings.TrimSpace(v.Value)
				case "optional":
					if v.ShortTag() != "!!bool" {
						ok = false
					}
					s.Optional = v.Value == "true" || v.Value == "True" || v.Value == "TRUE"
				default:
					ok = false
				}
			}
			if !ok {
				s.Name = ""
			}
		}
		if !secretNamePattern.MatchString(s.Name) || slices.ContainsFunc(out, func(o Secret) bool { return o.Name == s.Name }) {
			bad++
			continue
		}
		out = append(out, s)
	}
	return out, bad, nil
}

// parseError says why the lenient parser skipped a SKILL.md.
type parseError struct {
	// File is the SKILL.md path given to parseSkill.
	File string
	// Line is the 1-based line of the SKILL.md the problem is on, or 0.
	Line int
	// Msg says what is wrong; Hint, when set, says how to fix it.
	Msg  string
	Hint string
}

func (e *parseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": " + e.Msg)
	if e.Hint != "" {
		b.WriteString(" (hint: " + e.Hint + ")")
	}
	return b.String()
}

// parseSkill is the lenient runtime parser used by discovery. Unknown keys are
// ignored; a missing or blank name or description, a malformed
// allowed-tools or required-secrets value, or broken YAML returns a
// *parseError (the caller logs it and skips the skill). Invalid secret
// entries are dropped one by one and a non-boolean secrets-autonomous
// reads as false. file is only used in errors; the returned Skill has no
// category or paths set.
func parseSkill(content, file string) (Skill, error) {
	front, body, err := splitFrontmatter(content)
	if err != nil {
		return Skill{}, &parseError{File: file, Line: 1, Msg: err.Error()}
	}
	fm, err := decodeFrontmatter(front)
	if err != nil {
		return Skill{}, yamlParseError(file, front, err)
	}
	if fm == nil {
		return Skill{}, &parseError{File: file, Line: 2, Msg: "front-matter is not a YAML mapping"}
	}
	s := Skill{Body: body, SecretsAutonomous: true}
	n := fm.values["name"]
	if !isString(n) || strings.TrimSpace(n.Value) == "" {
		return Skill{}, &parseError{File: file, Line: nodeLine(n), Msg: "missing or empty 'name'"}
	}
	s.Name = strings.TrimSpace(n.Value)
	d := fm.values["description"]
	if !isString(d) || strings.TrimSpace(d.Value) == "" {
		return Skill{}, &parseError{File: file, Line: nodeLine(d), Msg: "missing or empty 'description'"}
	}
	s.Description = strings.TrimSpace(d.Value)
	if l := fm.values["license"]; l != nil && l.Kind == yaml.ScalarNode && !isNull(l) {
		s.License = strings.TrimSpace(l.Value)
	}
	if at := fm.values["allowed-tools"]; at != nil {
		tools, err := parseAllowedTools(at)
		if err != nil {
			return Skill{}, &parseError{File: file, Line: nodeLine(at), Msg: "allowed-tools " + err.Error()}
		}
		s.AllowedTools = tools
	}
	if rs := fm.values["required-secrets"]; rs != nil {
		secrets, _, err := parseSecrets(rs)
		if err != nil {
			return Skill{}, &parseError{File: file, Line: nodeLine(rs), Msg: "required-secrets " + err.Error()}
		}
		s.RequiredSecrets = secrets
	}
	if sa := fm.values["secrets-autonomous"]; sa != nil && !isNull(sa) {
		s.SecretsAutonomous = sa.ShortTag() == "!!bool" && strings.EqualFold(sa.Value, "true")
	}
	return s, nil
}

// nodeLine converts a frontmatter node's line to a SKILL.md line (the
// opening fence is line 1).
func nodeLine(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 0
	}
	return n.Line + 1
}

// yamlMessage strips the "yaml: " prefix of a yaml.v3 error.
func yamlMessage(err error) string { return strings.TrimPrefix(err.Error(), "yaml: ") }

// yamlParseError builds the logged explanation of a YAML error, with the
// offending line and, for the most common mistake (an unquoted value
// containing ": "), a quoting hint.
func yamlParseError(file, front string, err error) *parseError {
	msg := yamlMessage(err)
	pe := &parseError{File: file, Msg: "invalid YAML front-matter: " + msg}
	m := yamlLinePattern.FindStringSubmatch(msg)
	if m == nil {
		return pe
	}
	line, _ := strconv.Atoi(m[1])
	lines := strings.Split(front, "\n")
	if line < 1 || line > len(lines) {
		return pe
	}
	pe.Line = line + 1
	offending := lines[line-1]
	pe.Msg += fmt.Sprintf("; line %d: %s", pe.Line, strings.TrimSpace(offending))
	if strings.Contains(msg, "mapping values are not allowed") {
		if key, value, ok := strings.Cut(offending, ":"); ok {
			value = strings.TrimSpace(value)
			if value != "" && !strings.ContainsAny(value[:1], `"'|>[{`) {
				pe.Hint = fmt.Sprintf(`values containing ":" must be quoted, e.g. %s: "%s"`, strings.TrimSpace(key), strings.ReplaceAll(value, `"`, `\"`))
			}
		}
	}
	return pe
}
