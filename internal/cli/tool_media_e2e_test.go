package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// mediaImage is image i of the shots tool: a PNG signature and 4 KiB
// that differ per image, so that its base64 is recognisable anywhere.
func mediaImage(i int) []byte {
	return append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte(fmt.Sprintf("shot-%d|", i)), 600)...)
}

var mediaAudio = append([]byte("RIFF\x00\x00\x00\x00WAVE"), bytes.Repeat([]byte("audio|"), 700)...)

// startMediaMCP serves, over streamable HTTP on 127.0.0.1, one tool,
// "take", whose result is a text, three PNG images and a WAV blob.
func startMediaMCP(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "shots", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "take", Description: "Take three screenshots and a recording."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "three shots"},
				&mcp.ImageContent{MIMEType: "image/png", Data: mediaImage(1)},
				&mcp.ImageContent{MIMEType: "image/png", Data: mediaImage(2)},
				&mcp.ImageContent{MIMEType: "image/png", Data: mediaImage(3)},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: mediaAudio}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "flood", Description: "Take too many screenshots."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			var content []mcp.Content
			for i := 1; i <= 7; i++ {
				data := mediaImage(10 + i)
				if i == 5 {
					data = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 5<<20)...)
				}
				content = append(content, &mcp.ImageContent{MIMEType: "image/png", Data: data})
			}
			return &mcp.CallToolResult{Content: content}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestE2EToolMedia_imagesOverTheBoundsAreRefused: an MCP result with
// seven images, the fifth over 5 MiB: the first four are saved and shown
// to a vision model; the fifth (too large) and the sixth and seventh (over
// the count of 5) are refused with a line saying why.
func TestE2EToolMedia_imagesOverTheBoundsAreRefused(t *testing.T) {
	mcpURL := startMediaMCP(t)
	var toolMsg model.Message
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "shots_flood", `{}`)}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			for _, m := range req.Messages {
				if m.Role == model.RoleTool {
					toolMsg = m
				}
			}
			return modeltest.Turn{Text: "too many"}
		}})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", fmt.Sprintf(`models:
  - name: test
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: %s
    supports_vision: true
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
`, srv.URL))
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"shots": map[string]any{"type": "http", "url": mcpURL}}})
	writeFile(t, dir, "extensions_config.json", string(ext))
	if code, _, errOut := antlerProcess(t, "--config", cfg, "--home", filepath.Join(dir, "home"), "run", "--json", "--thread", "t1", "flood"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(toolMsg.Content, "\n")
	if len(lines) != 7 {
		t.Fatalf("tool message:\n%s", toolMsg.Content)
	}
	for i, l := range lines[:4] {
		if !strings.HasPrefix(l, fmt.Sprintf("[image %d of 7 (image/png, 4808 bytes) saved to /mnt/user-data/outputs/.tool-results/shots_flood-", i+1)) {
			t.Errorf("line %d = %q", i+1, l)
		}
	}
	for i, want := range []string{
		"[image 5 of 7 (image/png, 5242888 bytes) refused: an image may be at most 5242880 bytes]",
		"[image 6 of 7 (image/png, 4808 bytes) refused: one tool result may carry at most 5 images]",
		"[image 7 of 7 (image/png, 4808 bytes) refused: one tool result may carry at most 5 images]",
	} {
		if lines[4+i] != want {
			t.Errorf("line %d = %q, want %q", 5+i, lines[4+i], want)
		}
	}
	next := string(srv.Bodies()[1])
	for i := 1; i <= 7; i++ {
		if i == 5 {
			continue
		}
		if got, want := strings.Contains(next, base64.StdEncoding.EncodeToString(mediaImage(10 + i))[:200]), i <= 4; got != want {
			t.Errorf("image %d in the next request: %v, want %v", i, got, want)
		}
	}
}

// TestE2EToolMedia_imagesReachVisionModelsFromFiles: an MCP tool returns
// three images and an audio blob. The files exist under the thread's
// outputs; no base64 of them is in the store or the event stream; the
// next request of a vision model holds the three images, that of a model
// without vision a note and none.
func TestE2EToolMedia_imagesReachVisionModelsFromFiles(t *testing.T) {
	mcpURL := startMediaMCP(t)
	for _, vision := range []bool{true, false} {
		t.Run(fmt.Sprintf("vision=%v", vision), func(t *testing.T) {
			srv := modeltest.NewServer(t,
				modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "shots_take", `{}`)}},
				modeltest.Turn{Text: "three shots seen"})
			dir := t.TempDir()
			cfg := writeFile(t, dir, "config.yaml", fmt.Sprintf(`models:
  - name: test
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: %s
    supports_vision: %v
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
`, srv.URL, vision))
			ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"shots": map[string]any{"type": "http", "url": mcpURL}}})
			writeFile(t, dir, "extensions_config.json", string(ext))
			home := filepath.Join(dir, "home")
			code, out, errOut := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "take shots")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			bodies := srv.Bodies()
			if len(bodies) != 2 {
				t.Fatalf("%d model requests, want 2", len(bodies))
			}
			next := string(bodies[1])
			encoded := func(data []byte) string { return base64.StdEncoding.EncodeToString(data)[:200] }

			files, _ := filepath.Glob(filepath.Join(home, "users", "default", "threads", "t1", "user-data", "outputs", ".tool-results", "shots_take-*"))
			var pngs, wavs int
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				switch filepath.Ext(f) {
				case ".png":
					pngs++
				case ".wav":
					wavs++
					if !bytes.Equal(data, mediaAudio) {
						t.Error("the saved audio is not the tool's bytes")
					}
				}
			}
			if pngs != 3 || wavs != 1 {
				t.Errorf("saved %d PNG and %d WAV files, want 3 and 1: %v", pngs, wavs, files)
			}
			stored := storeBytes(t, home)
			if !strings.Contains(stored, "saved to /mnt/user-data/outputs/.tool-results/shots_take-") {
				t.Fatal("the store does not hold the tool message with its file references")
			}
			for i := 1; i <= 3; i++ {
				b64 := encoded(mediaImage(i))
				if strings.Contains(stored, b64) || strings.Contains(out, b64) {
					t.Errorf("image %d is in the store or the event stream as base64", i)
				}
				if got := strings.Contains(next, b64); got != vision {
					t.Errorf("image %d in the next model request: %v, want %v", i, got, vision)
				}
			}
			if strings.Contains(stored, encoded(mediaAudio)) || strings.Contains(next, encoded(mediaAudio)) {
				t.Error("the audio is in the store or a model request as base64")
			}
			note := "This model cannot view images, so they are not shown"
			if got := strings.Contains(next, note); got == vision {
				t.Errorf("note in the next model request: %v, want %v", got, !vision)
			}
		})
	}
}

// storeBytes is the content of the home's SQLite files (database and
// write-ahead log), as one string.
func storeBytes(t *testing.T, home string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, "antler.db*"))
	if len(files) == 0 {
		t.Fatalf("no database under %s", home)
	}
	var b strings.Builder
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestE2EToolMedia_noBase64InTheGatewayStream: through `antler serve`,
// the run's SSE stream (values, messages-tuple, updates) holds the file
// references of the three images and the audio, never their bytes.
func TestE2EToolMedia_noBase64InTheGatewayStream(t *testing.T) {
	mcpURL := startMediaMCP(t)
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "shots_take", `{}`)}},
		modeltest.Turn{Text: "three shots seen"})
	cfg, home := e2eConfig(t, srv.URL)
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"shots": map[string]any{"type": "http", "url": mcpURL}}})
	writeFile(t, filepath.Dir(cfg), "extensions_config.json", string(ext))
	url, _ := startServeProcess(t, cfg, home)
	body := `{"input":{"messages":[{"type":"human","content":"take shots"}]},"stream_mode":["values","messages-tuple","updates"]}`
	resp, err := http.Post(url+"/api/langgraph/threads/t1/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d %v", resp.StatusCode, err)
	}
	if n := strings.Count(string(stream), "saved to /mnt/user-data/outputs/.tool-results/shots_take-"); n < 4 {
		t.Errorf("the stream names %d saved files, want the 4 references at least once", n)
	}
	for i, data := range [][]byte{mediaImage(1), mediaImage(2), mediaImage(3), mediaAudio} {
		if strings.Contains(string(stream), base64.StdEncoding.EncodeToString(data)[:200]) {
			t.Errorf("block %d is in the SSE stream as base64", i+1)
		}
	}
}
