package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads, resolves, defaults and validates the config.yaml at path,
// reading "$VAR" values from the process environment. Errors are [*Error]
// values (or several joined with errors.Join) naming path, line and key.
// Relative sandbox mount host paths and skills.path are made absolute
// against the directory of path.
func Load(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error(), Err: err}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read config: " + errMsg(err), Err: err}
	}
	c, err := Parse(path, data, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	c.Path = abs
	c.Dir = filepath.Dir(abs)
	c.absolutize()
	return c, nil
}

// errMsg drops the "op path:" prefix of a *PathError, which Error.File
// already shows.
func errMsg(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// absolutize resolves relative host paths against c.Dir.
func (c *Config) absolutize() {
	if c.Dir == "" {
		return
	}
	for i, m := range c.Sandbox.Mounts {
		if m.HostPath != "" && !filepath.IsAbs(m.HostPath) {
			c.Sandbox.Mounts[i].HostPath = filepath.Join(c.Dir, m.HostPath)
		}
	}
	if p := c.Skills.Path; p != "" && !filepath.IsAbs(p) {
		c.Skills.Path = filepath.Join(c.Dir, p)
	}
}

// SkillsPath returns the host skills directory: skills.path, else
// $DEER_FLOW_SKILLS_PATH, else "skills" beside the config file (or in the
// current directory for a config that was not loaded from a file).
func (c *Config) SkillsPath(getenv func(string) string) string {
	if c.Skills.Path != "" {
		return c.Skills.Path
	}
	if getenv != nil {
		if p := getenv("DEER_FLOW_SKILLS_PATH"); p != "" {
			return p
		}
	}
	return filepath.Join(c.Dir, "skills")
}

// parser carries the state of one Parse call.
type parser struct {
	file      string
	lookupEnv func(string) (string, bool)
	cfg       *Config
	lineKey   map[int]string // line -> deepest key path on it
	keyLine   map[string]int // key path -> line of the key
	errs      []error
}

// Parse decodes config.yaml bytes. file is used in error messages only;
// lookupEnv resolves "$VAR" values (nil means no variable is set). Parse does
// not touch the file system; the returned Config has empty Path and Dir.
func Parse(file string, data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	p := &parser{
		file:      file,
		lookupEnv: lookupEnv,
		cfg:       Default(),
		lineKey:   map[int]string{},
		keyLine:   map[string]int{},
	}
	if err := p.parse(data); err != nil {
		return nil, err
	}
	return p.cfg, nil
}

func (p *parser) errorf(line int, key, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) result() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return p.errs[0]
	}
	return errors.Join(p.errs...)
}

func (p *parser) parse(data []byte) error {
	var doc yaml.Node
	if err := unmarshalNode(data, &doc); err != nil {
		return p.syntaxError(err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil
		}
		root = root.Content[0]
	}
	if root.Kind == 0 || isNull(root) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root.Line, "", "top level must be a mapping of sections, not a %s", kindName(root))
		return p.result()
	}

	// Keep the implemented, non-null sections; record the others.
	kept := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: root.Line, Column: root.Column}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		name := k.Value
		if first, dup := seen[name]; dup {
			p.errorf(k.Line, name, "duplicate key (first defined at line %d)", first)
			continue
		}
		seen[name] = k.Line
		switch sectionKind(name) {
		case sectionImplemented:
			if !isNull(v) {
				kept.Content = append(kept.Content, k, v)
			}
		case sectionDeerFlow:
			p.cfg.Ignored = append(p.cfg.Ignored, name)
			p.cfg.IgnoredSections = append(p.cfg.IgnoredSections, ignoredSection(p.file, name, k.Line, v))
		default:
			// Neither Antler's nor DeerFlow's: most likely a typo, which
			// would otherwise leave the intended section at its defaults.
			p.errorf(k.Line, name, "%s", UnknownKeyMsg(name, sortedUnique(implementedSections(), deerFlowSections())))
		}
	}
	slices.Sort(p.cfg.Ignored)
	slices.SortFunc(p.cfg.IgnoredSections, func(a, b IgnoredSection) int { return strings.Compare(a.Name, b.Name) })
	if len(p.errs) > 0 {
		return p.result()
	}

	p.walk(kept, "")
	p.checkKeys(kept, reflect.TypeFor[Config](), "")
	if len(p.errs) > 0 {
		return p.result()
	}
	if err := kept.Decode(p.cfg); err != nil {
		p.decodeError(err)
		return p.result()
	}
	p.sandboxOptions(kept)
	p.postDecode()
	p.validate()
	p.validateAllowUnenforced()
	return p.result()
}

// unmarshalNode parses YAML into a node tree, turning a parser panic into
// an error so that no input can crash the caller.
func unmarshalNode(data []byte, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: invalid document: %v", r)
		}
	}()
	return yaml.Unmarshal(data, n)
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func (p *parser) syntaxError(err error) error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: p.file, Line: line, Msg: "invalid YAML: " + m[2], Err: err}
	}
	return &Error{File: p.file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: "), Err: err}
}

// decodeError maps yaml type errors ("line 3: cannot unmarshal ...") to
// positioned errors with key paths.
func (p *parser) decodeError(err error) {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		p.errs = append(p.errs, &Error{File: p.file, Msg: err.Error(), Err: err})
		return
	}
	for _, msg := range te.Errors {
		e := &Error{File: p.file, Msg: msg}
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Key = p.lineKey[e.Line]
			e.Msg = prettyTypeError(m[2])
		}
		p.errs = append(p.errs, e)
	}
}

var unmarshalRE = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")

// prettyTypeError rewrites yaml's Go-centric messages for users.
func prettyTypeError(msg string) string {
	m := unmarshalRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	got := yamlKindWord(m[1])
	if m[2] != "" {
		got += " " + strconv.Quote(m[2])
	}
	return "expected " + goTypeWord(m[3]) + ", got " + got
}

func yamlKindWord(tag string) string {
	switch tag {
	case "str":
		return "string"
	case "seq":
		return "list"
	case "map":
		return "mapping"
	case "int":
		return "integer"
	}
	return tag
}

func goTypeWord(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "config."):
		return "mapping"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "integer"
	case strings.HasPrefix(t, "float"):
		return "number"
	case t == "bool":
		return "boolean"
	}
	return t
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// walk records key positions, rejects duplicate keys and resolves "$VAR"
// string values in place. Aliases are not followed (their anchors are
// walked where they are defined), which also bounds the work on hostile
// input.
func (p *parser) walk(n *yaml.Node, path string) {
	// A key path wins its line; a list item only claims a free line, so an
	// error about "key:\n  - item" is reported at the key.
	if _, taken := p.lineKey[n.Line]; path != "" && !taken {
		p.lineKey[n.Line] = path
	}
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				p.walk(v, path)
				continue
			}
			child := joinKey(path, k.Value)
			if first, dup := seen[k.Value]; dup {
				p.errorf(k.Line, child, "duplicate key (first defined at line %d)", first)
				continue
			}
			seen[k.Value] = k.Line
			p.keyLine[child] = k.Line
			p.lineKey[k.Line] = child
			p.walk(v, child)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			child := indexKey(path, i)
			p.keyLine[child] = item.Line
			p.walk(item, child)
		}
	case yaml.ScalarNode:
		if n.ShortTag() != "!!str" {
			return
		}
		name, ok := envRef(n.Value)
		if !ok {
			return
		}
		if v, found := lookup(p.lookupEnv, name); found {
			n.Value = v
			n.Tag = "!!str"
			return
		}
		if isACPEnvPath(path) {
			// DeerFlow passes an empty value to the ACP child (DeerFlow's invoke_acp_agent_tool.py).
			n.Value = ""
			n.Tag = "!!str"
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s: %s: %s; using an empty value", p.file, path, missingEnvMsg(name)))
			return
		}
		p.errs = append(p.errs, &Error{File: p.file, Line: n.Line, Key: path, Msg: missingEnvMsg(name), Err: ErrEnvNotSet})
	}
}

func lookup(lookupEnv func(string) (string, bool), name string) (string, bool) {
	if lookupEnv == nil {
		return "", false
	}
	return lookupEnv(name)
}

// isACPEnvPath matches "acp_agents.NAME.env.KEY".
func isACPEnvPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "acp_agents.")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, ".env.")
	return i > 0
}

// sandboxOptions copies the container-provider keys of the sandbox section
// into Sandbox.Options.
func (p *parser) sandboxOptions(root *yaml.Node) {
	sb := mappingValue(root, "sandbox")
	if sb == nil || sb.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(sb.Content); i += 2 {
		k, v := sb.Content[i], sb.Content[i+1]
		if !isSandboxProviderKey(k.Value) {
			continue
		}
		var val any
		if err := v.Decode(&val); err != nil {
			p.decodeError(err)
			continue
		}
		if p.cfg.Sandbox.Options == nil {
			p.cfg.Sandbox.Options = map[string]any{}
		}
		p.cfg.Sandbox.Options[k.Value] = val
	}
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// postDecode fills in what decoding alone cannot: entry positions and
// config_version warnings.
func (p *parser) postDecode() {
	c := p.cfg
	for i := range c.Tools {
		c.Tools[i].Index = i
	}
	if c.ConfigVersion > 0 && c.ConfigVersion < exampleConfigVersion {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: config_version %d is older than %d; newer keys take their defaults",
			p.file, c.ConfigVersion, exampleConfigVersion))
	}
}

// line returns the line of path, or of its nearest recorded parent.
func (p *parser) line(path string) int {
	for path != "" {
		if l, ok := p.keyLine[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// invalid records a validation error at key path.
func (p *parser) invalid(path, format string, args ...any) {
	p.errorf(p.line(path), path, format, args...)
}

// TypeErrorMsg describes a yaml decoding error for users: "expected
// integer, got string \"lots\"" rather than yaml's Go-centric text and
// its line, which is that of a re-encoded value, not of the file.
func TypeErrorMsg(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	msgs := make([]string, len(te.Errors))
	for i, msg := range te.Errors {
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			msg = m[2]
		}
		msgs[i] = prettyTypeError(msg)
	}
	return strings.Join(msgs, "; ")
}
