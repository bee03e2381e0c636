package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"syscall"
	"unicode/utf8"
)

// The bounds of one grep call. Files are read line by line through a
// 64 KiB buffer, so memory is the buffer plus one line of at most
// grepMaxLineBytes, whatever the file sizes. Go's regular expressions
// run in time linear in the text, so long lines need no cap against
// catastrophic patterns (DeerFlow skips lines over 2,000 characters for
// that reason); the caps bound the work of one call instead. A file or
// line not searched in full is reported with the reason, never hidden
// behind "No matches found".
const (
	// grepMaxFileBytes is the largest file grep searches; a larger one is
	// reported as not searched.
	grepMaxFileBytes = 64 << 20
	// grepMaxCallBytes is the most one call reads over all its files; a
	// file that would pass it is reported as not searched.
	grepMaxCallBytes = 256 << 20
	// grepMaxLineBytes is the longest line matched in full; a longer
	// line is matched on its first grepMaxLineBytes bytes, and its file
	// is reported as partly searched unless the line matched.
	grepMaxLineBytes = 1 << 20
	// grepReadBuffer is the read buffer of one call.
	grepReadBuffer = 64 << 10
	// grepMaxSkipsListed bounds the files listed as not fully searched;
	// the rest are counted.
	grepMaxSkipsListed = 20
	// grepCtxEvery is how many lines are matched between checks of the
	// call's context.
	grepCtxEvery = 4096
)

// grepSkip is a file grep did not search in full, and why.
type grepSkip struct {
	virtual, reason string
}

// grepSearch is the state of one grep call over its files.
type grepSearch struct {
	re        *regexp.Regexp
	limit     int
	matches   []grepMatch
	truncated bool
	skipped   []grepSkip // the first grepMaxSkipsListed
	nSkipped  int
	budget    int64 // bytes the call may still read
	br        *bufio.Reader
	line      []byte // the current long line, at most grepMaxLineBytes
}

func newGrepSearch(re *regexp.Regexp, limit int) *grepSearch {
	return &grepSearch{re: re, limit: limit, budget: grepMaxCallBytes, br: bufio.NewReaderSize(nil, grepReadBuffer)}
}

func (g *grepSearch) skip(virtual, reason string) {
	g.nSkipped++
	if len(g.skipped) < grepMaxSkipsListed {
		g.skipped = append(g.skipped, grepSkip{virtual, reason})
	}
}

// file searches the file name of r. explicit is set when the file is the
// call's path itself: a binary file is then reported too. It returns
// true when the result limit was passed, and an error only for a
// cancelled ctx.
func (g *grepSearch) file(ctx context.Context, r *os.Root, name, virtual string, explicit bool) (bool, error) {
	// O_NONBLOCK: a file swapped for a FIFO since it was listed must not
	// block the open; it does nothing to a regular file.
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			g.skip(virtual, readFailure(err))
		}
		return false, nil
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		g.skip(virtual, readFailure(err))
		return false, nil
	case !st.Mode().IsRegular():
		return false, nil
	case st.Size() > grepMaxFileBytes:
		g.skip(virtual, fmt.Sprintf("not searched: larger than %d MiB, the most grep searches in one file", grepMaxFileBytes>>20))
		return false, nil
	case st.Size() > g.budget:
		g.skip(virtual, fmt.Sprintf("not searched: it would take this call past %d MiB read, the most one call searches", grepMaxCallBytes>>20))
		return false, nil
	}
	// A file that grows while it is read is searched up to the bounds.
	lr := &countingReader{r: io.LimitReader(f, min(g.budget, grepMaxFileBytes))}
	defer func() { g.budget -= lr.n }()
	g.br.Reset(lr)
	if head, _ := g.br.Peek(binarySniffBytes); bytes.IndexByte(head, 0) >= 0 {
		if explicit {
			g.skip(virtual, "not searched: a binary file (a NUL byte in its first 8 KiB)")
		}
		return false, nil
	}
	partial := false
	for n := 1; ; n++ {
		if n%grepCtxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		line, cut, err := g.nextLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			g.skip(virtual, readFailure(err))
			return false, nil
		}
		if !g.re.Match(line) {
			partial = partial || cut
			continue
		}
		if len(g.matches) == g.limit {
			g.truncated = true
			return true, nil
		}
		g.matches = append(g.matches, grepMatch{virtual: virtual, line: n, text: summarizeLine(line)})
	}
	if partial {
		g.skip(virtual, fmt.Sprintf("partly searched: lines longer than %d MiB were searched in their first %d MiB only", grepMaxLineBytes>>20, grepMaxLineBytes>>20))
	}
	return false, nil
}

// nextLine returns the next line without its "\n" (and a "\r" before
// it), cut to grepMaxLineBytes (cut reports it), or io.EOF after the
// last line. The line is valid until the next call.
func (g *grepSearch) nextLine() (line []byte, cut bool, err error) {
	frag, err := g.br.ReadSlice('\n')
	if err == nil { // the whole line is in the buffer
		return trimEOL(frag), false, nil
	}
	if err == io.EOF && len(frag) == 0 {
		return nil, false, io.EOF
	}
	g.line = g.line[:0]
	for {
		if err == nil {
			frag = frag[:len(frag)-1] // the "\n"
		}
		room := grepMaxLineBytes - len(g.line)
		if len(frag) > room {
			cut = true
		}
		g.line = append(g.line, frag[:min(room, len(frag))]...)
		switch {
		case err == nil || err == io.EOF:
			if cut {
				return g.line, true, nil
			}
			return bytes.TrimSuffix(g.line, []byte("\r")), false, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, false, err
		}
		frag, err = g.br.ReadSlice('\n')
	}
}

func trimEOL(line []byte) []byte {
	line = line[:len(line)-1]
	return bytes.TrimSuffix(line, []byte("\r"))
}

// readFailure is the reason given for a file that could not be read.
func readFailure(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "not searched: it could not be read (" + errno.Error() + ")"
	}
	return "not searched: it could not be read"
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// report formats the call's result for root, the path as given.
func (g *grepSearch) report(root string) string {
	var b strings.Builder
	if len(g.matches) == 0 {
		if g.nSkipped == 0 {
			return "No matches found under " + root
		}
		fmt.Fprintf(&b, "No matches under %s in the files searched, but %s", root, g.skipHeading())
	} else {
		fmt.Fprintf(&b, "Found %d matches under %s", len(g.matches), root)
		if g.truncated {
			fmt.Fprintf(&b, " (showing first %d)", len(g.matches))
		}
		for _, m := range g.matches {
			fmt.Fprintf(&b, "\n%s:%d: %s", m.virtual, m.line, m.text)
		}
		if g.truncated {
			b.WriteString("\nResults truncated. Narrow the path or add a glob filter.")
		}
		if g.nSkipped > 0 {
			b.WriteString("\n" + g.skipHeading())
		}
	}
	for _, s := range g.skipped {
		fmt.Fprintf(&b, "\n%s: %s", s.virtual, s.reason)
	}
	if more := g.nSkipped - len(g.skipped); more > 0 {
		fmt.Fprintf(&b, "\n... and %d more", more)
	}
	return b.String()
}

func (g *grepSearch) skipHeading() string {
	if g.nSkipped == 1 {
		return "1 file was not fully searched:"
	}
	return fmt.Sprintf("%d files were not fully searched:", g.nSkipped)
}

// summarizeLine returns a line as shown in results: each run of invalid
// UTF-8 replaced by U+FFFD, cut to 200 characters with "...". Only the
// head of the line is decoded.
func summarizeLine(line []byte) string {
	var b strings.Builder
	n := 0
	invalid := false
	for i := 0; i < len(line) && n <= grepLineChars; {
		r, size := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && size == 1 {
			if !invalid {
				b.WriteRune(utf8.RuneError)
				n++
			}
			invalid = true
			i++
			continue
		}
		invalid = false
		b.Write(line[i : i+size])
		n++
		i += size
	}
	if n <= grepLineChars {
		return b.String()
	}
	return runePrefix(b.String(), grepLineChars-3) + "..."
}
