package config

import "go.yaml.in/yaml/v3"

// The UnmarshalYAML methods below start each list or map entry from its
// defaults and record the entry's line. Each decodes through a local type
// without methods so that the struct tags apply and there is no recursion.

// UnmarshalYAML implements yaml.Unmarshaler.
func (m *Model) UnmarshalYAML(n *yaml.Node) error {
	type plain Model
	v := plain{}
	if err := n.Decode(&v); err != nil {
		return err
	}
	v.Line, v.KeyLines = n.Line, keyLines(n)
	*m = Model(v)
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (t *ToolEntry) UnmarshalYAML(n *yaml.Node) error {
	type plain ToolEntry
	v := plain{}
	if err := n.Decode(&v); err != nil {
		return err
	}
	v.Line, v.KeyLines = n.Line, keyLines(n)
	*t = ToolEntry(v)
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (g *ToolGroup) UnmarshalYAML(n *yaml.Node) error {
	type plain ToolGroup
	v := plain{}
	if err := n.Decode(&v); err != nil {
		return err
	}
	v.Line = n.Line
	*g = ToolGroup(v)
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (a *ACPAgent) UnmarshalYAML(n *yaml.Node) error {
	type plain ACPAgent
	v := plain(defaultACPAgent())
	if err := n.Decode(&v); err != nil {
		return err
	}
	v.Line = n.Line
	*a = ACPAgent(v)
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (c *CustomSubagent) UnmarshalYAML(n *yaml.Node) error {
	type plain CustomSubagent
	v := plain(defaultCustomSubagent())
	if err := n.Decode(&v); err != nil {
		return err
	}
	v.Line = n.Line
	*c = CustomSubagent(v)
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (o *SubagentOverride) UnmarshalYAML(n *yaml.Node) error {
	type plain SubagentOverride
	v := plain{}
	if err := n.Decode(&v); err != nil {
		return err
	}
	v.Line = n.Line
	*o = SubagentOverride(v)
	return nil
}

// keyLines maps each key of mapping n to its line (nil for another node).
func keyLines(n *yaml.Node) map[string]int {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	out := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = n.Content[i].Line
	}
	return out
}
