package search

import (
	"sort"
	"strings"
)

// sortedLines is a text of "key rest" lines, one line per key, sorted by
// key (bytewise), every line with a space after its key, after a header
// of "#" comment lines, with the start offset of each line for binary
// search. Built once per data file, it is immutable and safe for
// concurrent use. (TestDataFilesAreSortedAndWellFormed checks the
// embedded files' shape.)
type sortedLines struct {
	text   string  // the data lines, header removed
	starts []int32 // by line: its start offset in text
}

func newSortedLines(text string) *sortedLines {
	for strings.HasPrefix(text, "#") {
		_, text, _ = strings.Cut(text, "\n")
	}
	s := &sortedLines{text: text, starts: make([]int32, 0, strings.Count(text, "\n")+1)}
	for off := 0; off < len(text); {
		s.starts = append(s.starts, int32(off))
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return s
}

// line returns line i and its key.
func (s *sortedLines) line(i int) (key, rest string) {
	l := s.text[s.starts[i]:]
	if j := strings.IndexByte(l, '\n'); j >= 0 {
		l = l[:j]
	}
	key, rest, _ = strings.Cut(l, " ")
	return key, rest
}

// keyAt returns the key of line i.
func (s *sortedLines) keyAt(i int) string {
	l := s.text[s.starts[i]:]
	if j := strings.IndexByte(l, ' '); j >= 0 {
		l = l[:j]
	}
	return l
}

// search returns the first line whose key is not less than key.
func (s *sortedLines) search(key string) int {
	return sort.Search(len(s.starts), func(i int) bool { return s.keyAt(i) >= key })
}

// find returns the rest of key's line (after the first space), and
// whether there is such a line.
func (s *sortedLines) find(key string) (string, bool) {
	if i := s.search(key); i < len(s.starts) {
		if k, rest := s.line(i); k == key {
			return rest, true
		}
	}
	return "", false
}

// longestPrefix returns the line with the longest key that starts with
// prefix and is itself a prefix of text (text starts with prefix).
func (s *sortedLines) longestPrefix(prefix, text string) (key, rest string, ok bool) {
	for i := s.search(prefix); i < len(s.starts); i++ {
		k, r := s.line(i)
		if !strings.HasPrefix(k, prefix) {
			break
		}
		if len(k) > len(key) && strings.HasPrefix(text, k) {
			key, rest, ok = k, r, true
		}
	}
	return key, rest, ok
}
