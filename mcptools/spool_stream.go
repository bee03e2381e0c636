package mcptools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// spoolReadBuffer is the read buffer of a spooled stream, the most of a
// line or body read at once.
const spoolReadBuffer = 64 << 10

// maxJSONBody bounds a JSON response body as the SDK bounds an SSE event
// (mcp.DefaultMaxEventSize, 16 MiB).
const maxJSONBody = mcp.DefaultMaxEventSize

// sseTooLarge is the line a spooled SSE stream ends with when an event
// exceeds mcp.DefaultMaxEventSize: a line without a colon, which the SDK
// takes for a malformed event and fails the connection, as it does for an
// event over its bound.
const sseTooLarge = "antler-mcp-event-exceeds-16MiB\n"

// errBodyTooLarge ends a JSON response body over maxJSONBody.
var errBodyTooLarge = fmt.Errorf("the MCP server's JSON response exceeds %d bytes", maxJSONBody)

// spoolTransport passes the JSON-RPC messages of an HTTP server's
// responses (SSE events and JSON bodies) through a frameRewriter, so that
// long texts of tool results reach the SDK as spool markers.
type spoolTransport struct {
	base http.RoundTripper
	sp   *spool
}

func (t *spoolTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		return resp, err
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var pump func(*bufio.Reader, *bufio.Writer) error
	switch media {
	case "text/event-stream":
		pump = t.sp.pumpSSE
	case "application/json":
		pump = t.sp.pumpJSON
	default:
		return resp, nil
	}
	resp.Body = t.sp.pipe(resp.Body, pump, false)
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// pipedBody is the reading end of a spooled stream; closing it closes
// the source too, when there is one to close.
type pipedBody struct {
	*io.PipeReader
	src io.Closer // nil: the source is not closed here
}

func (b pipedBody) Close() error {
	_ = b.PipeReader.Close()
	if b.src == nil {
		return nil
	}
	return b.src.Close()
}

// pipe runs pump from src into the returned reader in a goroutine that
// ends when src ends or fails, or when the reader is closed. Without
// drain, src is closed then. With drain (a stdio server's stdout, which
// its command owns), src is never closed here, and after the reader is
// closed the rest of src is read and dropped, so that the server is never
// blocked on a full pipe.
func (s *spool) pipe(src io.ReadCloser, pump func(*bufio.Reader, *bufio.Writer) error, drain bool) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(src, spoolReadBuffer)
		out := bufio.NewWriterSize(pw, spoolReadBuffer)
		err := pump(br, out)
		if err == nil {
			err = out.Flush()
		}
		if errors.Is(err, io.ErrClosedPipe) && drain {
			_, _ = io.Copy(io.Discard, br)
		}
		_ = pw.CloseWithError(err)
		if !drain {
			_ = src.Close()
		}
	}()
	if drain {
		return pipedBody{PipeReader: pr}
	}
	return pipedBody{PipeReader: pr, src: src}
}

// lineChunk reads the next chunk of a line; more is true when the line
// goes on past it. At the end of r, err is nil and chunk empty.
func lineChunk(r *bufio.Reader) (chunk []byte, more bool, err error) {
	chunk, err = r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return chunk, true, nil
	case errors.Is(err, io.EOF):
		return chunk, false, nil
	}
	return chunk, false, err
}

// splitEOL cuts the line ending off the last chunk of a line.
func splitEOL(chunk []byte, more bool) (body, eol []byte) {
	if more {
		return chunk, nil
	}
	n := len(chunk)
	if n > 0 && chunk[n-1] == '\n' {
		n--
		if n > 0 && chunk[n-1] == '\r' {
			n--
		}
	}
	return chunk[:n], chunk[n:]
}

// pumpSSE copies an SSE stream, passing the data of each event through a
// frameRewriter and failing an event over mcp.DefaultMaxEventSize.
func (s *spool) pumpSSE(r *bufio.Reader, out *bufio.Writer) error {
	rw := newFrameRewriter(s, out)
	defer rw.abort()
	eventBytes, atStart, data := 0, true, false
	for {
		chunk, more, err := lineChunk(r)
		if err != nil {
			return err
		}
		if len(chunk) == 0 {
			return nil
		}
		eventBytes += len(chunk)
		if eventBytes > mcp.DefaultMaxEventSize {
			_, _ = out.WriteString("\n" + sseTooLarge)
			return out.Flush()
		}
		if atStart {
			data = false
			switch {
			case len(bytes.TrimRight(chunk, "\r\n")) == 0 && !more:
				rw.reset()
				eventBytes = 0
			case bytes.HasPrefix(chunk, []byte("data:")):
				data = true
				if _, err := out.WriteString("data:"); err != nil {
					return err
				}
				chunk = chunk[len("data:"):]
			}
		}
		if err := s.pumpChunk(rw, out, chunk, more, data); err != nil {
			return err
		}
		atStart = !more
		if !more && r.Buffered() == 0 {
			if err := out.Flush(); err != nil { // an event is due now
				return err
			}
		}
	}
}

// pumpChunk writes one chunk of a line: through rw when rewrite is set
// (with its line ending written as it came), else as it came.
func (s *spool) pumpChunk(rw *frameRewriter, out *bufio.Writer, chunk []byte, more, rewrite bool) error {
	if !rewrite {
		_, err := out.Write(chunk)
		return err
	}
	body, eol := splitEOL(chunk, more)
	if _, err := rw.Write(body); err != nil {
		return err
	}
	_, err := out.Write(eol)
	return err
}

// pumpJSON copies a JSON response body through a frameRewriter, failing
// one over maxJSONBody.
func (s *spool) pumpJSON(r *bufio.Reader, out *bufio.Writer) error {
	rw := newFrameRewriter(s, out)
	defer rw.abort()
	total := 0
	buf := make([]byte, spoolReadBuffer)
	for {
		n, err := r.Read(buf)
		total += n
		if total > maxJSONBody {
			return errBodyTooLarge
		}
		if n > 0 {
			if _, werr := rw.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// stdoutPump returns the pump of a stdio server's stdout: each line that
// starts like a message ('{' or '[') passes through a frameRewriter and is
// bounded by max (over it, report.tooLong is called and the stream ends
// with errStdoutLineTooLong); other lines pass as they came, for the
// stdoutFilter to drop.
func (s *spool) stdoutPump(max int, report stdoutReport) func(*bufio.Reader, *bufio.Writer) error {
	return func(r *bufio.Reader, out *bufio.Writer) error {
		rw := newFrameRewriter(s, out)
		defer rw.abort()
		size, atStart, message := 0, true, false
		for {
			chunk, more, err := lineChunk(r)
			if err != nil {
				return err
			}
			if len(chunk) == 0 {
				return nil
			}
			if atStart {
				rw.reset()
				t := bytes.TrimLeft(chunk, " \t\r\n")
				message, size = len(t) > 0 && (t[0] == '{' || t[0] == '['), 0
			}
			size += len(chunk)
			if message && size > max {
				report.tooLong(max)
				return fmt.Errorf("%w (%d bytes)", errStdoutLineTooLong, max)
			}
			if err := s.pumpChunk(rw, out, chunk, more, message); err != nil {
				return err
			}
			atStart = !more
			if !more && r.Buffered() == 0 {
				if err := out.Flush(); err != nil {
					return err
				}
			}
		}
	}
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }
