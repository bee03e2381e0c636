package builtin

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Limits of an upload's outline: DeerFlow's 50 headings and 5 preview
// lines, and Antler's bounds on what is read of the Markdown file (its
// first 4 MiB, lines of at most 64 KiB).
const (
	outlineMaxEntries   = 50
	outlinePreviewLines = 5
	outlineMaxBytes     = 4 << 20
	outlineMaxLine      = 64 << 10
)

// outlineEntry is one heading of an outline and its 1-based line, or the
// last entry saying the outline stopped at outlineMaxEntries.
type outlineEntry struct {
	Title     string `json:"title,omitempty"`
	Line      int    `json:"line,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// The heading styles of Markdown converted from PDFs, as DeerFlow's
// file_outline.py reads them: a bold line naming a structural part
// (**ITEM 1. BUSINESS**), and a bold section number followed by one to
// three bold title blocks (**3.2** **Attention**). The second block must
// not be a number alone (table headers such as **2023** **2022**), which
// isNumericBlock checks, RE2 having no lookahead.
var (
	boldHeadingRE      = regexp.MustCompile(`^\*\*((?:ITEM|PART|SECTION|SCHEDULE|EXHIBIT|APPENDIX|ANNEX|CHAPTER)\b[A-Z0-9 .,\-]*)\*\*\s*$`)
	splitBoldHeadingRE = regexp.MustCompile(`^\*\*[\dA-Z][\d.]*\*\*\s+\*\*([^*]+)\*\*(?:\s+\*\*[^*]+\*\*){0,2}\s*$`)
	numericBlockRE     = regexp.MustCompile(`^\d[\d\s.,\-–—/:()%]*$`)
	boldBlockRE        = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	adjacentBoldRE     = regexp.MustCompile(`\*\*\s*\*\*`)
	wrappedBoldRE      = regexp.MustCompile(`(?s)^\*\*(.+?)\*\*$`)
)

// fileOutline returns the outline of the upload name in dir, read from
// its Markdown form (the file of its stem with .md, the file itself for
// a .md upload), with titles neutralised; without headings, the first
// non-empty lines instead. Both are empty without a Markdown form.
func fileOutline(dir, name string, neutralize func(string) string) ([]outlineEntry, []string) {
	md := strings.TrimSuffix(name, filepath.Ext(name)) + ".md"
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil
	}
	defer root.Close()
	if fi, err := root.Lstat(md); err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	f, err := root.Open(md)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	outline, preview := readOutline(io.LimitReader(f, outlineMaxBytes))
	for i := range outline {
		outline[i].Title = neutralize(outline[i].Title)
	}
	for i := range preview {
		preview[i] = neutralize(preview[i])
	}
	return outline, preview
}

// readOutline reads the headings of Markdown text, and its first
// non-empty lines when it has none. A line longer than outlineMaxLine
// ends the reading there.
func readOutline(r io.Reader) ([]outlineEntry, []string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), outlineMaxLine)
	var outline []outlineEntry
	var preview []string
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if len(preview) < outlinePreviewLines {
			preview = append(preview, s)
		}
		title := headingTitle(s)
		if title == "" {
			continue
		}
		if len(outline) == outlineMaxEntries {
			outline = append(outline, outlineEntry{Truncated: true})
			break
		}
		outline = append(outline, outlineEntry{Title: title, Line: line})
	}
	if len(outline) > 0 {
		return outline, nil
	}
	return nil, preview
}

// headingTitle is the plain title of a heading line (trimmed), or "".
func headingTitle(s string) string {
	switch {
	case strings.HasPrefix(s, "#"):
		return cleanBoldTitle(strings.TrimSpace(strings.TrimLeft(s, "#")))
	case boldHeadingRE.MatchString(s):
		return strings.TrimSpace(boldHeadingRE.FindStringSubmatch(s)[1])
	case splitBoldHeadingRE.MatchString(s):
		if numericBlockRE.MatchString(splitBoldHeadingRE.FindStringSubmatch(s)[1]) {
			return ""
		}
		var parts []string
		for _, m := range boldBlockRE.FindAllStringSubmatch(s, -1) {
			parts = append(parts, m[1])
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// cleanBoldTitle merges adjacent bold spans (**A** **B**) and drops a
// bold wrapper around the whole title.
func cleanBoldTitle(raw string) string {
	merged := strings.TrimSpace(adjacentBoldRE.ReplaceAllString(raw, " "))
	if m := wrappedBoldRE.FindStringSubmatch(merged); m != nil {
		return strings.TrimSpace(m[1])
	}
	return merged
}
