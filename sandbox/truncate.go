package sandbox

import (
	"fmt"
	"unicode/utf8"
)

// The truncation helpers count characters (runes), as DeerFlow counts
// Python str characters. Each result, marker included, is never longer
// than max; max 0 disables truncation.

// truncateMiddle keeps equal head and tail around a
// "\n... [{label}: {n} chars skipped] ...\n" marker (label "middle
// truncated" for bash output).
func truncateMiddle(s string, max int, label string) string {
	if max <= 0 {
		return s
	}
	total := utf8.RuneCountInString(s)
	if total <= max {
		return s
	}
	markerMax := len(fmt.Sprintf("\n... [%s: %d chars skipped] ...\n", label, total))
	kept := max - markerMax
	r := []rune(s)
	if kept <= 0 {
		return string(r[:max])
	}
	head := kept / 2
	tail := kept - head
	marker := fmt.Sprintf("\n... [%s: %d chars skipped] ...\n", label, total-kept)
	return string(r[:head]) + marker + string(r[total-tail:])
}

// truncateHead keeps the head of s and appends
// "\n... [truncated: showing first {k} of {t} chars. {hint}] ...".
func truncateHead(s string, max int, hint string) string {
	if max <= 0 {
		return s
	}
	return truncateHeadOf(s, utf8.RuneCountInString(s), max, hint)
}

// truncateHeadOf is truncateHead for a text of total characters of
// which only the head is at hand: head holds at least the first max
// characters when total > max, and the whole text otherwise.
func truncateHeadOf(head string, total, max int, hint string) string {
	if max <= 0 || total <= max {
		return head
	}
	markerMax := utf8.RuneCountInString(fmt.Sprintf("\n... [truncated: showing first %d of %d chars. %s] ...", total, total, hint))
	kept := max - markerMax
	if kept <= 0 {
		return runePrefix(head, max)
	}
	return runePrefix(head, kept) + fmt.Sprintf("\n... [truncated: showing first %d of %d chars. %s] ...", kept, total, hint)
}

// runePrefix returns the first n characters of s (all of s when
// shorter), each invalid byte counted as one character and written as
// U+FFFD, as string([]rune(s)[:n]) does.
func runePrefix(s string, n int) string {
	p := s
	for i := range s {
		if n == 0 {
			p = s[:i]
			break
		}
		n--
	}
	if !utf8.ValidString(p) {
		return string([]rune(p))
	}
	return p
}

// The hints of the head-truncation markers.
const (
	readFileHint = "Use start_line/end_line to read a specific range"
	lsHint       = "Use a more specific path to see fewer results"
)
