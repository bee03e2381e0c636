package deferred

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/antlerhq/antler/tool"
)

// referenceHash is catalogHash as first written: the tools sorted by
// name with cmp.Compare, each field length-prefixed and hashed.
func referenceHash(tools []*tool.Tool) string {
	sorted := slices.Clone(tools)
	slices.SortFunc(sorted, func(a, b *tool.Tool) int { return cmp.Compare(a.Name, b.Name) })
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	for _, t := range sorted {
		field([]byte(t.Name))
		field([]byte(t.Description))
		field(parametersOf(t))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestCatalogHashStable pins the hash of a small catalogue: it scopes
// persisted promotions, so it must not change with the implementation.
func TestCatalogHashStable(t *testing.T) {
	tools := []*tool.Tool{
		{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "list_dir", Description: "List a directory."},
		{Name: "bing_search", Description: "使用必应搜索", InputSchema: json.RawMessage(` null `)},
	}
	const want = "97f71e502e82940c" // computed by the implementation of fd28eed
	if got := catalogHash(tools); got != want {
		t.Errorf("catalogHash = %s, want %s", got, want)
	}
}

// TestCatalogHashOrder checks the hash against referenceHash on names
// that share long prefixes, are prefixes of each other, are shorter than
// eight bytes, hold zero bytes or are not ASCII, in random order.
func TestCatalogHashOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	stems := []string{"", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi", "github_", "github_list_", "é", "\x00", "a\x00", "读取", "Z", "~"}
	for round := range 50 {
		seen := map[string]bool{}
		var tools []*tool.Tool
		for range 1 + r.IntN(200) {
			name := stems[r.IntN(len(stems))] + stems[r.IntN(len(stems))] + fmt.Sprint(r.IntN(30))
			if seen[name] {
				continue
			}
			seen[name] = true
			tools = append(tools, &tool.Tool{Name: name, Description: fmt.Sprint(r.IntN(5)), InputSchema: json.RawMessage(`{"type":"object"}`)})
		}
		if got, want := catalogHash(tools), referenceHash(tools); got != want {
			t.Fatalf("round %d: catalogHash = %s, want %s", round, got, want)
		}
	}
}
