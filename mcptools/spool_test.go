package mcptools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rewriteFrame passes frame through a frameRewriter in chunks of size
// chunk (at least 1) and returns what it wrote.
func rewriteFrame(t testing.TB, sp *spool, frame []byte, chunk int) []byte {
	t.Helper()
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	rw := newFrameRewriter(sp, bw)
	for p := frame; len(p) > 0; {
		n := min(chunk, len(p))
		if _, err := rw.Write(p[:n]); err != nil {
			t.Fatalf("Write: %v", err)
		}
		p = p[n:]
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// decodeResult decodes a JSON-RPC answer's result as the SDK does.
func decodeResult(t testing.TB, frame []byte) *mcp.CallToolResult {
	t.Helper()
	var msg struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(frame, &msg); err != nil {
		t.Fatalf("decode %.200q: %v", frame, err)
	}
	return &msg.Result
}

func texts(r *mcp.CallToolResult) []string {
	var out []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out = append(out, c.Text)
		case *mcp.EmbeddedResource:
			out = append(out, c.Resource.Text)
		}
	}
	return out
}

func testSpool(t testing.TB, minString int) *spool {
	sp := newSpool(t.TempDir(), slog.New(slog.DiscardHandler))
	sp.minString = minString
	t.Cleanup(func() { _ = sp.close() })
	return sp
}

// TestFrameRewriter_spoolsLongTextsAndTakesThemBack: the long texts of a
// result (content text and an embedded resource's text) reach the decoder
// as markers, short ones and other strings as they came, and takeResult
// gives back exactly what encoding/json decodes from the original frame,
// whatever the chunking of the stream.
func TestFrameRewriter_spoolsLongTextsAndTakesThemBack(t *testing.T) {
	long := strings.Repeat("abc\\n\\\"é\\u00e9\\ud83d\\ude00 ", 40) // escapes, UTF-8, a surrogate pair
	frame := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[` +
		`{"type":"text","text":"` + long + `"},` +
		`{"type":"text","text":"short"},` +
		`{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"` + long + `"}}` +
		`],"isError":false,"meta":{"text":"` + long + `"}}}`)
	want := texts(decodeResult(t, frame))
	for _, chunk := range []int{1, 3, 7, 64, len(frame)} {
		sp := testSpool(t, 100)
		sp.begin()
		out := rewriteFrame(t, sp, frame, chunk)
		got := decodeResult(t, out)
		seen := texts(got)
		if !strings.HasPrefix(seen[0], spoolMarkerPrefix) || seen[1] != "short" || !strings.HasPrefix(seen[2], spoolMarkerPrefix) {
			t.Errorf("chunk %d: the decoder saw %.80q, want markers for the long texts only", chunk, seen)
		}
		if !bytes.Contains(out, []byte(`"meta":{"text":"`+long)) {
			t.Errorf("chunk %d: a text outside result.content was rewritten", chunk)
		}
		if err := sp.takeResult(got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, texts(got)); diff != "" {
			t.Errorf("chunk %d: texts after take (-want +got):\n%s", chunk, diff)
		}
		sp.end()
		if entries, _ := os.ReadDir(sp.dir); len(entries) != 0 {
			t.Errorf("chunk %d: %d spool files left after the texts were taken", chunk, len(entries))
		}
	}
}

// TestSpool_bound: a text that outgrows the spool's bound is dropped past
// it (the message still streams on, so the connection stays up) and the
// call fails when it takes the text; when the spool is already full, a
// text reaches the decoder as it came. Nothing stays held either way.
func TestSpool_bound(t *testing.T) {
	text := strings.Repeat("x", 200)
	frame := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
	for _, tc := range []struct {
		name    string
		used    int64
		wantErr string
		want    []string
	}{
		{name: "outgrows the bound", wantErr: "larger than the room left in the spool"},
		{name: "already full", used: 50, want: []string{text}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := testSpool(t, 10)
			sp.maxTotal = 50
			sp.used = tc.used
			sp.begin()
			defer sp.end()
			got := decodeResult(t, rewriteFrame(t, sp, frame, 16))
			err := sp.takeResult(got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("takeResult: %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if diff := cmp.Diff(tc.want, texts(got)); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			sp.mu.Lock()
			used := sp.used
			sp.mu.Unlock()
			if used != tc.used {
				t.Errorf("spool holds %d bytes after the call, want %d", used, tc.used)
			}
		})
	}
}

// TestSpool_endRemovesUntakenFiles: the file of a marker no call took (a
// cancelled call) is removed once no call is in flight.
func TestSpool_endRemovesUntakenFiles(t *testing.T) {
	sp := testSpool(t, 10)
	frame := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", 100) + `"}]}}`)
	sp.begin()
	sp.begin()
	rewriteFrame(t, sp, frame, 8)
	sp.end()
	if entries, _ := os.ReadDir(sp.dir); len(entries) != 1 {
		t.Errorf("with a call still in flight: %d files, want 1", len(entries))
	}
	sp.end()
	if entries, _ := os.ReadDir(sp.dir); len(entries) != 0 {
		t.Errorf("with no call in flight: %d files, want 0", len(entries))
	}
}

// FuzzFrameRewriter: for any JSON string as a result's text, the text
// after the round trip through the spool is the one encoding/json decodes
// from the original frame.
func FuzzFrameRewriter(f *testing.F) {
	for _, s := range []string{`plain text here`, `\u00e9\ud83d\ude00\n\t\"\\`, `\ud800 lone`, `\udc00\ud800\ud800\udc00`, `a\/b`} {
		f.Add(s, uint8(1))
		f.Add(s, uint8(5))
	}
	f.Fuzz(func(t *testing.T, raw string, chunk uint8) {
		frame := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + raw + `"}]}}`)
		var orig struct {
			Result mcp.CallToolResult `json:"result"`
		}
		if json.Unmarshal(frame, &orig) != nil || len(orig.Result.Content) != 1 {
			t.Skip("not a valid frame")
		}
		want := texts(&orig.Result)
		sp := testSpool(t, 4)
		sp.begin()
		defer sp.end()
		got := decodeResult(t, rewriteFrame(t, sp, frame, int(chunk)+1))
		if err := sp.takeResult(got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, texts(got)); diff != "" {
			t.Errorf("text of %q (-want +got):\n%s", raw, diff)
		}
	})
}
