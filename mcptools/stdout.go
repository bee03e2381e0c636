package mcptools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdoutLine bounds one line a stdio server writes on stdout, the SDK's
// own bound of one message (mcp.DefaultMaxLineLength, 16 MiB). A line that
// is not a JSON-RPC message is skipped whatever its length, and never held
// in memory beyond its first [skippedPrefix] bytes; a line that starts like
// a message ('{' or '[') is held whole, and one longer than this ends the
// session with an error.
const maxStdoutLine = mcp.DefaultMaxLineLength

// skippedPrefix bounds how much of a skipped stdout line is logged.
const skippedPrefix = 200

// stdoutReadBuffer is the read buffer of a stdio server's stdout, the most
// of a line read at once.
const stdoutReadBuffer = 64 << 10

// errStdoutLineTooLong ends a session whose server wrote a message line
// longer than its bound.
var errStdoutLineTooLong = errors.New("a line on stdout is longer than the limit")

// stdoutFilter passes on the lines of a stdio server's stdout that are
// JSON-RPC messages (a line starting with '{' or '[' that has a "jsonrpc"
// member; see isMessageLine) and drops every other line (a banner, a log line, a JSON log
// record), as the TypeScript and Python MCP SDKs do; the Go SDK's decoder
// would otherwise end the session at the first such line. Blank lines are
// dropped silently, the others reported to skip.
type stdoutFilter struct {
	r      *bufio.Reader
	max    int
	report stdoutReport

	out  []byte // what is left of the current message line for Read
	line []byte // the line being read (a message) or its prefix (skipped)
	err  error  // the error that ended the stream, returned once out is empty
}

// stdoutReport receives what a stdoutFilter drops.
type stdoutReport struct {
	// skipped is called for each dropped line with its first bytes (at
	// most skippedPrefix) and its length.
	skipped func(prefix []byte, size int)
	// tooLong is called when a message line exceeds the bound, which ends
	// the stream.
	tooLong func(max int)
}

func newStdoutFilter(r io.Reader, max int, report stdoutReport) *stdoutFilter {
	return &stdoutFilter{r: bufio.NewReaderSize(r, stdoutReadBuffer), max: max, report: report}
}

// Read implements io.Reader for the SDK's decoder.
func (f *stdoutFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.out, f.err = f.next()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// next reads one line and returns it when it is a message (nil when it was
// dropped) with the error that ended the stream, if any.
func (f *stdoutFilter) next() ([]byte, error) {
	f.line = f.line[:0]
	var first byte // first non-blank byte of the line; 0 while there is none
	size := 0
	for {
		chunk, err := f.r.ReadSlice('\n')
		size += len(chunk)
		if first == 0 {
			if t := bytes.TrimLeft(chunk, " \t\r\n"); len(t) > 0 {
				first = t[0]
			}
		}
		switch {
		case first == 0 || first == '{' || first == '[':
			if len(f.line)+len(chunk) > f.max {
				f.report.tooLong(f.max)
				return nil, fmt.Errorf("%w (%d bytes)", errStdoutLineTooLong, f.max)
			}
			f.line = append(f.line, chunk...)
		case len(f.line) < skippedPrefix:
			f.line = append(f.line, chunk[:min(len(chunk), skippedPrefix-len(f.line))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		switch {
		case first == 0:
		case (first == '{' || first == '[') && isMessageLine(f.line):
			return f.line, err
		default:
			f.report.skipped(f.line[:min(len(f.line), skippedPrefix)], size)
		}
		return nil, err
	}
}

// rpcMember is the member every JSON-RPC message has, with its quotes: an
// escaped occurrence inside a JSON string (\"jsonrpc\") does not match.
var rpcMember = []byte(`"jsonrpc"`)

// isMessageLine reports whether line, which starts with '{' or '[', is
// taken for a JSON-RPC message (or a batch): it has a "jsonrpc" member.
// The test is a substring search, not a parse, so that a large message does
// not cost a second decoding (the SDK decodes and validates it, and a
// malformed message ends the session as it always did); a JSON log record
// or a bracketed log line has no such member.
func isMessageLine(line []byte) bool { return bytes.Contains(line, rpcMember) }

// stdoutReport returns the report of s's stdout filters: the first
// dropped line of a server is a warning with its beginning, later ones are
// debug output (a chatty server would otherwise flood the log); a message
// line over the bound is a warning.
func (s *server) stdoutReport() stdoutReport {
	return stdoutReport{skipped: s.skippedLine, tooLong: func(max int) {
		s.m.log.Warn(fmt.Sprintf("MCP server '%s' wrote a message of more than %d bytes on stdout; closing its session", s.name, max))
	}}
}

// skippedLine logs one dropped stdout line of s.
func (s *server) skippedLine(prefix []byte, size int) {
	line := strings.ToValidUTF8(strings.TrimRight(string(prefix), "\r\n"), "?")
	if size > len(prefix) {
		line += "..."
	}
	if s.noisy.CompareAndSwap(false, true) {
		s.m.log.Warn(fmt.Sprintf("MCP server '%s' wrote a line on stdout that is not a JSON-RPC message; skipping it "+
			"(stdout is for MCP messages only; later such lines are logged at debug level)", s.name),
			"line", line, "bytes", size)
		return
	}
	s.m.log.Debug(fmt.Sprintf("MCP server '%s' wrote a line on stdout that is not a JSON-RPC message; skipping it", s.name),
		"line", line, "bytes", size)
}
