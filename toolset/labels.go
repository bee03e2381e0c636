package toolset

import (
	"maps"

	"github.com/antlerhq/antler/tool"
)

// labeled returns t carrying its source in Meta[tool.MetaSource], for the
// policies that decide by where a tool comes from (package toolpolicy).
// Tools are shared values: a tool without the label is copied, never
// changed.
func labeled(t *tool.Tool, source Source) *tool.Tool {
	if t.Meta[tool.MetaSource] == string(source) {
		return t
	}
	c := *t
	c.Meta = maps.Clone(t.Meta)
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	c.Meta[tool.MetaSource] = string(source)
	return &c
}
