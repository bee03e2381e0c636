package mcptools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// frameRewriter copies one JSON-RPC message as it streams by, except that
// a long text of a tool result (result.content[i].text, or
// result.content[i].resource.text) is written, unescaped, to a spool file
// and replaced by the file's marker. It scans the message byte by byte and
// holds at most spool.minString bytes of a text before it decides; other
// values pass through unchanged. It does not validate the message: the SDK
// decodes what it writes, and an invalid message fails there as before.
type frameRewriter struct {
	sp  *spool
	out *bufio.Writer

	stack     []rwFrame
	expectKey bool // in an object, the next string is a key

	inString bool
	isKey    bool
	escaped  bool   // the previous byte of a passed string was a backslash
	key      []byte // the key being read (at most maxRewriteKey bytes kept)
	keyLong  bool

	target bool          // the string being read may be spooled
	held   []byte        // raw bytes of a target string, before it is long enough
	file   *spoolFile    // the target string's file, once it is long enough
	dec    stringDecoder // unescapes a spooled string
	err    error         // a spool write error: the frame is failed
}

// rwFrame is one open container: an object with the key of its current
// member, or an array.
type rwFrame struct {
	obj bool
	key string
}

// maxRewriteKey bounds the key bytes remembered; longer keys never match.
const maxRewriteKey = 32

func newFrameRewriter(sp *spool, out *bufio.Writer) *frameRewriter {
	return &frameRewriter{sp: sp, out: out}
}

// reset starts a new message, discarding any state of an unfinished one.
func (w *frameRewriter) reset() {
	w.abort()
	*w = frameRewriter{sp: w.sp, out: w.out, stack: w.stack[:0], key: w.key[:0], held: w.held[:0]}
}

// abort removes a spool file being written.
func (w *frameRewriter) abort() {
	if w.file != nil {
		w.file.abort()
		w.file = nil
	}
}

// isTarget reports whether a string value at the current position is a
// text the spool takes: result.content[i].text or
// result.content[i].resource.text.
func (w *frameRewriter) isTarget() bool {
	s := w.stack
	match := func(i int, obj bool, key string) bool {
		return s[i].obj == obj && (!obj || s[i].key == key)
	}
	switch len(s) {
	case 4:
		return match(0, true, "result") && match(1, true, "content") && match(2, false, "") && match(3, true, "text")
	case 5:
		return match(0, true, "result") && match(1, true, "content") && match(2, false, "") &&
			match(3, true, "resource") && match(4, true, "text")
	}
	return false
}

// Write scans p, the next bytes of the message.
func (w *frameRewriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if w.err != nil {
			return 0, w.err
		}
		if w.inString {
			p = w.stringBytes(p)
			continue
		}
		c := p[0]
		p = p[1:]
		switch c {
		case '{':
			w.stack = append(w.stack, rwFrame{obj: true})
			w.expectKey = true
		case '[':
			w.stack = append(w.stack, rwFrame{})
			w.expectKey = false
		case '}', ']':
			if len(w.stack) > 0 {
				w.stack = w.stack[:len(w.stack)-1]
			}
			w.expectKey = false
		case ',':
			w.expectKey = len(w.stack) > 0 && w.stack[len(w.stack)-1].obj
		case '"':
			w.inString, w.escaped = true, false
			w.isKey = w.expectKey
			if w.isKey {
				w.key, w.keyLong = w.key[:0], false
			} else if w.target = w.isTarget(); w.target {
				w.held = append(w.held[:0], '"')
				continue
			}
		case ':':
			if len(w.stack) > 0 && w.stack[len(w.stack)-1].obj {
				w.stack[len(w.stack)-1].key = string(w.key)
				if w.keyLong {
					w.stack[len(w.stack)-1].key = ""
				}
			}
			w.expectKey = false
		}
		if err := w.out.WriteByte(c); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// stringBytes consumes the bytes of the string being read from p and
// returns the rest.
func (w *frameRewriter) stringBytes(p []byte) []byte {
	if w.target {
		return w.targetBytes(p)
	}
	// Up to and including the closing quote, or all of p.
	end, closed := w.stringEnd(p)
	if closed {
		end++
		w.inString = false
	}
	if w.isKey && !w.keyLong {
		k := p[:end]
		if !w.inString {
			k = k[:len(k)-1]
		}
		if len(w.key)+len(k) > maxRewriteKey {
			w.keyLong = true
		} else {
			w.key = append(w.key, k...)
		}
	}
	if _, err := w.out.Write(p[:end]); err != nil {
		w.err = err
	}
	return p[end:]
}

// stringEnd returns the index in p of the quote that closes the string
// being read (closed) or len(p), keeping track of a backslash that ends
// p in w.escaped.
func (w *frameRewriter) stringEnd(p []byte) (end int, closed bool) {
	for i := 0; i < len(p); i++ {
		if w.escaped {
			w.escaped = false
			continue
		}
		j := bytes.IndexAny(p[i:], `"\`)
		if j < 0 {
			break
		}
		i += j
		if p[i] == '"' {
			return i, true
		}
		w.escaped = true
	}
	return len(p), false
}

// targetBytes consumes bytes of a target string: held until the string
// is long enough, then decoded into its spool file.
func (w *frameRewriter) targetBytes(p []byte) []byte {
	end, closed := w.stringEnd(p)
	chunk := p[:end]
	rest := p[end:]
	if closed {
		rest = p[end+1:]
		w.inString = false
	}
	if w.file == nil {
		w.held = append(w.held, chunk...)
		if len(w.held) >= w.sp.minString {
			w.startFile()
		}
		if w.file == nil {
			if closed {
				w.held = append(w.held, '"')
				_, w.err = w.out.Write(w.held)
				w.held = w.held[:0]
			} else if len(w.held) >= w.sp.minString {
				// The spool refused it: the string passes as it came.
				_, w.err = w.out.Write(w.held)
				w.held, w.target = w.held[:0], false
			}
			return rest
		}
	} else if err := w.dec.write(w.file, chunk); err != nil {
		w.fail(err)
		return rest
	}
	if closed {
		w.finishFile()
	}
	return rest
}

// startFile moves a held string into a new spool file; when the spool
// refuses it, the string passes as it came.
func (w *frameRewriter) startFile() {
	f, err := w.sp.create()
	if err != nil {
		return
	}
	w.file, w.dec = f, stringDecoder{}
	if err := w.dec.write(f, w.held[1:]); err != nil {
		w.fail(err)
	}
	w.held = w.held[:0]
}

// finishFile ends a spooled string and writes its marker in its place.
func (w *frameRewriter) finishFile() {
	if err := w.dec.flush(w.file); err != nil {
		w.fail(err)
		return
	}
	f := w.file
	w.file = nil
	marker, err := f.finish()
	if err != nil {
		w.err = err
		return
	}
	quoted, _ := json.Marshal(marker) // a JSON string, \u0000 and all
	_, w.err = w.out.Write(quoted)
}

// fail ends the frame after a spool write error.
func (w *frameRewriter) fail(err error) {
	w.abort()
	w.err = err
}

// stringDecoder unescapes the contents of a JSON string as they stream by,
// as encoding/json does: \uXXXX escapes become UTF-8, a lone surrogate
// U+FFFD.
type stringDecoder struct {
	esc  []byte // an escape sequence begun in an earlier chunk
	high rune   // a high surrogate waiting for its low half; 0 if none
	buf  []byte
}

func (d *stringDecoder) write(f *spoolFile, p []byte) error {
	d.buf = d.buf[:0]
	for len(p) > 0 {
		if len(d.esc) > 0 {
			need := 2
			if len(d.esc) >= 2 && d.esc[1] == 'u' {
				need = 6
			}
			k := min(need-len(d.esc), len(p))
			d.esc = append(d.esc, p[:k]...)
			p = p[k:]
			if len(d.esc) == 2 && d.esc[1] == 'u' {
				continue
			}
			if len(d.esc) < need {
				break
			}
			d.escape()
			d.esc = d.esc[:0]
			continue
		}
		i := bytes.IndexByte(p, '\\')
		if i < 0 {
			i = len(p)
		}
		if i > 0 {
			d.lone()
			d.buf = append(d.buf, p[:i]...)
		}
		p = p[i:]
		if len(p) > 0 {
			d.esc = append(d.esc, '\\')
			p = p[1:]
		}
		if len(d.buf) >= 64<<10 {
			if _, err := f.Write(d.buf); err != nil {
				return err
			}
			d.buf = d.buf[:0]
		}
	}
	_, err := f.Write(d.buf)
	return err
}

// escape decodes the complete escape sequence in d.esc.
func (d *stringDecoder) escape() {
	if d.esc[1] != 'u' {
		d.lone()
		c := d.esc[1]
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		}
		d.buf = append(d.buf, c)
		return
	}
	v, err := strconv.ParseUint(string(d.esc[2:6]), 16, 32)
	if err != nil {
		d.lone()
		d.buf = utf8.AppendRune(d.buf, utf8.RuneError)
		return
	}
	r := rune(v)
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		d.lone()
		d.high = r
	case utf16.IsSurrogate(r) && d.high != 0:
		d.buf = utf8.AppendRune(d.buf, utf16.DecodeRune(d.high, r))
		d.high = 0
	case utf16.IsSurrogate(r):
		d.buf = utf8.AppendRune(d.buf, utf8.RuneError)
	default:
		d.lone()
		d.buf = utf8.AppendRune(d.buf, r)
	}
}

// lone writes a high surrogate that found no low half as U+FFFD.
func (d *stringDecoder) lone() {
	if d.high != 0 {
		d.buf = utf8.AppendRune(d.buf, utf8.RuneError)
		d.high = 0
	}
}

// flush ends the string.
func (d *stringDecoder) flush(f *spoolFile) error {
	d.buf = d.buf[:0]
	d.lone()
	if len(d.esc) > 0 { // cannot happen in a valid string
		d.buf = utf8.AppendRune(d.buf, utf8.RuneError)
		d.esc = d.esc[:0]
	}
	_, err := f.Write(d.buf)
	return err
}
