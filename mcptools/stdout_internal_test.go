package mcptools

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The line rules of a stdio server's stdout: JSON-RPC messages (objects
// with "jsonrpc", batches of them) pass on byte for byte, everything else
// is dropped and reported with a bounded prefix, blank lines silently; a
// dropped line of any length is never held whole, and a message line over
// the bound ends the stream.
func TestStdoutFilter_passesMessagesAndDropsOtherLines(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"result":{}}`
	late := `{"result":{},"id":2,"jsonrpc":"2.0"}` // the TypeScript SDK's member order
	batch := `[{"jsonrpc":"2.0","method":"a"}, {"jsonrpc":"2.0","method":"b"}]`
	long := strings.Repeat("y", 10_000)
	tests := []struct {
		name    string
		in      string
		want    string
		skipped []string // reported prefixes
		err     error    // after the output, instead of io.EOF
	}{
		{name: "messages only", in: msg + "\n" + late + "\r\n", want: msg + "\n" + late + "\r\n"},
		{name: "banner before and between", in: "server v1 ready\n" + msg + "\n[dotenv@17] injecting env\n" + msg + "\n",
			want: msg + "\n" + msg + "\n", skipped: []string{"server v1 ready\n", "[dotenv@17] injecting env\n"}},
		{name: "JSON that is no JSON-RPC message", in: `{"level":30,"msg":"hi"}` + "\n42\n[1,2]\n[]\n" + msg + "\n",
			want: msg + "\n", skipped: []string{`{"level":30,"msg":"hi"}` + "\n", "42\n", "[1,2]\n", "[]\n"}},
		{name: "a quoted message in a log record is no message", in: `{"msg":"sent {\"jsonrpc\":\"2.0\"}"}` + "\n" + msg + "\n",
			want: msg + "\n", skipped: []string{`{"msg":"sent {\"jsonrpc\":\"2.0\"}"}` + "\n"}},
		{name: "a bracketed log line naming jsonrpc is no message", in: "[debug] jsonrpc ready\n" + msg + "\n",
			want: msg + "\n", skipped: []string{"[debug] jsonrpc ready\n"}},
		{name: "a malformed message is left to the SDK", in: `{"jsonrpc":"2.0",` + "\n", want: `{"jsonrpc":"2.0",` + "\n"},
		{name: "batch", in: batch + "\n", want: batch + "\n"},
		{name: "blank lines are dropped silently", in: "\n  \r\n" + msg + "\n\n", want: msg + "\n"},
		{name: "leading blanks are kept with the message", in: "  " + msg + "\n", want: "  " + msg + "\n"},
		{name: "last line without newline", in: "hello\n" + msg, want: msg, skipped: []string{"hello\n"}},
		{name: "long plain line is dropped with a bounded prefix", in: long + "\n" + msg + "\n",
			want: msg + "\n", skipped: []string{long[:skippedPrefix]}},
		{name: "message line over the bound ends the stream", in: msg + "\n" + `{"jsonrpc":"2.0","x":"` + long + `"}` + "\n",
			want: msg + "\n", err: errStdoutLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var skipped []string
			tooLong := 0
			f := newStdoutFilter(strings.NewReader(tt.in), 4096, stdoutReport{
				skipped: func(prefix []byte, size int) { skipped = append(skipped, string(prefix)) },
				tooLong: func(int) { tooLong++ },
			})
			// Small reads, as a decoder may do them.
			var got strings.Builder
			buf := make([]byte, 7)
			var err error
			for {
				var n int
				n, err = f.Read(buf)
				got.Write(buf[:n])
				if err != nil {
					break
				}
			}
			if got.String() != tt.want {
				t.Errorf("passed on %q, want %q", got.String(), tt.want)
			}
			if diff := cmp.Diff(tt.skipped, skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			want := tt.err
			if want == nil {
				want = io.EOF
			}
			if !errors.Is(err, want) {
				t.Errorf("ended with %v, want %v", err, want)
			}
			if (tt.err != nil) != (tooLong == 1) {
				t.Errorf("tooLong reported %d times", tooLong)
			}
		})
	}
}

// A dropped line is read in pieces of the read buffer and never held:
// the filter's line buffer stays at the prefix however long the line.
func TestStdoutFilter_longPlainLineIsNotBuffered(t *testing.T) {
	in := strings.Repeat("z", 8*stdoutReadBuffer) + "\n"
	sizes := []int{}
	f := newStdoutFilter(strings.NewReader(in), 1024, stdoutReport{
		skipped: func(prefix []byte, size int) { sizes = append(sizes, len(prefix), size) },
		tooLong: func(int) { t.Error("a plain line is never too long") },
	})
	if _, err := io.ReadAll(f); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{skippedPrefix, len(in)}, sizes); diff != "" {
		t.Errorf("prefix and size (-want +got):\n%s", diff)
	}
	if c := cap(f.line); c > stdoutReadBuffer {
		t.Errorf("line buffer grew to %d bytes for a dropped line", c)
	}
}
