package config

import (
	"fmt"
	"strings"
)

// pyFormat renders template as Python's str.format does for named
// placeholders only, the syntax of DeerFlow's prompt templates: {name}
// is replaced by values[name] (names lists them, in the order error
// messages give them), {{ and }} are literal braces. An unknown
// placeholder (including a format spec or conversion) or an unmatched
// brace is an error naming its offset or name.
func pyFormat(template string, names []string, values map[string]string) (string, error) {
	size := len(template)
	for _, v := range values {
		size += len(v)
	}
	var b strings.Builder
	b.Grow(size)
	for i := 0; i < len(template); i++ {
		c := template[i]
		switch {
		case c == '{' && i+1 < len(template) && template[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(template) && template[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '}':
			return "", fmt.Errorf("single '}' at offset %d (write }} for a literal brace)", i)
		case c == '{':
			end := strings.IndexByte(template[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("single '{' at offset %d (write {{ for a literal brace)", i)
			}
			name := template[i+1 : i+end]
			v, ok := values[name]
			if !ok {
				known := make([]string, len(names))
				for j, n := range names {
					known[j] = "{" + n + "}"
				}
				return "", fmt.Errorf("unknown placeholder {%s} (known: %s)", name, strings.Join(known, ", "))
			}
			b.WriteString(v)
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
