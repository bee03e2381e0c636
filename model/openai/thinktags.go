package openai

import (
	"regexp"
	"slices"
	"strings"
)

// thinkBlock matches one inline reasoning block as MiniMax's models write
// it into the content when reasoning is not split out.
var thinkBlock = regexp.MustCompile(`(?s)<think>\s*(.*?)\s*</think>`)

// splitThinkTags removes the <think> blocks from content and merges
// their text into reasoning: pieces are trimmed, a piece already present
// is not repeated, and pieces are joined by a blank line. Content
// without a block is returned unchanged.
func splitThinkTags(content, reasoning string) (string, string) {
	if !strings.Contains(content, "<think>") {
		return content, reasoning
	}
	var inline []string
	cleaned := thinkBlock.ReplaceAllStringFunc(content, func(block string) string {
		if t := strings.TrimSpace(thinkBlock.FindStringSubmatch(block)[1]); t != "" {
			inline = append(inline, t)
		}
		return ""
	})
	if cleaned == content {
		return content, reasoning // an unclosed <think>
	}
	var merged []string
	for _, piece := range append([]string{reasoning}, inline...) {
		piece = strings.TrimSpace(piece)
		if piece != "" && !slices.Contains(merged, piece) {
			merged = append(merged, piece)
		}
	}
	return strings.TrimSpace(cleaned), strings.Join(merged, "\n\n")
}
