package deferred

import (
	"slices"
	"strings"
)

// htmlEscaper escapes like Python's html.escape(s, quote=True), which
// DeerFlow applies to each name.
var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;")

// promptSection returns the system-prompt block listing the deferred tool
// names, sorted and HTML-escaped, one per line:
//
//	<available-deferred-tools>
//	name_a
//	name_b
//	</available-deferred-tools>
//
// It returns "" when names is empty.
func promptSection(names []string) string {
	if len(names) == 0 {
		return ""
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	var b strings.Builder
	b.WriteString("<available-deferred-tools>\n")
	for _, n := range sorted {
		b.WriteString(htmlEscaper.Replace(n))
		b.WriteByte('\n')
	}
	b.WriteString("</available-deferred-tools>")
	return b.String()
}

// PromptSection returns the <available-deferred-tools> block of c.
func (c *Catalog) PromptSection() string { return c.idx.prompt }
