package agent

import (
	"fmt"
	"regexp"
	"strings"
)

// This file is DeerFlow's tool_output_synopsis.py: a deterministic,
// typed summary of an oversized tool output (JSON, XML, CSV/TSV, YAML,
// code, text, binary-looking), rendered with a file reference as the text
// the model reads instead of the output. The detectors of the structured
// kinds are in tool_output_formats.go.

// Synopsis limits, DeerFlow's.
const (
	synopsisKeyLimit        = 12  // object keys listed
	synopsisScalarLimit     = 6   // scalar examples of a JSON value
	synopsisTableSampleRows = 50  // lines parsed to detect a table
	synopsisColumnLimit     = 18  // columns listed
	synopsisTableMinRows    = 5   // same-width data rows a table needs
	synopsisHeaderLimit     = 16  // section headers of a text listed
	synopsisExcerptChars    = 420 // opening and closing excerpts of a text
	synopsisImportLimit     = 12  // imports of code listed
	synopsisSymbolLimit     = 24  // symbols of code listed
	jsonShapeMaxDepth       = 2   // depth of the "shape:" line
	jsonStructureLimit      = 24  // container paths listed
	jsonStructureDepth      = 4   // depth of container paths and scalar examples
	// jsonMaxNesting is the nesting past which a text is not taken for
	// JSON (Python's json module fails near its recursion limit).
	jsonMaxNesting = 1000
	// yamlMaxChars bounds the YAML parse (alias bombs).
	yamlMaxChars = 500_000
	// MaxSynopsisInputBytes is the size (UTF-8 bytes) past which an
	// output is not parsed: its synopsis is a raw head and tail sample.
	MaxSynopsisInputBytes = 5_000_000
)

// synopsisKind is the kind of an output: json, csv, tsv, yaml, xml,
// code, text or unknown.
type synopsisKind string

// synopsis is DeerFlow's ToolOutputSynopsis.
type synopsis struct {
	kind      synopsisKind
	title     string
	summary   []string
	structure []string
	notable   []string
	sample    string // a raw sample the synopsis brings itself (binary, oversized)
}

var (
	codeHints = []*regexp.Regexp{
		regexp.MustCompile(`(?m)^[` + pyWS + `]*(?:from[` + pyWS + `]+[^` + pyWS + `]+[` + pyWS + `]+import|import[` + pyWS + `]+[^` + pyWS + `]+)`),
		regexp.MustCompile(`(?m)^[` + pyWS + `]*(?:class|def|async[` + pyWS + `]+def|function|export[` + pyWS + `]+function)[` + pyWS + `]+[A-Za-z_][` + pyWord + `]*`),
		regexp.MustCompile(`(?m)^[` + pyWS + `]*(?:package[` + pyWS + `]+[A-Za-z_][` + pyWord + `.]*|use[` + pyWS + `]+[A-Za-z_][` + pyWord + `:]*[` + pyWS + `]*;|pub[` + pyWS + `]+fn[` + pyWS + `]+[A-Za-z_][` + pyWord + `]*[` + pyWS + `]*\(|fn[` + pyWS + `]+[A-Za-z_][` + pyWord + `]*[` + pyWS + `]*\(|public[` + pyWS + `]+class[` + pyWS + `]+[A-Za-z_][` + pyWord + `]*)`),
	}
	codeImport   = regexp.MustCompile(`^(?:from[` + pyWS + `]+([^` + pyWS + `]+)[` + pyWS + `]+import|import[` + pyWS + `]+([^` + pyWS + `]+))`)
	codeSymbol   = regexp.MustCompile(`^(class|def|async[` + pyWS + `]+def|function|export[` + pyWS + `]+function|pub[` + pyWS + `]+fn|fn)[` + pyWS + `]+([A-Za-z_][` + pyWord + `]*)`)
	mdHeader     = regexp.MustCompile(`^#{1,6}[` + pyWS + `]+`)
	capsHeader   = regexp.MustCompile(`^[A-Z0-9][A-Z0-9` + pyWS + `:_-]{6,}$`)
	tableHeader  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-]*$`)
	yamlKeyLine  = regexp.MustCompile(`^[` + pyWS + `]*[A-Za-z_][A-Za-z0-9_.\-]*:[` + pyWS + `]*[^` + pyWS + `].*$`)
	jsonPathWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\n?$`)
)

// buildSynopsis is DeerFlow's build_tool_output_synopsis.
func buildSynopsis(content, toolName string) synopsis {
	if content == "" {
		return synopsis{kind: "unknown", title: "Empty output", summary: []string{"The tool returned an empty string."}}
	}
	if len(content) > MaxSynopsisInputBytes {
		n := charLen(content)
		return synopsis{kind: "unknown", title: "Oversized output",
			summary: []string{fmt.Sprintf("The output has %d characters (%.1f MB). Parsing skipped due to size limit.",
				n, float64(len(content))/1024/1024)},
			sample: headTailSample(content, synopsisExcerptChars*2)}
	}
	if looksBinary(content) {
		return synopsis{kind: "unknown", title: "Binary-like output",
			summary: []string{fmt.Sprintf("The output has %d characters and includes non-text control bytes.", charLen(content))},
			sample:  headTailSample(content, synopsisExcerptChars*2)}
	}
	if s, ok := tryJSON(content); ok {
		return s
	}
	if s, ok := tryXML(pyStrip(content)); ok {
		return s
	}
	if strings.Contains(content, "\t") {
		if s, ok := tryTable(content, '\t', "tsv"); ok {
			return s
		}
	}
	if strings.Contains(content, ",") {
		if s, ok := tryTable(content, ',', "csv"); ok {
			return s
		}
	}
	if s, ok := tryYAML(content); ok {
		return s
	}
	if looksCode(content) {
		return summarizeCode(content)
	}
	return summarizeText(content, toolName, true)
}

// renderPreview is DeerFlow's render_tool_output_preview: the text that
// replaces an output saved to virtualPath.
func renderPreview(content, toolName, virtualPath string, headChars, tailChars int) string {
	total := charLen(content)
	syn := buildSynopsis(content, toolName)
	head, tail := max(0, headChars), max(0, tailChars)
	// A raw sample follows: the text summary leaves out its excerpts.
	if syn.kind == "text" && head+tail > 0 && total > head+tail {
		syn = summarizeText(content, toolName, false)
	}
	lines := []string{
		fmt.Sprintf("[Full %s output saved to %s (%d chars, ~%d tokens).]", toolName, virtualPath, total, total/4),
		fmt.Sprintf("[Preview kind: %s. This is a structured synopsis, not a raw head/tail truncation.]", syn.kind),
		"",
		syn.title + ":",
	}
	lines = appendItems(lines, syn.summary)
	if len(syn.structure) > 0 {
		lines = append(lines, "", "Structure:")
		lines = appendItems(lines, syn.structure)
	}
	if len(syn.notable) > 0 {
		lines = append(lines, "", "Notable items:")
		lines = appendItems(lines, syn.notable)
	}
	if raw := rawSample(content, total, head, tail, syn.sample); raw != "" {
		lines = append(lines, "", "Raw sample (head + tail, clipped to head_chars / tail_chars):", raw)
	}
	lines = append(lines, "", "Access:",
		fmt.Sprintf("- Use read_file on %s with start_line and end_line to inspect the raw output.", virtualPath))
	return strings.Join(lines, "\n")
}

func appendItems(lines, items []string) []string {
	for _, it := range items {
		lines = append(lines, "- "+it)
	}
	return lines
}

// rawSample is DeerFlow's _build_raw_sample: the synopsis's own sample,
// or the first head and last tail characters, each cut at a line break
// inside it, joined by "\n...\n".
func rawSample(content string, total, head, tail int, existing string) string {
	if existing != "" {
		return existing
	}
	if head <= 0 && tail <= 0 {
		return ""
	}
	if total <= head+tail {
		return content
	}
	var parts []string
	if head > 0 {
		h := charPrefix(content, head)
		if i := strings.LastIndexByte(h, '\n'); i > 0 {
			h = h[:i]
		}
		parts = append(parts, h)
	}
	if tail > 0 {
		t := charSuffix(content, tail)
		if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)-1 {
			t = t[i+1:]
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "\n...\n")
}

// headTailSample is DeerFlow's _head_tail_sample: limit/2 characters
// from each end.
func headTailSample(content string, limit int) string {
	if limit <= 0 {
		return ""
	}
	if charLen(content) <= limit {
		return content
	}
	half := max(1, limit/2)
	return charPrefix(content, half) + "\n...\n" + charSuffix(content, half)
}

// looksBinary is DeerFlow's _looks_binary: a NUL anywhere, or more than
// 5% control characters (other than \n, \r, \t) in the first 1000.
func looksBinary(content string) bool {
	if strings.IndexByte(content, 0) >= 0 {
		return true
	}
	sample := charPrefix(content, 1000)
	controls, n := 0, 0
	for _, r := range sample {
		n++
		if r < 32 && r != '\n' && r != '\r' && r != '\t' {
			controls++
		}
	}
	return float64(controls)/float64(max(1, n)) > 0.05
}

func looksCode(content string) bool {
	for _, re := range codeHints {
		if re.MatchString(content) {
			return true
		}
	}
	return false
}

// summarizeCode is DeerFlow's _summarize_code: line count, imports and
// the class/def/function/fn symbols.
func summarizeCode(content string) synopsis {
	lines := splitLines(content)
	var imports, symbols []string
	for _, line := range lines {
		s := pyStrip(line)
		if m := codeImport.FindStringSubmatch(s); m != nil {
			imports = append(imports, oneLine(m[1]+m[2], 160))
			continue
		}
		if m := codeSymbol.FindStringSubmatch(s); m != nil {
			symbols = append(symbols, oneLine(m[1]+" "+m[2], 180))
		}
	}
	structure := []string{fmt.Sprintf("line count: %d", len(lines))}
	if len(imports) > 0 {
		structure = append(structure, "imports: "+strings.Join(imports[:min(len(imports), synopsisImportLimit)], ", "))
	}
	return synopsis{kind: "code", title: "Code-like output",
		summary:   []string{fmt.Sprintf("Code-like text with %d lines.", len(lines))},
		structure: structure, notable: symbols[:min(len(symbols), synopsisSymbolLimit)]}
}

// summarizeText is DeerFlow's _summarize_text: counts, section headers
// (Markdown or upper-case lines), and, with excerpts, the opening and
// closing 420 characters.
func summarizeText(content, toolName string, excerpts bool) synopsis {
	lines := splitLines(content)
	var headers []string
	seen := map[string]bool{}
	for _, line := range lines {
		s := pyStrip(line)
		if s == "" || !(mdHeader.MatchString(s) || capsHeader.MatchString(s)) {
			continue
		}
		h := oneLine(s, 160)
		if seen[h] {
			continue
		}
		seen[h] = true
		if headers = append(headers, h); len(headers) >= synopsisHeaderLimit {
			break
		}
	}
	hint := ""
	if toolName != "" {
		hint = " from " + toolName
	}
	detected := "none detected"
	if len(headers) > 0 {
		detected = strings.Join(headers, " | ")
	}
	total := charLen(content)
	summary := []string{
		fmt.Sprintf("Text output%s with %d characters, %d words, and %d lines.", hint, total, wordCount(content), len(lines)),
		fmt.Sprintf("Detected section headers: %s.", detected),
	}
	if excerpts {
		opener := oneLine(charPrefix(content, synopsisExcerptChars), synopsisExcerptChars)
		if opener == "" {
			opener = "(empty)"
		}
		summary = append(summary, "Opening excerpt: "+opener)
		if total > synopsisExcerptChars {
			start := max(synopsisExcerptChars, total-synopsisExcerptChars)
			if closer := oneLine(charSlice(content, start, total), synopsisExcerptChars); closer != "" {
				summary = append(summary, "Closing excerpt: "+closer)
			}
		}
	}
	return synopsis{kind: "text", title: "Text output", summary: summary}
}
