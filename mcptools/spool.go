package mcptools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bounds of the response spool (see docs/design.md, "Large MCP
// results bypass the SDK's decoder").
const (
	// spoolMinString is the length (raw JSON bytes) from which a text of a
	// tool result is written to a spool file instead of reaching the SDK.
	// Shorter strings pass as they came; at most this much of a string is
	// held in memory while it is read.
	spoolMinString = 1 << 20
	// spoolMaxTotal bounds the spool files of one Manager at once; a text
	// that would exceed it reaches the SDK as it came.
	spoolMaxTotal = 64 << 20
	// spoolMarkerPrefix starts the stand-in text the SDK decodes in place
	// of a spooled text.
	spoolMarkerPrefix = "\x00antler-spool:"
)

// errSpoolFull is returned by spool.create when the spool is at its bound.
var errSpoolFull = errors.New("the MCP response spool is full")

// spool keeps the large texts of MCP tool results out of the SDK's
// decoder: the transports stream them to files in a private folder and
// the SDK decodes a short marker instead, which the call path turns back
// into the text (take). Files are removed when taken, when no call is in
// flight any more (a marker whose call was cancelled), and on close.
// The zero value is not usable; see newSpool.
type spool struct {
	base      string // parent of the folder; "" means os.TempDir
	minString int    // spoolMinString, smaller in tests
	maxTotal  int64  // spoolMaxTotal, smaller in tests
	nonce     string // in every marker, so a server cannot forge one
	log       *slog.Logger

	mu       sync.Mutex
	dir      string                // guarded by mu; created with the first file
	used     int64                 // guarded by mu; bytes of open and finished files
	next     uint64                // guarded by mu; file counter
	files    map[string]*spoolFile // guarded by mu; finished files by id
	inflight int                   // guarded by mu; calls between begin and end
	closed   bool                  // guarded by mu
}

func newSpool(base string, log *slog.Logger) *spool {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &spool{base: base, minString: spoolMinString, maxTotal: spoolMaxTotal, nonce: hex.EncodeToString(b),
		log: log, files: map[string]*spoolFile{}}
}

// spoolFile is one text being written to, or finished in, the spool.
type spoolFile struct {
	sp   *spool
	id   string
	path string
	f    *os.File // nil once finished or aborted
	size int64    // bytes written
	// overflow is set when the text outgrew the spool's bound: the rest
	// of it was dropped, and take fails instead of returning a part.
	overflow bool
}

// create opens a new spool file, or fails with errSpoolFull or an I/O
// error (the caller then passes the text on as it came).
func (s *spool) create() (*spoolFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.used >= s.maxTotal {
		return nil, errSpoolFull
	}
	if s.dir == "" {
		base := s.base
		if base == "" {
			base = os.TempDir()
		}
		dir, err := os.MkdirTemp(base, "antler-mcp-spool-")
		if err != nil {
			return nil, err
		}
		s.dir = dir
	}
	s.next++
	id := strconv.FormatUint(s.next, 10)
	path := filepath.Join(s.dir, id+".txt")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	return &spoolFile{sp: s, id: id, path: path, f: f}, nil
}

// Write appends to the file within the spool's bound. Past the bound it
// drops p and marks the file overflowed, so that the message still
// streams on to the SDK (whose connection stays up) and the call fails
// with a clear error when it takes the text.
func (f *spoolFile) Write(p []byte) (int, error) {
	s := f.sp
	if f.overflow {
		return len(p), nil
	}
	s.mu.Lock()
	if s.used+int64(len(p)) > s.maxTotal {
		s.mu.Unlock()
		f.overflow = true
		return len(p), nil
	}
	s.used += int64(len(p))
	s.mu.Unlock()
	n, err := f.f.Write(p)
	f.size += int64(n)
	return n, err
}

// finish closes the file and returns the marker that stands for it.
func (f *spoolFile) finish() (string, error) {
	err := f.f.Close()
	f.f = nil
	if err != nil {
		f.remove()
		return "", err
	}
	s := f.sp
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = os.Remove(f.path)
		return "", errClosed
	}
	s.files[f.id] = f
	return spoolMarkerPrefix + s.nonce + ":" + f.id, nil
}

// abort removes a file that is being written.
func (f *spoolFile) abort() {
	if f.f != nil {
		_ = f.f.Close()
		f.f = nil
	}
	f.remove()
}

// remove deletes the file and gives its bytes back to the spool.
func (f *spoolFile) remove() {
	_ = os.Remove(f.path)
	s := f.sp
	s.mu.Lock()
	s.used -= f.size
	delete(s.files, f.id)
	s.mu.Unlock()
}

// lookup returns the finished file a marker names and forgets it (the
// caller removes it), or nil when text is no marker of this spool.
func (s *spool) lookup(text string) *spoolFile {
	rest, ok := strings.CutPrefix(text, spoolMarkerPrefix)
	if !ok {
		return nil
	}
	nonce, id, ok := strings.Cut(rest, ":")
	if !ok || nonce != s.nonce {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.files[id]
}

// take returns the text a marker stands for and removes its file; a text
// that is no marker is returned as it is. Invalid UTF-8 becomes U+FFFD, as
// the SDK's decoder makes it.
func (s *spool) take(text string) (string, error) {
	f := s.lookup(text)
	if f == nil {
		return text, nil
	}
	defer f.remove()
	if f.overflow {
		return "", fmt.Errorf("the text is larger than the room left in the spool (%d MB for the texts of all calls in flight)", s.maxTotal>>20)
	}
	r, err := os.Open(f.path)
	if err != nil {
		return "", err
	}
	defer r.Close()
	var b strings.Builder
	b.Grow(int(f.size))
	if _, err := io.Copy(&b, r); err != nil {
		return "", err
	}
	out := b.String()
	if !utf8.ValidString(out) {
		out = replaceInvalidUTF8(out)
	}
	return out, nil
}

// replaceInvalidUTF8 turns each byte of s that is not part of valid UTF-8
// into U+FFFD, as encoding/json's decoder does (strings.ToValidUTF8 would
// put one U+FFFD for a whole run of them).
func replaceInvalidUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// takeResult replaces the markers of a tool result with their texts.
func (s *spool) takeResult(r *mcp.CallToolResult) error {
	if r == nil {
		return nil
	}
	var errs []error
	swap := func(p *string) {
		if !strings.HasPrefix(*p, spoolMarkerPrefix) {
			return
		}
		text, err := s.take(*p)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*p = text
	}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			swap(&c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				swap(&c.Resource.Text)
			}
		}
	}
	return errors.Join(errs...)
}

// begin marks a call in flight; end marks it done, and when no call is in
// flight any more, removes the files no call took (the marker of a call
// that was cancelled or timed out, or of a message that was no result).
func (s *spool) begin() {
	s.mu.Lock()
	s.inflight++
	s.mu.Unlock()
}

func (s *spool) end() {
	s.mu.Lock()
	s.inflight--
	var left []*spoolFile
	if s.inflight == 0 {
		for _, f := range s.files {
			left = append(left, f)
		}
	}
	s.mu.Unlock()
	for _, f := range left {
		f.remove()
	}
}

// close removes the spool folder with every file in it; later files are
// refused.
func (s *spool) close() error {
	s.mu.Lock()
	s.closed = true
	dir := s.dir
	s.files = map[string]*spoolFile{}
	s.mu.Unlock()
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the MCP response spool %s: %w", dir, err)
	}
	return nil
}
