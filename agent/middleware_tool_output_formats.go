package agent

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The structured detectors of the synopsis (DeerFlow's _try_json,
// _try_xml, _try_table and _try_yaml). Each reports false when content
// is not of its kind, and the next one is tried.

// jsonObject and jsonArray are a decoded JSON container: its length and,
// in document order, the first entries the synopsis reads. Maps would
// lose the key order that DeerFlow's Python dicts keep.
type jsonObject struct {
	n    int
	keys []string
	vals []any
}

type jsonArray struct {
	n     int
	items []any
}

// jsonKeepItems is how many items of an array are kept (the shape line
// shows three); jsonKeepDepth is the nesting below which containers keep
// no entries (nothing deeper than the structure depth is read).
const (
	jsonKeepItems = 3
	jsonKeepDepth = jsonStructureDepth + 2
)

var errJSONNesting = errors.New("json nested too deeply")

// decodeJSONPrefix decodes the JSON value at the start of s, as Python's
// JSONDecoder.raw_decode does, and returns it with the byte offset where
// it ends.
func decodeJSONPrefix(s string) (any, int, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := readJSON(dec, 0)
	if err != nil {
		return nil, 0, err
	}
	return v, int(dec.InputOffset()), nil
}

func readJSON(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= jsonMaxNesting {
		return nil, errJSONNesting
	}
	keep := depth < jsonKeepDepth
	switch d {
	case '{':
		o := &jsonObject{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			v, err := readJSON(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if keep && o.n < synopsisKeyLimit {
				o.keys, o.vals = append(o.keys, key), append(o.vals, v)
			}
			o.n++
		}
		_, err = dec.Token()
		return o, err
	case '[':
		a := &jsonArray{}
		for dec.More() {
			v, err := readJSON(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if keep && a.n < jsonKeepItems {
				a.items = append(a.items, v)
			}
			a.n++
		}
		_, err = dec.Token()
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// jsonTypeName is DeerFlow's _type_name.
func jsonTypeName(v any) string {
	switch v.(type) {
	case *jsonObject:
		return "object"
	case *jsonArray:
		return "array"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case json.Number:
		return "number"
	}
	return "string"
}

func isJSONContainer(v any) bool {
	switch v.(type) {
	case *jsonObject, *jsonArray:
		return true
	}
	return false
}

// jsonShortValue is DeerFlow's _short_value: a string as JSON, anything
// else as Python's repr, clipped to 80 characters.
func jsonShortValue(v any) string {
	if s, ok := v.(string); ok {
		return pyDumpsString(pyClip(s, 80))
	}
	return pyClip(pyStr(v), 80)
}

func jsonShape(v any, depth int) string {
	if depth >= jsonShapeMaxDepth {
		return "..."
	}
	switch x := v.(type) {
	case *jsonObject:
		suffix := ""
		if len(x.keys) > 0 {
			suffix = ": " + strings.Join(x.keys, ", ")
		}
		return fmt.Sprintf("object(keys=%d%s)", x.n, suffix)
	case *jsonArray:
		samples := make([]string, len(x.items))
		for i, it := range x.items {
			samples[i] = jsonShape(it, depth+1)
		}
		suffix := ""
		if len(samples) > 0 {
			suffix = ", first=[" + strings.Join(samples, ", ") + "]"
		}
		return fmt.Sprintf("array(len=%d%s)", x.n, suffix)
	}
	return jsonTypeName(v)
}

func jsonPath(parent, key string) string {
	if jsonPathWord.MatchString(key) {
		return parent + "." + key
	}
	return parent + "[" + pyDumpsString(key) + "]"
}

func jsonContainerDescription(v any) string {
	switch x := v.(type) {
	case *jsonObject:
		if len(x.keys) > 0 {
			return fmt.Sprintf("object keys %d; keys %s", x.n, strings.Join(x.keys, ", "))
		}
		return fmt.Sprintf("object keys %d", x.n)
	case *jsonArray:
		if len(x.items) > 0 {
			return fmt.Sprintf("array length %d; first item %s", x.n, jsonTypeName(x.items[0]))
		}
		return fmt.Sprintf("array length %d", x.n)
	}
	return jsonTypeName(v)
}

// jsonContainerPaths is DeerFlow's _json_container_paths: the nested
// containers by path, with no line or byte locations.
func jsonContainerPaths(v any) []string {
	var paths []string
	var walk func(node any, cur string, depth int)
	walk = func(node any, cur string, depth int) {
		if len(paths) >= jsonStructureLimit || depth >= jsonStructureDepth {
			return
		}
		switch x := node.(type) {
		case *jsonObject:
			for i, key := range x.keys {
				if len(paths) >= jsonStructureLimit {
					break
				}
				next, child := jsonPath(cur, key), x.vals[i]
				if isJSONContainer(child) {
					paths = append(paths, next+": "+jsonContainerDescription(child))
					walk(child, next, depth+1)
				}
			}
		case *jsonArray:
			if len(x.items) > 0 && isJSONContainer(x.items[0]) {
				walk(x.items[0], cur+"[]", depth+1)
			}
		}
	}
	walk(v, "$", 0)
	return paths
}

// jsonScalarExamples is DeerFlow's _scalar_examples.
func jsonScalarExamples(v any) []string {
	var out []string
	var walk func(node any, cur string, depth int)
	walk = func(node any, cur string, depth int) {
		if len(out) >= synopsisScalarLimit || depth >= jsonStructureDepth {
			return
		}
		switch x := node.(type) {
		case *jsonObject:
			for i, key := range x.keys {
				walk(x.vals[i], cur+"."+key, depth+1)
				if len(out) >= synopsisScalarLimit {
					break
				}
			}
		case *jsonArray:
			for i, it := range x.items[:min(2, len(x.items))] {
				walk(it, fmt.Sprintf("%s[%d]", cur, i), depth+1)
				if len(out) >= synopsisScalarLimit {
					break
				}
			}
		default:
			out = append(out, cur+": "+jsonShortValue(node))
		}
	}
	walk(v, "$", 0)
	return out
}

func tryJSON(content string) (synopsis, bool) {
	stripped := pyStrip(content)
	if !strings.HasPrefix(stripped, "{") && !strings.HasPrefix(stripped, "[") {
		return synopsis{}, false
	}
	v, end, err := decodeJSONPrefix(stripped)
	if err != nil {
		return synopsis{}, false
	}
	trailing := charLen(pyStrip(stripped[end:]))
	structure := append([]string{"shape: " + jsonShape(v, 0)}, jsonContainerPaths(v)...)
	notable := jsonScalarExamples(v)
	var summary []string
	switch x := v.(type) {
	case *jsonObject:
		keys := strings.Join(x.keys, ", ")
		if keys == "" {
			keys = "(none)"
		}
		summary = []string{fmt.Sprintf("JSON object with %d top-level keys.", x.n), "Top-level keys: " + keys}
	case *jsonArray:
		summary = []string{fmt.Sprintf("JSON array with %d items.", x.n)}
		if len(x.items) > 0 {
			structure = append(structure, "first item type: "+jsonTypeName(x.items[0]))
		}
	}
	if trailing > 0 {
		notable = append(notable, fmt.Sprintf("Trailing non-JSON characters after first value: %d", trailing))
	}
	return synopsis{kind: "json", title: "JSON output", summary: summary, structure: structure, notable: notable}, true
}

// tryXML parses a whole XML document as DeerFlow's defusedxml does: entity
// declarations are refused, and encoding/xml never expands custom
// entities.
func tryXML(stripped string) (synopsis, bool) {
	if !strings.HasPrefix(stripped, "<") {
		return synopsis{}, false
	}
	dec := xml.NewDecoder(strings.NewReader(stripped))
	var root string
	attrs, depth, ended := 0, 0, false
	var tags []string
	counts := map[string]int{}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return synopsis{}, false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if ended {
				return synopsis{}, false // junk after the document element
			}
			switch depth {
			case 0:
				root, attrs = xmlTag(t.Name), xmlAttrCount(t.Attr)
			case 1:
				tag := xmlTag(t.Name)
				if counts[tag] == 0 {
					tags = append(tags, tag)
				}
				counts[tag]++
			}
			depth++
		case xml.EndElement:
			if depth--; depth == 0 {
				ended = true
			}
		case xml.CharData:
			if depth == 0 && strings.TrimSpace(string(t)) != "" {
				return synopsis{}, false
			}
		case xml.Directive:
			if strings.Contains(string(t), "ENTITY") {
				return synopsis{}, false
			}
		}
	}
	if !ended {
		return synopsis{}, false
	}
	slices.SortStableFunc(tags, func(a, b string) int { return counts[b] - counts[a] })
	structure := []string{"root tag: " + root, fmt.Sprintf("root attributes: %d", attrs)}
	for _, tag := range tags[:min(len(tags), synopsisKeyLimit)] {
		structure = append(structure, fmt.Sprintf("%s: %d", tag, counts[tag]))
	}
	return synopsis{kind: "xml", title: "XML output",
		summary: []string{fmt.Sprintf("XML document with root tag %s.", root)}, structure: structure}, true
}

// xmlTag is ElementTree's tag: {namespace}local.
func xmlTag(n xml.Name) string {
	if n.Space != "" {
		return "{" + n.Space + "}" + n.Local
	}
	return n.Local
}

// xmlAttrCount counts attributes as ElementTree does, without namespace
// declarations.
func xmlAttrCount(attrs []xml.Attr) int {
	n := 0
	for _, a := range attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		n++
	}
	return n
}

// tryTable is DeerFlow's _try_table: the first 50 lines parse as
// delimited rows, at least five data rows among the first ten have the
// header's width, and every header cell looks like an identifier (which
// refuses tab-indented shell output, ls -l listings and prose).
func tryTable(content string, delim rune, kind synopsisKind) (synopsis, bool) {
	lines := splitLines(content)
	r := csv.NewReader(strings.NewReader(strings.Join(lines[:min(len(lines), synopsisTableSampleRows)], "\n")))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = delim, true, -1
	records, err := r.ReadAll()
	if err != nil {
		return synopsis{}, false
	}
	var rows [][]string
	for _, row := range records {
		if slices.ContainsFunc(row, func(c string) bool { return pyStrip(c) != "" }) {
			rows = append(rows, row)
		}
	}
	if len(rows) < 2 || len(rows[0]) < 2 {
		return synopsis{}, false
	}
	width, consistent := len(rows[0]), 0
	for _, row := range rows[1:min(len(rows), 11)] {
		if len(row) == width {
			consistent++
		}
	}
	if consistent < synopsisTableMinRows {
		return synopsis{}, false
	}
	columns := make([]string, width)
	for i, cell := range rows[0] {
		if !tableHeader.MatchString(pyStrip(cell)) || strings.HasPrefix(cell, " ") || strings.HasPrefix(cell, "\t") {
			return synopsis{}, false
		}
		columns[i] = pyStrip(cell)
	}
	nonEmpty := 0
	for _, line := range lines {
		if pyStrip(line) != "" {
			nonEmpty++
		}
	}
	var pairs []string
	for i, cell := range rows[1][:min(len(rows[1]), width, synopsisColumnLimit)] {
		pairs = append(pairs, columns[i]+"="+pyClip(cell, 80))
	}
	first := strings.Join(pairs, " | ")
	if first == "" {
		first = "(none)"
	}
	label := strings.ToUpper(string(kind))
	return synopsis{kind: kind, title: label + " table output",
		summary: []string{fmt.Sprintf("%s table with %d data rows and %d columns.", label, max(0, nonEmpty-1), width)},
		structure: []string{"columns: " + strings.Join(columns[:min(width, synopsisColumnLimit)], ", "),
			"first data row: " + first}}, true
}

// looksYAML is DeerFlow's _looks_yaml: a document start marker, or (for
// text that does not look like code) three "key: value" lines among the
// first 80 whose keys are not bare upper-case log levels.
func looksYAML(content string) bool {
	if strings.HasPrefix(strings.TrimLeftFunc(content, pyIsSpace), "---") {
		return true
	}
	if looksCode(content) {
		return false
	}
	n := 0
	lines := splitLines(content)
	for _, line := range lines[:min(len(lines), 80)] {
		if !yamlKeyLine.MatchString(line) {
			continue
		}
		key, _, _ := strings.Cut(line, ":")
		if key = pyStrip(key); pyIsUpper(key) && !strings.Contains(key, "_") {
			continue
		}
		if n++; n >= 3 {
			return true
		}
	}
	return false
}

func tryYAML(content string) (synopsis, bool) {
	if !looksYAML(content) || charLen(content) > yamlMaxChars {
		return synopsis{}, false
	}
	dec := yaml.NewDecoder(strings.NewReader(content))
	var doc, extra yaml.Node
	if err := dec.Decode(&doc); err != nil || len(doc.Content) == 0 {
		return synopsis{}, false
	}
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return synopsis{}, false // safe_load takes a single document
	}
	root := yamlResolve(doc.Content[0])
	switch root.Kind {
	case yaml.MappingNode:
		n := len(root.Content) / 2
		strs := 0
		var keys, structure []string
		for i := 0; i+1 < len(root.Content); i += 2 {
			key, val := yamlKeyString(root.Content[i]), root.Content[i+1]
			keys = append(keys, key)
			if yamlIsStr(val) {
				strs++
			}
			if i/2 < synopsisKeyLimit {
				structure = append(structure, key+": "+yamlTypeName(val))
			}
		}
		if n > 0 && strs == n {
			return synopsis{}, false // log lines and tracebacks load as flat strings
		}
		return synopsis{kind: "yaml", title: "YAML output", structure: structure,
			summary: []string{fmt.Sprintf("YAML object with %d top-level keys.", n),
				"Top-level keys: " + strings.Join(keys[:min(len(keys), synopsisKeyLimit)], ", ")}}, true
	case yaml.SequenceNode:
		s := synopsis{kind: "yaml", title: "YAML output", summary: []string{fmt.Sprintf("YAML array with %d items.", len(root.Content))}}
		if len(root.Content) > 0 {
			s.structure = []string{"first item type: " + yamlTypeName(root.Content[0])}
		}
		return s, true
	}
	return synopsis{}, false
}

func yamlResolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	if n == nil {
		return &yaml.Node{}
	}
	return n
}

// yaml11Bool reports a plain scalar that YAML 1.1 (PyYAML) reads as a
// boolean and YAML 1.2 as a string.
func yaml11Bool(n *yaml.Node) (value, ok bool) {
	if n.Kind != yaml.ScalarNode || n.Style != 0 {
		return false, false
	}
	switch n.Value {
	case "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

func yamlIsStr(n *yaml.Node) bool {
	n = yamlResolve(n)
	_, b11 := yaml11Bool(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && !b11
}

func yamlTypeName(n *yaml.Node) string {
	n = yamlResolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "array"
	}
	if _, ok := yaml11Bool(n); ok {
		return "boolean"
	}
	switch n.ShortTag() {
	case "!!bool":
		return "boolean"
	case "!!int", "!!float":
		return "number"
	case "!!null":
		return "null"
	}
	return "string"
}

// yamlKeyString is Python's str() of a loaded mapping key.
func yamlKeyString(n *yaml.Node) string {
	n = yamlResolve(n)
	if b, ok := yaml11Bool(n); ok {
		return map[bool]string{true: "True", false: "False"}[b]
	}
	switch n.ShortTag() {
	case "!!bool":
		return map[bool]string{true: "True", false: "False"}[strings.EqualFold(n.Value, "true")]
	case "!!null":
		return "None"
	}
	return n.Value
}
