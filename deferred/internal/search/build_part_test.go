package search

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/antlerhq/antler/tool"
)

// splitTestTools returns a catalogue of n generated tools whose texts mix
// camelCase and snake_case identifiers, non-ASCII words, digits, stop
// words, escaped JSON and nested parameters, with servers that first
// appear anywhere in the list.
func splitTestTools(n int) []*tool.Tool {
	words := []string{
		"get", "File", "fileInfo", "HTMLParser", "read_file", "the", "of", "a",
		"café", "naïve_Über", "读取文件", "github", "datagov", "data", "gov",
		"issue", "createIssue", "PullRequest", "list", "x", "v2", "123abc",
		"weather", "forecast", "deepwiki", "wiki", "deep", "search", "Search",
		"query", "URL", "url", "JSONSchema", "émoji😀", "ünïcödé", "stock_price",
	}
	r := rand.New(rand.NewPCG(1, 2))
	text := func(k int) string {
		var b strings.Builder
		for i := range k {
			if i > 0 {
				b.WriteString([]string{" ", " ", ", ", ". ", "\n", "-", "/"}[r.IntN(7)])
			}
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(20) == 0 {
				fmt.Fprintf(&b, "%d", r.IntN(1000))
			}
		}
		return b.String()
	}
	var tools []*tool.Tool
	for i := range n {
		props := map[string]any{}
		for range r.IntN(4) {
			p := map[string]any{"type": "string", "description": text(r.IntN(12)) + ` "quoted" \ é`}
			if r.IntN(3) == 0 {
				p["properties"] = map[string]any{text(1): map[string]any{"description": text(5)}}
			}
			props[text(1+r.IntN(2))] = p
		}
		schema, err := json.Marshal(map[string]any{"type": "object", "properties": props})
		if err != nil {
			panic(err)
		}
		srv := fmt.Sprintf("%s Hub%d", words[r.IntN(len(words))], r.IntN(n/4+1))
		tools = append(tools, &tool.Tool{
			Name:        fmt.Sprintf("%s_%d", text(1+r.IntN(3)), i),
			Description: text(r.IntN(60)),
			InputSchema: schema,
			Meta:        map[string]string{"mcp_server": srv},
		})
	}
	return tools
}

// TestBuildIndexSplit checks that splitting the build between the
// analyser and a second goroutine yields the same index, ids included,
// wherever the catalogue is split.
func TestBuildIndexSplit(t *testing.T) {
	tools := splitTestTools(300)
	want := buildIndexSplit(tools, len(tools), nil)
	opts := cmp.Options{
		cmp.AllowUnexported(Index{}, posting{}, params{}, fieldParam{}, RM3{}),
		cmpopts.IgnoreFields(Index{}, "pool"),
		cmpopts.EquateEmpty(),
	}
	for _, m := range []int{0, 1, 2, 150, 299} {
		t.Run(fmt.Sprint(m), func(t *testing.T) {
			ran := false
			got := buildIndexSplit(tools, m, func() { ran = true })
			if diff := cmp.Diff(want, got, opts); diff != "" {
				t.Errorf("index split at %d (-whole +split):\n%s", m, diff)
			}
			if !ran {
				t.Error("beside did not run")
			}
		})
	}
}

// TestHashRunAt checks that hashing a run in place, with whole-word loads
// around it, gives hashRun of the run itself.
func TestHashRunAt(t *testing.T) {
	s := "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
	for i := range len(s) {
		for j := i + 1; j <= len(s); j++ {
			wp, wh := hashRun(s[i:j])
			if p, h := hashRunAt(s, i, j); p != wp || h != wh {
				t.Errorf("hashRunAt(s, %d, %d) = %x, %x; want %x, %x", i, j, p, h, wp, wh)
			}
			if p, h := hashRunAt([]byte(s), i, j); p != wp || h != wh {
				t.Errorf("hashRunAt([]byte(s), %d, %d) = %x, %x; want %x, %x", i, j, p, h, wp, wh)
			}
		}
	}
}

// TestAlnumMask checks the word-at-a-time letter/digit test against the
// byte table, for every byte value in every position.
func TestAlnumMask(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			var b [8]byte
			for i := range b {
				b[i] = 'a'
			}
			b[pos] = byte(c)
			got := alnumMask(load64(b[:], 0))
			var want uint64
			if c >= utf8.RuneSelf || !asciiAlnum[c] {
				want = 0x80 << (8 * pos)
			}
			if got != want {
				t.Errorf("alnumMask with %#x at %d = %#x, want %#x", c, pos, got, want)
			}
		}
	}
}
