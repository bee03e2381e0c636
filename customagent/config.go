package customagent

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxAgentOutputTokens bounds model_settings.max_tokens, as in DeerFlow.
const MaxAgentOutputTokens = 200_000

// Config is an agent's config.yaml. The zero value of each field is what
// an absent key means.
type Config struct {
	// Name is the agent's name; an absent key means the folder's name.
	Name string
	// Description is a one-line description ("" when absent).
	Description string
	// Model names a model of config.yaml's models; "" means the run's
	// default.
	Model string
	// ToolGroups limits the config tools to these groups; nil means every
	// group, an empty non-nil slice none.
	ToolGroups []string
	// Skills limits the skills the agent sees; nil means every enabled
	// skill, an empty non-nil slice none.
	Skills []string
	// ModelSettings overrides the model's sampling; nil means none.
	ModelSettings *ModelSettings
	// ThinkingEnabled, when non-nil, is the agent's thinking default.
	ThinkingEnabled *bool
	// ReasoningEffort is "", "low", "medium" or "high".
	ReasoningEffort string
	// MCPPlugins names the MCP servers the agent binds (DeerFlow's
	// mcp_plugins); nil means every server the user's runs see, an empty
	// non-nil slice none. An entry is a server name, or DeerFlow's
	// installation id of one (see agent.BindAgentMCP).
	MCPPlugins []string
	// MCPTools (Antler) narrows servers of MCPPlugins to some of their
	// tools, by server name: the tools' own names on the server (as in
	// disabled_tools). A server it does not name keeps every tool; nil
	// narrows none.
	MCPTools map[string][]string

	// extra holds every other top-level key (github: and keys this
	// version does not know) with its YAML value, in file order, so that
	// a rewrite keeps them.
	extra []extraField
}

// ModelSettings are per-agent sampling overrides.
type ModelSettings struct {
	Temperature *float64 // 0..2
	MaxTokens   *int     // 1..MaxAgentOutputTokens
}

type extraField struct {
	key   string
	value *yaml.Node
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	if c == nil {
		return nil
	}
	out := *c
	out.ToolGroups = cloneList(c.ToolGroups)
	out.Skills = cloneList(c.Skills)
	out.MCPPlugins = cloneList(c.MCPPlugins)
	if c.MCPTools != nil {
		out.MCPTools = make(map[string][]string, len(c.MCPTools))
		for k, v := range c.MCPTools {
			out.MCPTools[k] = cloneList(v)
		}
	}
	if c.ModelSettings != nil {
		ms := *c.ModelSettings
		out.ModelSettings = &ms
	}
	if c.ThinkingEnabled != nil {
		b := *c.ThinkingEnabled
		out.ThinkingEnabled = &b
	}
	out.extra = slices.Clone(c.extra) // nodes are never modified
	return &out
}

// cloneList copies a list keeping the nil / empty distinction.
func cloneList(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}

// ExtraKeys returns the top-level keys that Config does not model
// (github, and anything else), in file order.
func (c *Config) ExtraKeys() []string {
	keys := make([]string, len(c.extra))
	for i, f := range c.extra {
		keys[i] = f.key
	}
	return keys
}

// Extra decodes the value of an unmodelled top-level key into v (as
// yaml.Node.Decode does). It reports false when the key is absent.
func (c *Config) Extra(key string, v any) (bool, error) {
	for _, f := range c.extra {
		if f.key == key {
			return true, f.value.Decode(v)
		}
	}
	return false, nil
}

// ConfigError is a config.yaml that cannot be used. Its message names the
// line and the key, never the host path.
type ConfigError struct {
	Line int    // 1-based; 0 when unknown
	Key  string // the top-level key, "" for the document
	Msg  string
}

func (e *ConfigError) Error() string {
	where := configFileName
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return where + ": " + e.Key + ": " + e.Msg
	}
	return where + ": " + e.Msg
}

// parseConfig decodes config.yaml. dirName is the agent's name used when
// the file has no name key. An empty file is an empty config.
func parseConfig(data []byte, dirName string) (*Config, error) {
	c := &Config{Name: dirName}
	root, err := configRoot(data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return c, nil
	}
	seen := map[string]bool{}
	mcpToolsLine := 0
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, &ConfigError{Line: k.Line, Msg: "keys must be strings"}
		}
		key := k.Value
		if seen[key] {
			return nil, &ConfigError{Line: k.Line, Key: key, Msg: "duplicate key"}
		}
		seen[key] = true
		if err := c.setField(key, v); err != nil {
			return nil, &ConfigError{Line: v.Line, Key: key, Msg: err.Error()}
		}
		if key == "mcp_tools" {
			mcpToolsLine = v.Line
		}
	}
	if err := c.CheckMCP(); err != nil {
		return nil, &ConfigError{Line: mcpToolsLine, Key: "mcp_tools", Msg: err.Error()}
	}
	return c, nil
}

// CheckMCP reports an mcp_tools entry for a server that mcp_plugins (when
// set) does not bind, and empty names in either.
func (c *Config) CheckMCP() error {
	for _, p := range c.MCPPlugins {
		if strings.TrimSpace(p) == "" {
			return errors.New("mcp_plugins: empty server name")
		}
	}
	for _, server := range slices.Sorted(maps.Keys(c.MCPTools)) {
		if c.MCPPlugins != nil && !slices.Contains(c.MCPPlugins, server) {
			return fmt.Errorf("server '%s' is not in mcp_plugins; add it there or remove it here", server)
		}
		for _, t := range c.MCPTools[server] {
			if strings.TrimSpace(t) == "" {
				return fmt.Errorf("server '%s': empty tool name", server)
			}
		}
	}
	return nil
}

// configRoot parses data as YAML and returns its top-level mapping, or
// nil for an empty or null document.
func configRoot(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &ConfigError{Msg: "invalid YAML: " + err.Error()}
	}
	if doc.Kind == 0 { // empty document
		return nil, nil
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &ConfigError{Line: root.Line, Msg: "the document must be a mapping"}
	}
	return root, nil
}

// setField decodes the value v of the top-level key into c; a null value
// leaves the field as it is, and a key Antler does not know is kept as an
// extra field. The error says what is wrong with v.
func (c *Config) setField(key string, v *yaml.Node) error {
	var err error
	switch key {
	case "name":
		err = setString(&c.Name, v)
	case "description":
		err = setString(&c.Description, v)
	case "model":
		err = setString(&c.Model, v)
	case "tool_groups":
		c.ToolGroups, err = stringList(v)
	case "skills":
		c.Skills, err = stringList(v)
	case "model_settings":
		c.ModelSettings, err = parseModelSettings(v)
	case "mcp_plugins":
		c.MCPPlugins, err = stringList(v)
	case "mcp_tools":
		c.MCPTools, err = stringListMap(v)
	case "thinking_enabled":
		if isNull(v) {
			break
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
			err = errors.New("must be true, false or null")
			break
		}
		var b bool
		if err = v.Decode(&b); err == nil {
			c.ThinkingEnabled = &b
		}
	case "reasoning_effort":
		var s *string
		if s, err = scalarString(v); err == nil && s != nil {
			if *s != "low" && *s != "medium" && *s != "high" {
				err = errors.New("must be low, medium, high or null")
			} else {
				c.ReasoningEffort = *s
			}
		}
	default:
		c.extra = append(c.extra, extraField{key: key, value: v})
	}
	return err
}

// setString sets *dst to the string scalar v; null leaves it as it is.
func setString(dst *string, v *yaml.Node) error {
	s, err := scalarString(v)
	if err == nil && s != nil {
		*dst = *s
	}
	return err
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// scalarString returns a string scalar, nil for null, and an error for
// anything else (a number is not a name).
func scalarString(n *yaml.Node) (*string, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return nil, errors.New("must be a string")
	}
	s := n.Value
	return &s, nil
}

// stringList returns a list of strings, nil for null and an empty
// non-nil slice for [].
func stringList(n *yaml.Node) ([]string, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("must be a list of strings")
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
			return nil, errors.New("must be a list of strings")
		}
		out = append(out, item.Value)
	}
	return out, nil
}

// stringListMap returns a mapping of names to lists of strings, nil for
// null.
func stringListMap(n *yaml.Node) (map[string][]string, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, errors.New("must be a mapping of server names to lists of tool names")
	}
	out := make(map[string][]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			return nil, errors.New("must be a mapping of server names to lists of tool names")
		}
		if _, dup := out[k.Value]; dup {
			return nil, fmt.Errorf("server '%s' is named twice", k.Value)
		}
		l, err := stringList(n.Content[i+1])
		if err != nil || l == nil {
			return nil, fmt.Errorf("server '%s': must be a list of tool names", k.Value)
		}
		out[k.Value] = l
	}
	return out, nil
}

func parseModelSettings(n *yaml.Node) (*ModelSettings, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, errors.New("must be a mapping with temperature and max_tokens")
	}
	ms := &ModelSettings{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if isNull(v) {
			continue
		}
		switch k {
		case "temperature":
			var f float64
			if v.Kind != yaml.ScalarNode || (v.Tag != "!!float" && v.Tag != "!!int") || v.Decode(&f) != nil || math.IsNaN(f) || f < 0 || f > 2 {
				return nil, errors.New("temperature must be a number from 0 to 2")
			}
			ms.Temperature = &f
		case "max_tokens":
			var t int
			if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Decode(&t) != nil || t < 1 || t > MaxAgentOutputTokens {
				return nil, fmt.Errorf("max_tokens must be an integer from 1 to %d", MaxAgentOutputTokens)
			}
			ms.MaxTokens = &t
		default:
			return nil, fmt.Errorf("unknown key %q (allowed: temperature, max_tokens)", k)
		}
	}
	if ms.Temperature == nil && ms.MaxTokens == nil {
		return nil, nil // DeerFlow drops an empty model_settings too
	}
	return ms, nil
}

// Marshal encodes c as config.yaml, DeerFlow's key order first (name,
// description, model, tool_groups, skills, model_settings,
// thinking_enabled, reasoning_effort, then mcp_plugins and mcp_tools) and
// then every other key in the
// order it was read. Absent values are left out; an empty list is kept.
func (c *Config) Marshal() ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) {
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	}
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	list := func(s []string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if len(s) == 0 {
			n.Style = yaml.FlowStyle // "[]"
		}
		for _, v := range s {
			n.Content = append(n.Content, str(v))
		}
		return n
	}
	add("name", str(c.Name))
	add("description", str(c.Description))
	if c.Model != "" {
		add("model", str(c.Model))
	}
	if c.ToolGroups != nil {
		add("tool_groups", list(c.ToolGroups))
	}
	if c.Skills != nil {
		add("skills", list(c.Skills))
	}
	if ms := c.ModelSettings; ms != nil && (ms.Temperature != nil || ms.MaxTokens != nil) {
		n := &yaml.Node{Kind: yaml.MappingNode}
		if ms.Temperature != nil {
			n.Content = append(n.Content, str("temperature"),
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: floatText(*ms.Temperature)})
		}
		if ms.MaxTokens != nil {
			n.Content = append(n.Content, str("max_tokens"),
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(*ms.MaxTokens)})
		}
		add("model_settings", n)
	}
	if c.ThinkingEnabled != nil {
		add("thinking_enabled", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(*c.ThinkingEnabled)})
	}
	if c.ReasoningEffort != "" {
		add("reasoning_effort", str(c.ReasoningEffort))
	}
	if c.MCPPlugins != nil {
		add("mcp_plugins", list(c.MCPPlugins))
	}
	if c.MCPTools != nil {
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, server := range slices.Sorted(maps.Keys(c.MCPTools)) {
			n.Content = append(n.Content, str(server), list(c.MCPTools[server]))
		}
		add("mcp_tools", n)
	}
	for _, f := range c.extra {
		add(f.key, f.value)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encode %s: %w", configFileName, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode %s: %w", configFileName, err)
	}
	return buf.Bytes(), nil
}

// floatText formats f so that YAML reads it back as a float ("1.0", not
// "1").
func floatText(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}
