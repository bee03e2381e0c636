package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math/bits"
	"unicode/utf8"
)

// The bounds of [scanText]. Memory is scanChunk plus the characters kept
// of the selected text (the read_file output cap), whatever the file
// size; only an agent-written file whose paths are masked also buffers
// one line, up to maskLineMax bytes.
const (
	// scanChunk is the size of one read from the file.
	scanChunk = 64 << 10
	// binarySniffBytes is how much of the head of a file is checked for
	// a NUL byte, the mark of a binary file.
	binarySniffBytes = 8192
	// maskLineMax bounds the line buffer used to mask host paths: a
	// longer line is masked in pieces of this size, so that a host path
	// across a piece boundary stays as it is.
	maskLineMax = 256 << 10
)

// scanOptions select what [scanText] keeps of a file's text.
type scanOptions struct {
	// ranged selects lines start..end (1-based, inclusive; end 0 = to the
	// last line) joined by "\n" without a trailing newline. Unranged
	// selects the whole text, newlines included.
	ranged     bool
	start, end int
	// keep is the number of characters of the selected text kept in
	// textScan.head; <= 0 keeps all of it.
	keep int
	// collect turns on the selection; off, only the hash, the binary
	// check and the line count are computed.
	collect bool
	// mask rewrites one line of selected text (host paths to virtual
	// ones); nil leaves the text as it is.
	mask func(string) string
}

// textScan is what one pass over a file found.
type textScan struct {
	sum    string // hex sha256 of the raw bytes (contentHash of the whole file)
	binary bool   // a NUL in the first 8 KiB, or invalid UTF-8 anywhere
	lines  int    // lines of the text: line ends, plus one for text after the last
	head   string // the first keep characters of the selected text
	total  int    // characters of the selected text
}

// scanText reads r once, to its end, in scanChunk pieces, and returns its
// hash, whether it is binary, and the selection of opts. Newlines are
// normalised as normalizeNewlines does. It stops early, with binary set
// and no hash, at the first sign of a binary file. Only read errors are
// returned.
func scanText(r io.Reader, opts scanOptions) (textScan, error) {
	var res textScan
	h := sha256.New()
	s := &lineSelector{opts: opts, line: 1, out: headCollector{keep: opts.keep}}
	buf := make([]byte, scanChunk+utf8.UTFMax)
	carry := 0 // bytes of an incomplete character held over from the last read
	var off int64
	for {
		n, err := r.Read(buf[carry : carry+scanChunk])
		if n > 0 {
			fresh := buf[carry : carry+n]
			h.Write(fresh)
			if off < binarySniffBytes && bytes.IndexByte(fresh[:min(int64(n), binarySniffBytes-off)], 0) >= 0 {
				res.binary = true
				return res, nil
			}
			off += int64(n)
			data := buf[:carry+n]
			cut := incompleteTail(data)
			if !utf8.Valid(data[:cut]) {
				res.binary = true
				return res, nil
			}
			s.feed(data[:cut])
			carry = copy(buf, data[cut:])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
	}
	if carry > 0 { // the file ends inside a character
		res.binary = true
		return res, nil
	}
	s.finish()
	res.sum = hex.EncodeToString(h.Sum(nil))
	res.lines = s.eols
	if s.partial {
		res.lines++
	}
	res.head, res.total = string(s.out.head), s.out.total
	return res, nil
}

// incompleteTail returns where a character cut off by the end of data
// begins, or len(data) when data does not end inside one.
func incompleteTail(data []byte) int {
	for i := len(data) - 1; i >= 0 && i >= len(data)-(utf8.UTFMax-1); i-- {
		if !utf8.RuneStart(data[i]) {
			continue
		}
		if !utf8.FullRune(data[i:]) {
			return i
		}
		break
	}
	return len(data)
}

// lineSelector splits normalised text into lines and passes the
// selected text to its collector. Its input pieces never split a
// character (scanText cuts them on character boundaries).
type lineSelector struct {
	opts    scanOptions
	line    int  // number of the current line
	open    bool // the current line is selected and was started
	emitted int  // lines selected so far (ranged)
	prevCR  bool // the last byte fed was '\r' (a following '\n' is part of it)
	eols    int  // line ends seen
	partial bool // text after the last line end
	pending []byte
	out     headCollector
}

// feed passes p, a piece of the file, through.
func (s *lineSelector) feed(p []byte) {
	if len(p) == 0 {
		return
	}
	if s.prevCR {
		s.prevCR = false
		if p[0] == '\n' {
			p = p[1:]
		}
	}
	if len(p) == 0 {
		return
	}
	if !bytes.ContainsRune(p, '\r') && s.fastPath() {
		s.eols += bytes.Count(p, []byte{'\n'})
		s.partial = p[len(p)-1] != '\n'
		if s.opts.collect && !s.opts.ranged {
			s.out.total += countChars(p)
		}
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		lim := i
		if i < 0 {
			lim = len(p)
		}
		if j := bytes.IndexByte(p[:lim], '\r'); j >= 0 {
			i = j
		}
		if i < 0 {
			s.text(p)
			return
		}
		if i > 0 {
			s.text(p[:i])
		}
		s.eol()
		if p[i] == '\r' {
			if i+1 < len(p) && p[i+1] == '\n' {
				i++
			} else if i+1 == len(p) {
				s.prevCR = true
			}
		}
		p = p[i+1:]
	}
}

// fastPath reports whether nothing more is selected line by line: the
// selection is off, past its last line, or a whole text already full
// and unmasked (so that only its characters are still counted).
func (s *lineSelector) fastPath() bool {
	switch {
	case !s.opts.collect:
		return true
	case s.opts.ranged:
		return s.opts.end > 0 && s.line > s.opts.end
	}
	return s.out.full && s.opts.mask == nil
}

// selected reports whether the current line is in the selection.
func (s *lineSelector) selected() bool {
	if !s.opts.collect {
		return false
	}
	if !s.opts.ranged {
		return true
	}
	return s.line >= s.opts.start && (s.opts.end <= 0 || s.line <= s.opts.end)
}

// begin starts the current selected line: the "\n" that joins it to the
// previous one in a ranged selection.
func (s *lineSelector) begin() {
	if s.open {
		return
	}
	s.open = true
	if s.opts.ranged {
		if s.emitted > 0 {
			s.out.write([]byte{'\n'})
		}
		s.emitted++
	}
}

// text takes a piece of the current line, without line ends.
func (s *lineSelector) text(b []byte) {
	s.partial = true
	if !s.selected() {
		return
	}
	s.begin()
	if s.opts.mask == nil {
		s.out.write(b)
		return
	}
	for len(b) > 0 {
		room := maskLineMax - len(s.pending)
		if room <= 0 {
			s.flush()
			continue
		}
		take := min(room, len(b))
		// Never split a character between two masked pieces.
		for take < len(b) && take > 0 && !utf8.RuneStart(b[take]) {
			take--
		}
		if take == 0 {
			s.flush()
			take = min(room, len(b))
		}
		s.pending = append(s.pending, b[:take]...)
		b = b[take:]
	}
}

// flush masks and passes on the buffered piece of the current line.
func (s *lineSelector) flush() {
	if len(s.pending) > 0 {
		s.out.write([]byte(s.opts.mask(string(s.pending))))
		s.pending = s.pending[:0]
	}
}

// eol ends the current line.
func (s *lineSelector) eol() {
	s.eols++
	s.partial = false
	if s.selected() {
		s.begin()
		s.flush()
		if !s.opts.ranged {
			s.out.write([]byte{'\n'})
		}
	}
	s.open = false
	s.line++
}

// finish ends the text.
func (s *lineSelector) finish() { s.flush() }

// headCollector keeps the first keep characters written to it (all when
// keep <= 0) and counts every character. Writes never split a
// character.
type headCollector struct {
	keep  int
	head  []byte
	kept  int // characters in head
	total int
	full  bool
}

func (c *headCollector) write(b []byte) {
	n := countChars(b)
	c.total += n
	if c.full {
		return
	}
	if c.keep <= 0 || c.kept+n <= c.keep {
		c.head = append(c.head, b...)
		c.kept += n
		c.full = c.keep > 0 && c.kept == c.keep
		return
	}
	i := 0
	for room := c.keep - c.kept; room > 0; room-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	c.head = append(c.head, b[:i]...)
	c.kept, c.full = c.keep, true
}

// countChars returns the number of characters of p, valid UTF-8: its
// bytes less its continuation bytes (10xxxxxx), counted eight at a time.
func countChars(p []byte) int {
	const hi = 0x8080808080808080
	cont := 0
	i := 0
	for ; i+8 <= len(p); i += 8 {
		w := binary.LittleEndian.Uint64(p[i:])
		// Bit 7 of a byte set, and bit 6 (shifted into bit 7) clear.
		cont += bits.OnesCount64(w & hi &^ (w << 1))
	}
	for ; i < len(p); i++ {
		if p[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return len(p) - cont
}
